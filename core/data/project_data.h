#pragma once

#include <memory>
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
/// data section (a model design) has no data problems.
Problems validateDataSections(const project::Project& project, const std::string& baseDir,
                              const augment::TransformRegistry& transforms);

/// Opens the project's data: sources, splits, normalisation ("auto" computed over the training
/// split, cached in `cacheDir` when given), pipeline. Throws netsmith::Error with every problem.
/// Returns nullptr when `progress` cancels the statistics.
std::unique_ptr<ProjectData> openProjectData(const project::Project& project,
                                             const std::string& baseDir,
                                             const augment::TransformRegistry& transforms,
                                             const std::string& cacheDir,
                                             const ProgressFn& progress = {});

/// Netsmith's per-user cache folder ($XDG_CACHE_HOME/netsmith or ~/.cache/netsmith).
std::string userCacheDir();

}  // namespace netsmith::data
