#pragma once

// The one place a task's setup is filled from a project: run setup, eval and validation all
// make their task through it, so a setting of the train section reaches each of them alike.
// No LibTorch here.
#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph_analysis.h"
#include "task/task_registry.h"
#include "train/train_options.h"

namespace netsmith::train {

/// What a task is made for besides the train section: the data's classes (or their count when
/// only that is known, 0: unknown) and regression targets, and the model's shapes.
struct TaskFacts {
  std::int64_t dataClasses = 0;
  std::vector<std::string> classes;
  std::vector<std::string> targets;
};

/// The setup of the project's task: the train section's loss, label smoothing and class
/// weights, the data's classes and targets, the model's input and output shapes. Run setup adds
/// the training split (for weights from counts), eval the checkpoint's task state.
task::TaskSetup taskSetupFor(const TrainOptions& options, const graph::GraphAnalysis& analysis,
                             const TaskFacts& facts);

}  // namespace netsmith::train
