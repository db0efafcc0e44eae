#pragma once

// A project understood once: every section read into its typed form, the task looked up, the
// model analysed, and every problem found with its place. Validation, the studio's live
// problems, every CLI command, eval and the data proposal read a ResolvedProject instead of
// parsing the sections again. No LibTorch here.
//
//   auto resolved = resolve::resolveProject(project::loadProject(path), *registries);
//   if (!resolved.problems().empty()) ...          // what every command refuses
//   resolved.train.batchSize;                      // the train section, typed
//   resolve::trainableProblems(resolved, *registries);   // what `train` would refuse
#include <optional>
#include <string>

#include "common/error.h"
#include "data/data_config.h"
#include "experiment/sweep_spec.h"
#include "graph/graph_analysis.h"
#include "project/project.h"
#include "registries/registries_fwd.h"
#include "task/task_registry.h"
#include "train/task_setup.h"
#include "train/train_options.h"

namespace netsmith::resolve {

struct ResolveOptions {
  /// A data path that does not exist is a problem too (the studio's live check; `validate`
  /// checks a design without its data).
  bool pathsMustExist = false;
  /// The model's analysis when the caller has it already (the studio keeps one per edit);
  /// none: analysed here.
  const graph::GraphAnalysis* analysis = nullptr;
  /// The folder relative data paths resolve against when the project was not read from a
  /// file (a proposal, a test's project); "": the file's folder.
  std::string baseDir;
};

struct ResolvedProject {
  project::LoadedProject loaded;
  std::string baseDir;  ///< relative data paths resolve against it
  graph::GraphAnalysis analysis;
  /// The project's task in the program's registry; null when it names none (trainableProblems
  /// and headProblem say so).
  const task::TaskDef* task = nullptr;
  /// The data section as read; none for a model design without data or a data section that
  /// does not read (its problems are in `dataProblems`, with those of the augment section and
  /// paths that do not exist).
  std::optional<data::DataConfig> data;
  /// The train section; its metrics resolved against the task's figures (train.monitor's
  /// default and every "auto" mode) when the task is known and the section has no problems.
  train::TrainOptions train;
  /// The sweep section, when the project has one.
  std::optional<experiment::SweepSpec> sweep;

  Problems structure;     ///< reading the file and the model's analysis
  Problems dataProblems;  ///< the data and augment sections
  Problems trainProblems;
  Problems sweepProblems;
  /// train.monitor, early stopping, the plateau and sweep.objective naming figures the task
  /// does not report (only with a known task and a train section without problems).
  Problems metricProblems;

  const project::Project& project() const { return loaded.project; }
  bool hasDataSection() const;
  /// What every command refuses: the structure and the sections (data, augment, train, sweep).
  Problems problems() const;
  /// The data section's regression targets, as far as the project names them (data.targets;
  /// every column of the manifest when it names none, which only opening the data tells).
  std::vector<std::string> namedTargets() const;
};

/// Reads every section of `loaded` once against the program's registries.
ResolvedProject resolveProject(project::LoadedProject loaded, const Registries& registries,
                               const ResolveOptions& options = {});

/// The task's head rule for the resolved project and what is known of its data.
std::optional<Problem> headProblem(const ResolvedProject& project, const train::TaskFacts& facts,
                                   const Registries& registries);

/// What `train` would refuse before its first batch, on a project whose sections have no
/// problems: an unknown task, a model with nothing to train, and (when the project has a data
/// section) data the task cannot take, splits that open empty, an output that does not fit the
/// task's head rule, and metrics that name figures the task does not report.
Problems trainableProblems(const ResolvedProject& project, const Registries& registries);

/// trainableProblems of `project` resolved against `registries` (relative paths from `baseDir`).
Problems checkTrainable(const project::Project& project, const std::string& baseDir,
                        const Registries& registries);

}  // namespace netsmith::resolve
