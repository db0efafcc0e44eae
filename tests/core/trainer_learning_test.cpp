// The trainer end to end on real (test-written) data: it learns, two deterministic runs agree
// to the bit, a stopped run resumes exactly, and the watchdog stops a non-finite loss and warns
// about a runaway one.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "checkpoint/checkpoint.h"
#include "checkpoint/safetensors.h"
#include "common/file_util.h"
#include "train/trainer.h"
#include "trainer_fixtures.h"

using namespace netsmith;
using namespace netsmith::train;
using netsmith::testutil::configFor;
using netsmith::testutil::Recorder;
using netsmith::testutil::TempDir;
using netsmith::testutil::trainRun;
using netsmith::testutil::weightsOf;
namespace fs = std::filesystem;

namespace {

void expectBitwiseEqual(const checkpoint::NamedTensors& a, const checkpoint::NamedTensors& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].first, b[i].first);
    EXPECT_TRUE(torch::equal(a[i].second, b[i].second)) << a[i].first << " differs";
  }
}

}  // namespace

TEST(Trainer, LossFallsAndTheModelLearnsASmallRealDataset) {
  TempDir dir;
  auto config = configFor(testutil::writeTrainProject(dir, {{"epochs", 4}}), dir);
  const auto run = trainRun(config);
  ASSERT_EQ(run.result.state, run::FinishState::Completed) << run.result.reason;
  const auto epochs = run.recorder->ofType(run::EventType::EpochEnd);
  ASSERT_EQ(epochs.size(), 4u);
  EXPECT_LT(epochs.back().epoch.trainLoss, 0.5 * epochs.front().epoch.trainLoss);
  ASSERT_TRUE(run.result.hasTest);
  EXPECT_EQ(run.result.test.samples, 64);
  EXPECT_GT(run.result.test.accuracy, 0.9);
  // Per-class accuracy and a confusion matrix whose rows add up to the class counts.
  ASSERT_EQ(run.result.test.confusion.size(), 4u);
  std::int64_t total = 0;
  for (const auto& row : run.result.test.confusion)
    for (auto v : row)
      total += v;
  EXPECT_EQ(total, 64);
  EXPECT_EQ(run.result.test.perClassAccuracy.size(), 4u);
  // Per-layer gradient norms for every trained node.
  const auto& norms = epochs.back().epoch.layerGradNorms;
  for (const char* node : {"conv", "bn", "fc"}) {
    ASSERT_TRUE(norms.count(node)) << node;
    EXPECT_GT(norms.at(node), 0.0);
  }
  // The run folder holds what the page promises.
  const fs::path runDir = run.result.runDir;
  for (const char* f : {"project.json", "metrics.csv", "events.jsonl", "train.log",
                        "checkpoints/last.safetensors", "checkpoints/best.safetensors"})
    EXPECT_TRUE(fs::exists(runDir / f)) << f;
  EXPECT_TRUE(fs::is_directory(runDir / "exports"));
  // metrics.csv: a header, a row per step, a row per epoch.
  std::ifstream csv(runDir / "metrics.csv");
  std::string line;
  int steps = 0, epochRows = 0;
  while (std::getline(csv, line)) {
    steps += line.rfind("step,", 0) == 0;
    epochRows += line.rfind("epoch,", 0) == 0;
  }
  EXPECT_EQ(steps, 4 * 6);  // 192 training samples / 32
  EXPECT_EQ(epochRows, 4);
  // train.log includes the lines from before the folder existed.
  const std::string log = readTextFile((runDir / "train.log").string());
  EXPECT_NE(log.find("opening data"), std::string::npos) << log;
  EXPECT_NE(log.find("epoch 4/4"), std::string::npos) << log;
}

// Two epochs straight, or stopped (mid-epoch after 2 batches, or after all 6 batches of the
// first epoch but before its validation), then resumed: the same weights to the bit, and the
// same epoch metrics.
class ExactResume : public ::testing::TestWithParam<int> {};

TEST_P(ExactResume, StoppedAndResumedEqualsStraight) {
  TempDir dir;
  const Json options{{"deterministic", true}, {"epochs", 2}};
  const std::string augment =
      R"([{"transform": "RandomCrop", "size": "auto", "padding": 2},
          {"transform": "HorizontalFlip", "p": 0.5}])";
  const auto path = testutil::writeTrainProject(dir, options, 256, augment);

  const auto straight = trainRun(configFor(path, dir));
  ASSERT_EQ(straight.result.state, run::FinishState::Completed) << straight.result.reason;

  auto first = configFor(path, dir);
  first.stopAfterBatches = GetParam();
  const auto stopped = trainRun(first);
  ASSERT_EQ(stopped.result.state, run::FinishState::Stopped) << stopped.result.reason;
  ASSERT_FALSE(stopped.result.lastCheckpoint.empty());
  const auto meta = checkpoint::readCheckpoint(stopped.result.lastCheckpoint).meta;
  EXPECT_EQ(meta["data_order"]["next_batch"], GetParam());
  EXPECT_EQ(meta["step"], GetParam());

  auto second = configFor(path, dir);
  second.resumePath = stopped.result.lastCheckpoint;
  second.runDir = stopped.result.runDir;
  const auto resumed = trainRun(second);
  ASSERT_EQ(resumed.result.state, run::FinishState::Completed) << resumed.result.reason;
  // The resumed session trains only the batches not yet seen.
  EXPECT_EQ(resumed.recorder->ofType(run::EventType::BatchEnd).size(), 12u - GetParam());

  expectBitwiseEqual(weightsOf(straight.result.lastCheckpoint),
                     weightsOf(resumed.result.lastCheckpoint));
  const auto a = straight.recorder->ofType(run::EventType::EpochEnd);
  const auto b = resumed.recorder->ofType(run::EventType::EpochEnd);
  ASSERT_EQ(a.size(), 2u);
  ASSERT_FALSE(b.empty());
  const auto& x = a.back().epoch;
  const auto& y = b.back().epoch;
  EXPECT_EQ(x.trainLoss, y.trainLoss);
  EXPECT_EQ(x.trainAccuracy, y.trainAccuracy);
  EXPECT_EQ(x.validation.loss, y.validation.loss);
  EXPECT_EQ(x.validation.confusion, y.validation.confusion);
  EXPECT_EQ(straight.result.test.confusion, resumed.result.test.confusion);
}

INSTANTIATE_TEST_SUITE_P(Trainer, ExactResume, ::testing::Values(2, 6));

TEST(Trainer, TwoDeterministicRunsGiveBitwiseEqualWeights) {
  TempDir dir;
  const auto path = testutil::writeTrainProject(dir, {{"deterministic", true}, {"epochs", 1}});
  const auto a = trainRun(configFor(path, dir));
  const auto b = trainRun(configFor(path, dir));
  ASSERT_EQ(a.result.state, run::FinishState::Completed) << a.result.reason;
  ASSERT_EQ(b.result.state, run::FinishState::Completed) << b.result.reason;
  EXPECT_NE(a.result.runDir, b.result.runDir);
  expectBitwiseEqual(weightsOf(a.result.lastCheckpoint), weightsOf(b.result.lastCheckpoint));
}

// A planted NaN: initialise from weights that hold one. The watchdog stops the run, names the
// step and the LR, suggests a fix, and writes a checkpoint first.
TEST(Trainer, WatchdogStopsOnAPlantedNaN) {
  TempDir dir;
  const auto path = testutil::writeTrainProject(dir);
  auto w = torch::randn({4, 128});  // fc: 8 channels x 4 x 4 in, 4 classes out
  w[1][3] = std::nan("");
  checkpoint::writeSafetensors(dir.file("nan.safetensors"), {{"fc.weight", w}}, {});
  auto config = configFor(path, dir);
  config.initFromPath = dir.file("nan.safetensors");
  const auto run = trainRun(config);
  EXPECT_EQ(run.result.state, run::FinishState::Failed);
  const auto& why = run.result.reason;
  EXPECT_NE(why.find("non-finite loss"), std::string::npos) << why;
  EXPECT_NE(why.find("at step 1 (epoch 1, batch 1)"), std::string::npos) << why;
  EXPECT_NE(why.find("learning rate 0.01"), std::string::npos) << why;
  EXPECT_NE(why.find("clip_grad_norm"), std::string::npos) << why;
  ASSERT_FALSE(run.result.lastCheckpoint.empty()) << why;
  EXPECT_NO_THROW(checkpoint::readCheckpoint(run.result.lastCheckpoint));
  EXPECT_EQ(run.recorder->events().back().type, run::EventType::Finished);
  EXPECT_EQ(run.result.initReport.find("loaded 1"), 0u) << run.result.initReport;

  // With nan_policy "skip" the batches are skipped with warnings and the run ends normally.
  auto skip =
      configFor(testutil::writeTrainProject(dir, {{"nan_policy", "skip"}, {"epochs", 1}}), dir);
  skip.initFromPath = dir.file("nan.safetensors");
  const auto skipped = trainRun(skip);
  EXPECT_EQ(skipped.result.state, run::FinishState::Completed) << skipped.result.reason;
  EXPECT_EQ(skipped.recorder->ofType(run::EventType::Warning).size(), 6u);
}

// A loss that runs away but stays finite (BatchNorm keeps it from overflowing) is warned about,
// with the step, in the events and the run's log; the run goes on.
TEST(Trainer, AFiniteRunawayLossIsWarnedAbout) {
  TempDir dir;
  auto recorder = std::make_shared<Recorder>();
  auto config = configFor(
      testutil::writeTrainProject(dir, {{"epochs", 1},
                                        {"optimizer", Json{{"type", "adam"}, {"lr", 5.0}}},
                                        {"schedule", Json{{"type", "constant"}}}}),
      dir);
  Trainer trainer(config);
  trainer.addSink(recorder);
  trainer.start();
  trainer.wait();
  const auto result = trainer.result();
  ASSERT_EQ(result.state, run::FinishState::Completed) << result.reason;
  std::vector<run::TrainingEvent> divergence;
  for (const auto& e : recorder->ofType(run::EventType::Warning))
    if (e.tag == "divergence") divergence.push_back(e);
  ASSERT_EQ(divergence.size(), 1u);  // once per epoch
  EXPECT_NE(divergence[0].message.find("training is diverging"), std::string::npos);
  // The warned batch's loss, from the run's own events, is over 100x the first batch's.
  const auto batches = recorder->ofType(run::EventType::BatchEnd);
  double warnedLoss = 0;
  for (const auto& b : batches)
    if (b.batch.epoch == divergence[0].batch.epoch && b.batch.batch == divergence[0].batch.batch)
      warnedLoss = b.batch.loss;
  EXPECT_GT(warnedLoss, 100 * batches.front().batch.loss);
  const std::string log = readTextFile(result.runDir + "/train.log");
  EXPECT_NE(log.find("training is diverging"), std::string::npos);
}
