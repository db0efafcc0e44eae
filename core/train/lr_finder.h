#pragma once

// The LR range test: training steps (through the step runner, as a run takes them) at an
// exponentially growing LR while the smoothed loss is watched; it stops on divergence, then
// puts the weights and optimizer state back as they were.
#include "train/run_setup.h"
#include "train/trainer.h"

namespace netsmith::train {

/// Runs the sweep on `setup`'s model and training data; publishes a BatchEnd event per step.
LrFindResult findLearningRate(RunContext& ctx, RunSetup& setup, const LrFindOptions& options);

/// Suggestions from a finished sweep: the LR of the lowest smoothed loss, and the steepest
/// fall (in log LR) before it. Fills suggestedLr and minLossLr.
void suggestLearningRate(LrFindResult& result);

}  // namespace netsmith::train
