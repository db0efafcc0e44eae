#pragma once

#include <memory>
#include <optional>
#include <string>

#include "augment/pipeline.h"
#include "augment/transform.h"
#include "data/data_module.h"
#include "data/dataset_stats.h"
#include "data/sample_processor.h"
#include "project/project.h"

namespace netsmith::data {

/// Everything needed to feed a project's model: the opened data, the augmentation pipeline,
/// the resolved normalisation and the per-sample processor built from them.
struct ProjectData {
  DataModule data;
  SampleFormat format;
  augment::Pipeline pipeline;
  Normalization normalization;
  std::unique_ptr<SampleProcessor> processor;  ///< refers to `pipeline`
};

/// The transform context of a project: its model input and (explicit) normalisation.
augment::TransformContext transformContext(const project::Project& project);

/// Checks the data and augment sections without opening any file. A project with an empty
/// data section (a model design) has no data problems. With `pathsMustExist`, a data path
/// (IDX file, image folder, manifest, CIFAR batch) that does not exist is a problem too
/// (`data.train.root: "/x" does not exist`): the studio checks this on every data edit, so
/// Start is off before a press would fail; `validate` checks a design without its data.
/// `config` (when given) receives the data section as read, when it reads without problems of
/// its own (its paths may still be missing).
Problems validateDataSections(const project::Project& project, const std::string& baseDir,
                              const augment::TransformRegistry& transforms,
                              bool pathsMustExist = false,
                              std::optional<DataConfig>* config = nullptr);

/// Opens the project's data as `config` gives it (the data section as resolve::resolveProject
/// read it): sources, splits, normalisation ("auto" computed over the training split, cached in
/// `cacheDir` when given), and the project's augment section as the pipeline. Throws
/// netsmith::Error with every problem. Returns nullptr when `progress` cancels the statistics.
std::unique_ptr<ProjectData> openProjectData(const project::Project& project,
                                             const DataConfig& config,
                                             const augment::TransformRegistry& transforms,
                                             const std::string& cacheDir,
                                             const ProgressFn& progress = {});

/// The same for a project no one resolved (one rewritten on the way: eval's data from
/// elsewhere, the doctor's folds, a test's config): its data and augment sections read here.
std::unique_ptr<ProjectData> openProjectData(const project::Project& project,
                                             const std::string& baseDir,
                                             const augment::TransformRegistry& transforms,
                                             const std::string& cacheDir,
                                             const ProgressFn& progress = {});

/// Replaces the augmentation pipeline (and the processor that refers to it) of opened data with
/// the project's augment section, without reading the data again: the Augment page's preview
/// follows every edit this way. Throws netsmith::Error with the augment section's problems.
void rebuildPipeline(ProjectData& data, const project::Project& project,
                     const augment::TransformRegistry& transforms);

/// Netsmith's per-user cache folder ($XDG_CACHE_HOME/netsmith or ~/.cache/netsmith).
std::string userCacheDir();

}  // namespace netsmith::data
