#pragma once

// What `train` would refuse before its first batch, found without training, so that
// `netsmith-cli validate` and the studio say it while the project is edited rather than at
// Start.
#include <cstdint>
#include <optional>
#include <string>

#include "common/error.h"
#include "graph/graph_analysis.h"
#include "project/project.h"
#include "registries/registries_fwd.h"
#include "task/figures.h"
#include "task/task_registry.h"
#include "train/train_options.h"

namespace netsmith::ops {
class OpRegistry;
}

namespace netsmith::train {

/// Whether the project's train section asks for the head to be replaced (train.replace_head):
/// then the output need not fit the classes before training.
bool replacesHead(const Json& train);

/// The project's task's head rule for a model analysed as `analysis` and data of
/// `dataClasses` classes (0: unknown) and regression `targets` (empty: unknown), or a problem
/// naming an unknown task. Nothing when the head fits, or when train.replace_head will make it fit.
std::optional<Problem> headProblem(const project::Project& project,
                                   const graph::GraphAnalysis& analysis, std::int64_t dataClasses,
                                   const task::TaskRegistry& tasks,
                                   const std::vector<std::string>& targets = {});

/// train.monitor, train.early_stopping.metric and train.plateau.metric (when on) against the
/// task's figures: each must be "loss" or a figure `figures` lists, after val_ or train_; a
/// problem names the key, the task and its figures. Under mode "auto" each takes its figure's
/// better way (FigureSpec::higherIsBetter; losses are minimised). Without train.monitor, the
/// monitor is the task's first figure on the validation split.
Problems resolveMetrics(TrainOptions& options, const std::vector<task::FigureSpec>& figures,
                        const std::string& taskName);

/// resolveMetrics on the project's train section and task, for validation (nothing when the
/// task is unknown or the section has problems of its own: those are reported elsewhere).
Problems metricProblems(const project::Project& project, const graph::GraphAnalysis& analysis,
                        std::int64_t dataClasses, const Registries& registries,
                        const std::vector<std::string>& targets = {});

/// The task is known, the model is more than its input, and (when the project has a data
/// section) the data sources open and parse, the splits a run uses are not empty, and the
/// output fits the task's head rule, and the train section's metrics name the task's figures.
/// Assumes the sections themselves are valid (project
/// validation passed).
Problems checkTrainable(const project::Project& project, const std::string& baseDir,
                        const Registries& registries);

}  // namespace netsmith::train
