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
/// over three steps) within the falling stretch that ends at that minimum and within two
/// decades below it; minLossLr / 10 when nothing falls. So the suggestion always lies in
/// [minLossLr / 100, minLossLr], even when the start of a noisy sweep (MixUp) wiggles.
void suggestLearningRate(LrFindResult& result);

}  // namespace netsmith::train
