// The trainer's other modes, through its own batch code and without a run folder: the LR range
// test and the throughput bench.
#include <gtest/gtest.h>

#include <filesystem>

#include "train/trainer.h"
#include "trainer_fixtures.h"

using namespace netsmith;
using namespace netsmith::train;
using netsmith::testutil::configFor;
using netsmith::testutil::TempDir;
using netsmith::testutil::trainRun;

TEST(Trainer, LrFindSweepsSuggestsAndRestoresTheWeights) {
  TempDir dir;
  auto config = configFor(testutil::writeTrainProject(dir), dir);
  config.lrFind = true;
  config.writeRun = false;
  config.lrFindOptions.steps = 40;
  config.lrFindOptions.startLr = 1e-5;
  config.lrFindOptions.endLr = 100;
  const auto run = trainRun(config);
  ASSERT_EQ(run.result.state, run::FinishState::Completed) << run.result.reason;
  const auto& r = run.result.lrFind;
  ASSERT_GE(r.lrs.size(), 5u);
  EXPECT_DOUBLE_EQ(r.lrs.front(), 1e-5);
  for (std::size_t i = 1; i < r.lrs.size(); ++i)
    EXPECT_GT(r.lrs[i], r.lrs[i - 1]);
  EXPECT_GT(r.suggestedLr, 1e-5);
  EXPECT_LT(r.suggestedLr, 100);
  EXPECT_TRUE(r.weightsRestored);
  EXPECT_TRUE(run.result.runDir.empty());
}

TEST(Trainer, BenchTimesTheTrainersOwnBatches) {
  TempDir dir;
  // 256 samples, a quarter for validation: 192 training samples, 6 full batches of 32.
  auto config = configFor(testutil::writeTrainProject(dir), dir);
  config.bench = true;
  config.writeRun = false;
  config.benchOptions.warmup = 1;
  config.benchOptions.steps = 10;
  const auto run = trainRun(config);
  ASSERT_EQ(run.result.state, run::FinishState::Completed) << run.result.reason;
  const auto& b = run.result.bench;
  // Every batch, warm-up included, went through the trainer's batch code: each published its
  // event and took its optimizer step (accumulation 1).
  const auto batches = run.recorder->ofType(run::EventType::BatchEnd);
  ASSERT_EQ(batches.size(), 2u * (1 + 10));
  EXPECT_EQ(run.result.steps, 22);
  EXPECT_EQ(batches.back().batch.step, 22);
  // The figures count what was timed: 10 batches of 32 each time; the real loader ran past
  // the end of its 6-batch epoch and started the next.
  EXPECT_EQ(b.synthetic.steps, 10);
  EXPECT_EQ(b.synthetic.images, 320);
  EXPECT_EQ(b.real.steps, 10);
  EXPECT_EQ(b.real.images, 320);
  EXPECT_EQ(batches.back().batch.epoch, 1);
  EXPECT_GT(b.synthetic.seconds, 0);
  EXPECT_GT(b.real.seconds, 0);
  EXPECT_EQ(b.threads, 1);
  EXPECT_EQ(b.workers, 1);
  EXPECT_TRUE(run.result.runDir.empty());
  EXPECT_FALSE(std::filesystem::exists(dir.file("runs")));
  // Where the time went accounts for the timed batches' time, each part once.
  for (const auto* r : {&b.synthetic, &b.real}) {
    const auto& p = r->phases;
    for (const double v :
         {p.loader, p.forward, p.figures, p.backward, p.norms, p.optimizer, p.loop})
      EXPECT_GE(v, 0);
    EXPECT_GT(p.forward, 0);
    EXPECT_GT(p.backward, 0);
    EXPECT_GT(p.optimizer, 0);
    EXPECT_LE(p.total(), r->seconds);
    EXPECT_GE(p.total(), 0.9 * r->seconds);
    EXPECT_DOUBLE_EQ(p.overhead(), p.figures + p.norms + p.loop);
  }
}
