#pragma once

// The LR range test: training steps (through the step runner, as a run takes them) at an
// exponentially growing LR while the smoothed loss is watched; it stops on divergence, then
// puts the weights and optimizer state back as they were.
#include "train/run_setup.h"
#include "train/trainer.h"

namespace netsmith::train {

/// Runs the sweep on `setup`'s model and training data; publishes a BatchEnd event per step.
LrFindResult findLearningRate(RunContext& ctx, RunSetup& setup, const LrFindOptions& options);

/// Suggestions from a finished sweep. minLossLr: where the smoothed loss is lowest (after the
/// first tenth of the sweep). suggestedLr: the steepest fall of the smoothed loss (in log LR,
/// over a twentieth of the sweep, at least three steps) within the falling stretch that ends at
/// that minimum; minLossLr / 10 when nothing falls. The minimum itself is where training
/// already breaks down (the smoothed loss lags the LR), so it is never suggested; nor is a
/// floor tied to it: with Adam the smoothed loss keeps creeping down for decades past the
/// point that trains best, and the steep part of the fall is what trains well.
void suggestLearningRate(LrFindResult& result);

}  // namespace netsmith::train
