// The LR finder's suggestion on made-up sweeps: a noisy start (as MixUp gives) does not pull it
// down to the first LRs, a loss that creeps down for decades after its steep fall (as Adam's
// does) does not pull it up to the minimum, and it always lies below the lowest loss.
#include "train/lr_finder.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace netsmith::train;

namespace {

/// 100 LRs from 1e-7 to 10; a loss that falls between 1e-4 and 1e-2, is lowest near 3e-2 and
/// then climbs; `startNoise` adds a sharp wiggle over the first steps.
LrFindResult sweep(double startNoise) {
  LrFindResult r;
  for (int i = 0; i < 100; ++i) {
    const double lr = 1e-7 * std::pow(1e8, i / 99.0);
    const double x = std::log10(lr);
    double loss =
        2.3 - 1.5 / (1 + std::exp(-3 * (x + 3))) + 0.5 * std::pow(std::max(0.0, x + 1.5), 2);
    if (i < 8) loss += startNoise * ((i % 2) ? 1 : -1);
    r.lrs.push_back(lr);
    r.losses.push_back(loss);
    r.smoothed.push_back(loss);
  }
  return r;
}

}  // namespace

TEST(LrFinder, SuggestsTheSteepestFallBeforeTheMinimumDespiteANoisyStart) {
  for (double noise : {0.0, 0.4}) {
    auto r = sweep(noise);
    suggestLearningRate(r);
    EXPECT_GT(r.minLossLr, 1e-2) << noise;
    EXPECT_LT(r.minLossLr, 1e-1) << noise;
    EXPECT_GE(r.suggestedLr, r.minLossLr / 100) << noise;
    EXPECT_LE(r.suggestedLr, r.minLossLr) << noise;
    // The steepest fall of this curve is at 1e-3.
    EXPECT_NEAR(std::log10(r.suggestedLr), -3, 0.35) << noise;
  }
}

// Adam on the small CNN: the loss falls steeply around 1e-3, then keeps creeping down to a
// minimum near 0.3, where training already breaks down. The suggestion is the steep fall; the
// last rule (within two decades of the minimum) gave 8e-3, which trains worse than 8e-4.
TEST(LrFinder, ALongCreepToTheMinimumDoesNotPullTheSuggestionUp) {
  LrFindResult r;
  for (int i = 0; i < 100; ++i) {
    const double lr = 1e-7 * std::pow(1e8, i / 99.0);
    const double x = std::log10(lr);
    const double loss = 2.3 - 0.4 / (1 + std::exp(-4 * (x + 3))) - 0.1 * std::max(0.0, x + 3) +
                        5 * std::pow(std::max(0.0, x + 0.5), 2);
    r.lrs.push_back(lr);
    r.losses.push_back(loss);
    r.smoothed.push_back(loss);
  }
  suggestLearningRate(r);
  EXPECT_GT(r.minLossLr, 0.1);
  EXPECT_NEAR(std::log10(r.suggestedLr), -3, 0.35);
}

TEST(LrFinder, NothingFallingSuggestsATenthOfTheLowestLoss) {
  LrFindResult r;
  for (int i = 0; i < 50; ++i) {
    r.lrs.push_back(1e-5 * std::pow(10, i / 10.0));
    r.losses.push_back(1.0 + i);
    r.smoothed.push_back(1.0 + i);
  }
  suggestLearningRate(r);
  EXPECT_DOUBLE_EQ(r.minLossLr, r.lrs[5]);  // the first tenth is not considered
  EXPECT_DOUBLE_EQ(r.suggestedLr, r.lrs[5] / 10);
}
