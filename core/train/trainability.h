#pragma once

// What `train` would refuse about the task before its first batch, found without training, so
// that `netsmith-cli validate` and the studio say it while the project is edited rather than at
// Start (resolve/resolved_project.h gathers the rest).
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"
#include "graph/graph_analysis.h"
#include "task/figures.h"
#include "task/task_registry.h"
#include "train/task_setup.h"
#include "train/train_options.h"

namespace netsmith::train {

/// The task `taskName`'s head rule for a model analysed as `analysis`, with the train section
/// `options` and what is known of the data (`facts`: 0 classes and no targets when unknown), or
/// a problem naming an unknown task. Nothing when the head fits, or when train.replace_head will
/// make it fit.
std::optional<Problem> headProblem(const std::string& taskName, const TrainOptions& options,
                                   const graph::GraphAnalysis& analysis, const TaskFacts& facts,
                                   const task::TaskRegistry& tasks);

/// train.monitor, train.early_stopping.metric and train.plateau.metric (when on) against the
/// task's figures: each must be "loss" or a figure `figures` lists, after val_ or train_; a
/// problem names the key, the task and its figures. Under mode "auto" each takes its figure's
/// better way (FigureSpec::higherIsBetter; losses are minimised). Without train.monitor, the
/// monitor is the task's first figure on the validation split.
Problems resolveMetrics(TrainOptions& options, const std::vector<task::FigureSpec>& figures,
                        const std::string& taskName);

}  // namespace netsmith::train
