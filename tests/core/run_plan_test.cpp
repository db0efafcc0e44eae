// RunPlan: batches, optimizer steps and the LR of every step, counted by hand here.
#include "train/run_plan.h"

#include <gtest/gtest.h>

#include "train/train_options.h"

using namespace netsmith;
using namespace netsmith::train;

namespace {

TrainOptions options(const Json& train) {
  Problems problems;
  auto o = parseTrainOptions(train, ScheduleRegistry::withBuiltins(), problems);
  EXPECT_TRUE(problems.empty()) << formatProblems(problems);
  return o;
}

}  // namespace

TEST(RunPlan, AccumulationGroupsBatchesIntoSteps) {
  // The case that once disagreed: 3,000 images, batch 64, accumulation 2.
  const auto plan = RunPlan::make(
      options({{"epochs", 3}, {"batch_size", 64}, {"grad_accumulation", 2}}), 3000, 0, 1);
  EXPECT_EQ(plan.batchesPerEpoch(), 47);  // 46 full batches and one of 56
  EXPECT_EQ(plan.stepsPerEpoch(), 24);    // 23 groups of two, one of one
  EXPECT_EQ(plan.totalSteps(), 72);
  EXPECT_EQ(plan.lrCurve().size(), 72u);
  const auto last = plan.groupOf(46);
  EXPECT_EQ(last.start, 46);
  EXPECT_EQ(last.size, 1);
  EXPECT_TRUE(last.boundary);
  EXPECT_FALSE(plan.groupOf(44).boundary);
  EXPECT_TRUE(plan.groupOf(45).boundary);
  EXPECT_EQ(plan.groupOf(45).size, 2);
  EXPECT_EQ(plan.stepsBefore(1, 0), 24);
  EXPECT_EQ(plan.stepsBefore(1, 5), 26);
  EXPECT_NE(plan.describe().find("accumulation 2: 24 steps per epoch"), std::string::npos)
      << plan.describe();
}

TEST(RunPlan, ProcessesLimitsDropLastOverfitAndFastDevRun) {
  const Json base{{"epochs", 2}, {"batch_size", 10}};
  // Two processes share a global batch of 20.
  auto p = RunPlan::make(options(base), 95, 0, 2);
  EXPECT_EQ(p.globalBatch(), 20);
  EXPECT_EQ(p.batchesPerEpoch(), 5);
  // A limit keeps at most N samples.
  p = RunPlan::make(options(base), 95, 41, 1);
  EXPECT_EQ(p.trainSamples(), 41);
  EXPECT_EQ(p.batchesPerEpoch(), 5);
  // drop_last drops the short last batch.
  Json dl = base;
  dl["drop_last"] = true;
  EXPECT_EQ(RunPlan::make(options(dl), 95, 0, 1).batchesPerEpoch(), 9);
  EXPECT_EQ(RunPlan::make(options(dl), 9, 0, 1).batchesPerEpoch(), 0);
  // overfit_batches: K batches of the global batch.
  Json of = base;
  of["overfit_batches"] = 2;
  p = RunPlan::make(options(of), 95, 0, 2);
  EXPECT_EQ(p.trainSamples(), 40);
  EXPECT_EQ(p.batchesPerEpoch(), 2);
  // fast_dev_run: one batch of one epoch.
  Json fd = base;
  fd["fast_dev_run"] = true;
  p = RunPlan::make(options(fd), 95, 0, 1);
  EXPECT_EQ(p.epochs(), 1);
  EXPECT_EQ(p.batchesPerEpoch(), 1);
  EXPECT_EQ(p.totalSteps(), 1);
}

TEST(RunPlan, WarmupInEpochsCountsOptimizerSteps) {
  // 100 samples, batch 10, accumulation 5: 2 steps per epoch; warmup of 1 epoch = 2 steps.
  const auto plan = RunPlan::make(
      options({{"epochs", 3},
               {"batch_size", 10},
               {"grad_accumulation", 5},
               {"optimizer", Json{{"type", "sgd"}, {"lr", 0.1}}},
               {"schedule",
                Json{{"type", "constant"}, {"warmup_epochs", 1}, {"warmup_start_factor", 0.5}}}}),
      100, 0, 1);
  const auto lr = plan.lrCurve();
  ASSERT_EQ(lr.size(), 6u);
  EXPECT_DOUBLE_EQ(lr[0], 0.05);
  EXPECT_DOUBLE_EQ(lr[1], 0.075);
  EXPECT_DOUBLE_EQ(lr[2], 0.1);
  EXPECT_DOUBLE_EQ(lr[5], 0.1);
  // Past the end: the last step's LR.
  EXPECT_DOUBLE_EQ(plan.lrAt(100), lr[5]);
  const Json j = plan.toJson();
  EXPECT_EQ(j["steps_per_epoch"], 2);
  EXPECT_EQ(j["batches_per_epoch"], 10);
  EXPECT_EQ(j["total_steps"], 6);
}
