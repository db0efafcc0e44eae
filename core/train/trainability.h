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
#include "task/task_registry.h"

namespace netsmith::ops {
class OpRegistry;
}

namespace netsmith::train {

/// Whether the project's train section asks for the head to be replaced (train.replace_head):
/// then the output need not fit the classes before training.
bool replacesHead(const Json& train);

/// The project's task's head rule for a model analysed as `analysis` and data of
/// `dataClasses` classes (0: unknown), or a problem naming an unknown task. Nothing when the
/// head fits, or when train.replace_head will make it fit.
std::optional<Problem> headProblem(const project::Project& project,
                                   const graph::GraphAnalysis& analysis, std::int64_t dataClasses,
                                   const task::TaskRegistry& tasks);

/// The task is known, the model is more than its input, and (when the project has a data
/// section) the data sources open and parse, the splits a run uses are not empty, and the
/// output fits the task's head rule. Assumes the sections themselves are valid (project
/// validation passed).
Problems checkTrainable(const project::Project& project, const std::string& baseDir,
                        const ops::OpRegistry& registry,
                        const task::TaskRegistry& tasks = task::TaskRegistry::withBuiltins());

}  // namespace netsmith::train
