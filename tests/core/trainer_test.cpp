// The trainer end to end on real (test-written) data: learning, exact resume, the watchdog,
// early stopping, events, controls and bad input.
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "checkpoint/checkpoint.h"
#include "common/file_util.h"
#include "graph/graph_module.h"
#include "ops/op_registry.h"
#include "project/project.h"
#include "train/lr_schedule.h"
#include "train/run_writer.h"
#include "train/train_options.h"
#include "train/trainer.h"
#include "train_fixtures.h"

using namespace netsmith;
using namespace netsmith::train;
using netsmith::testutil::Recorder;
using netsmith::testutil::TempDir;
namespace fs = std::filesystem;

namespace {

// Sinks receive events on their own thread, in order: once the "paused" log line has arrived,
// so has every batch event sent before the pause, and the batch count is final.
void waitForThePausedLine(const Recorder& recorder) {
  const auto pausedLogged = [&] {
    for (const auto& e : recorder.ofType(EventType::Log))
      if (e.message == "paused") return true;
    return false;
  };
  while (!pausedLogged())
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
}

TrainerConfig configFor(const std::string& projectPath, const TempDir& dir) {
  auto loaded = project::loadProject(projectPath);
  EXPECT_TRUE(loaded.problems.empty()) << formatProblems(loaded.problems);
  TrainerConfig c;
  c.project = loaded.project;
  c.baseDir = loaded.baseDir();
  c.runsRoot = dir.file("runs");
  return c;
}

struct Run {
  TrainResult result;
  std::shared_ptr<Recorder> recorder = std::make_shared<Recorder>();
};

Run trainRun(TrainerConfig config) {
  Run run;
  Trainer trainer(std::move(config));
  trainer.addSink(run.recorder);
  trainer.start();
  trainer.wait();
  run.result = trainer.result();
  return run;
}

/// Sets parameter `key` of node `id` in the config's model.
void setNodeParam(TrainerConfig& config, const std::string& id, const std::string& key,
                  const Json& value) {
  for (auto& n : config.project.model.nodes)
    if (n.id == id) n.params[key] = value;
}

checkpoint::NamedTensors weightsOf(const std::string& path) {
  return checkpoint::readCheckpoint(path).model;
}

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
  ASSERT_EQ(run.result.state, FinishState::Completed) << run.result.reason;
  const auto epochs = run.recorder->ofType(EventType::EpochEnd);
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
  ASSERT_EQ(straight.result.state, FinishState::Completed) << straight.result.reason;

  auto first = configFor(path, dir);
  first.stopAfterBatches = GetParam();
  const auto stopped = trainRun(first);
  ASSERT_EQ(stopped.result.state, FinishState::Stopped) << stopped.result.reason;
  ASSERT_FALSE(stopped.result.lastCheckpoint.empty());
  const auto meta = checkpoint::readCheckpoint(stopped.result.lastCheckpoint).meta;
  EXPECT_EQ(meta["data_order"]["next_batch"], GetParam());
  EXPECT_EQ(meta["step"], GetParam());

  auto second = configFor(path, dir);
  second.resumePath = stopped.result.lastCheckpoint;
  second.runDir = stopped.result.runDir;
  const auto resumed = trainRun(second);
  ASSERT_EQ(resumed.result.state, FinishState::Completed) << resumed.result.reason;
  // The resumed session trains only the batches not yet seen.
  EXPECT_EQ(resumed.recorder->ofType(EventType::BatchEnd).size(), 12u - GetParam());

  expectBitwiseEqual(weightsOf(straight.result.lastCheckpoint),
                     weightsOf(resumed.result.lastCheckpoint));
  const auto a = straight.recorder->ofType(EventType::EpochEnd);
  const auto b = resumed.recorder->ofType(EventType::EpochEnd);
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
  ASSERT_EQ(a.result.state, FinishState::Completed) << a.result.reason;
  ASSERT_EQ(b.result.state, FinishState::Completed) << b.result.reason;
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
  EXPECT_EQ(run.result.state, FinishState::Failed);
  const auto& why = run.result.reason;
  EXPECT_NE(why.find("non-finite loss"), std::string::npos) << why;
  EXPECT_NE(why.find("at step 1 (epoch 1, batch 1)"), std::string::npos) << why;
  EXPECT_NE(why.find("learning rate 0.01"), std::string::npos) << why;
  EXPECT_NE(why.find("clip_grad_norm"), std::string::npos) << why;
  ASSERT_FALSE(run.result.lastCheckpoint.empty()) << why;
  EXPECT_NO_THROW(checkpoint::readCheckpoint(run.result.lastCheckpoint));
  EXPECT_EQ(run.recorder->events().back().type, EventType::Finished);
  EXPECT_EQ(run.result.initReport.find("loaded 1"), 0u) << run.result.initReport;

  // With nan_policy "skip" the batches are skipped with warnings and the run ends normally.
  auto skip =
      configFor(testutil::writeTrainProject(dir, {{"nan_policy", "skip"}, {"epochs", 1}}), dir);
  skip.initFromPath = dir.file("nan.safetensors");
  const auto skipped = trainRun(skip);
  EXPECT_EQ(skipped.result.state, FinishState::Completed) << skipped.result.reason;
  EXPECT_EQ(skipped.recorder->ofType(EventType::Warning).size(), 6u);
}

TEST(Trainer, EarlyStoppingEndsARunThatStopsImproving) {
  TempDir dir;
  // No epoch can improve the accuracy by 0.5 (50 points) after the first: the run ends after
  // 1 + patience epochs.
  const auto path = testutil::writeTrainProject(
      dir,
      {{"epochs", 20},
       {"optimizer", Json{{"type", "sgd"}, {"lr", 1e-9}, {"momentum", 0.0}}},
       {"schedule", Json{{"type", "constant"}}},
       {"early_stopping", Json{{"metric", "val_accuracy"}, {"patience", 2}, {"min_delta", 0.5}}}});
  const auto run = trainRun(configFor(path, dir));
  EXPECT_EQ(run.result.state, FinishState::Completed);
  EXPECT_NE(run.result.reason.find("early stopping: val_accuracy has not improved for 2 epochs"),
            std::string::npos)
      << run.result.reason;
  EXPECT_EQ(run.recorder->ofType(EventType::EpochEnd).size(), 3u);
}

// Events arrive in order, and a sink that takes 100 ms an event does not hold the trainer up:
// the run finishes while that sink is still far behind.
TEST(Trainer, EventsInOrderAndASlowSinkNeverBlocksTraining) {
  class SlowSink : public EventSink {
   public:
    std::atomic<int> seen{0};
    void onEvent(const TrainingEvent&) override {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      ++seen;
    }
  };
  TempDir dir;
  auto slow = std::make_shared<SlowSink>();
  auto recorder = std::make_shared<Recorder>();
  Trainer trainer(configFor(testutil::writeTrainProject(dir), dir));
  trainer.addSink(slow);
  trainer.addSink(recorder);
  trainer.start();
  while (trainer.state() != RunState::Finished)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const int slowAtFinish = slow->seen.load();
  trainer.wait();
  const auto events = recorder->events();
  EXPECT_LT(slowAtFinish, static_cast<int>(events.size()) / 2);
  EXPECT_EQ(slow->seen.load(), static_cast<int>(events.size()));  // delivered in the end

  ASSERT_GE(events.size(), 3u);
  EXPECT_EQ(events.back().type, EventType::Finished);
  std::int64_t lastStep = 0, epochsEnded = 0;
  bool started = false;
  for (const auto& e : events) {
    if (e.type == EventType::Started) started = true;
    if (e.type == EventType::BatchEnd) {
      EXPECT_TRUE(started);
      EXPECT_EQ(e.batch.step, lastStep + 1);
      EXPECT_EQ(e.batch.epoch, epochsEnded);
      EXPECT_GT(e.batch.memory.bytes, 0);
      EXPECT_EQ(e.batch.memory.kind, "process_rss");
      EXPECT_TRUE(std::isfinite(e.batch.gradNorm));
      lastStep = e.batch.step;
    }
    if (e.type == EventType::EpochEnd) {
      EXPECT_EQ(e.epoch.epoch, epochsEnded++);
    }
  }
  EXPECT_EQ(lastStep, 12);
  EXPECT_EQ(epochsEnded, 2);
}

TEST(Trainer, PauseResumeAndStopAnswerWithinABatch) {
  TempDir dir;
  auto recorder = std::make_shared<Recorder>();
  Trainer trainer(configFor(testutil::writeTrainProject(dir, {{"epochs", 50}}), dir));
  trainer.addSink(recorder);
  trainer.start();
  while (recorder->ofType(EventType::BatchEnd).size() < 3)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  trainer.pause();
  waitForThePausedLine(*recorder);
  EXPECT_EQ(trainer.state(), RunState::Paused);
  const auto pausedAt = recorder->ofType(EventType::BatchEnd).size();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(recorder->ofType(EventType::BatchEnd).size(), pausedAt);
  trainer.resume();
  while (recorder->ofType(EventType::BatchEnd).size() < pausedAt + 2)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  trainer.stop();
  trainer.wait();
  const auto result = trainer.result();
  EXPECT_EQ(result.state, FinishState::Stopped);
  // A stop that lands on the last batch of an epoch ends the run at the epoch boundary.
  EXPECT_TRUE(result.reason.find("stopped at epoch") != std::string::npos ||
              result.reason.find("stopped after epoch") != std::string::npos)
      << result.reason;
  const auto meta = checkpoint::readCheckpoint(result.lastCheckpoint).meta;
  EXPECT_EQ(meta["step"], result.steps);
  EXPECT_LT(result.steps, 50 * 6);
}

// Time spent paused is not training time: the throughput right after a resume is of the
// batches, not of the pause (it used to fall ~15x after a pause and stay down for 20 batches).
TEST(Trainer, ThroughputAfterAPauseLeavesThePauseOut) {
  TempDir dir;
  auto recorder = std::make_shared<Recorder>();
  Trainer trainer(configFor(testutil::writeTrainProject(dir, {{"epochs", 50}}), dir));
  trainer.addSink(recorder);
  trainer.start();
  while (recorder->ofType(EventType::BatchEnd).size() < 12)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  trainer.pause();
  waitForThePausedLine(*recorder);
  const auto before = recorder->ofType(EventType::BatchEnd);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  trainer.resume();
  while (recorder->ofType(EventType::BatchEnd).size() < before.size() + 3)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  trainer.stop();
  trainer.wait();
  const auto all = recorder->ofType(EventType::BatchEnd);
  std::vector<double> rates;
  for (std::size_t i = 3; i < before.size(); ++i)
    rates.push_back(before[i].batch.imagesPerSecond);
  std::sort(rates.begin(), rates.end());
  const double typical = rates[rates.size() / 2];
  const double afterResume = all[before.size()].batch.imagesPerSecond;
  // The events' own clock: the batch after the resume ended well over a second after the one
  // before the pause, so the pause really happened between them.
  EXPECT_GT(all[before.size()].batch.seconds - before.back().batch.seconds, 1.4);
  EXPECT_GT(afterResume, 0.3 * typical) << afterResume << " vs " << typical;
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
  ASSERT_EQ(result.state, FinishState::Completed) << result.reason;
  std::vector<TrainingEvent> divergence;
  for (const auto& e : recorder->ofType(EventType::Warning))
    if (e.tag == "divergence") divergence.push_back(e);
  ASSERT_EQ(divergence.size(), 1u);  // once per epoch
  EXPECT_NE(divergence[0].message.find("training is diverging"), std::string::npos);
  // The warned batch's loss, from the run's own events, is over 100x the first batch's.
  const auto batches = recorder->ofType(EventType::BatchEnd);
  double warnedLoss = 0;
  for (const auto& b : batches)
    if (b.batch.epoch == divergence[0].batch.epoch && b.batch.batch == divergence[0].batch.batch)
      warnedLoss = b.batch.loss;
  EXPECT_GT(warnedLoss, 100 * batches.front().batch.loss);
  const std::string log = readTextFile(result.runDir + "/train.log");
  EXPECT_NE(log.find("training is diverging"), std::string::npos);
}

TEST(Trainer, StopAfterEpochFinishesTheEpochWithValidation) {
  TempDir dir;
  auto config = configFor(testutil::writeTrainProject(dir, {{"epochs", 50}}), dir);
  Trainer trainer(config);
  struct StopOnFirstBatch : EventSink {
    Trainer* t = nullptr;
    void onEvent(const TrainingEvent& e) override {
      if (e.type == EventType::BatchEnd) t->stopAfterEpoch();
    }
  };
  auto sink = std::make_shared<StopOnFirstBatch>();
  sink->t = &trainer;
  auto recorder = std::make_shared<Recorder>();
  trainer.addSink(sink);
  trainer.addSink(recorder);
  trainer.start();
  trainer.wait();
  const auto result = trainer.result();
  EXPECT_EQ(result.state, FinishState::Stopped);
  const auto epochs = recorder->ofType(EventType::EpochEnd);
  ASSERT_GE(epochs.size(), 1u);
  EXPECT_LT(epochs.size(), 50u);
  EXPECT_TRUE(epochs.back().epoch.hasValidation);
  EXPECT_EQ(checkpoint::readCheckpoint(result.lastCheckpoint).meta["loop"]["next_batch"], 0);
}

TEST(Trainer, FastDevRunAndOverfitBatches) {
  TempDir dir;
  const auto fast = trainRun(
      configFor(testutil::writeTrainProject(dir, {{"fast_dev_run", true}, {"epochs", 9}}), dir));
  ASSERT_EQ(fast.result.state, FinishState::Completed) << fast.result.reason;
  EXPECT_EQ(fast.recorder->ofType(EventType::BatchEnd).size(), 1u);
  const auto e = fast.recorder->ofType(EventType::EpochEnd);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].epoch.validation.samples, 32);
  EXPECT_TRUE(fast.recorder->ofType(EventType::Checkpoint).empty());

  const auto overfit = trainRun(configFor(
      testutil::writeTrainProject(dir, {{"overfit_batches", 1},
                                        {"epochs", 30},
                                        {"optimizer", Json{{"type", "adam"}, {"lr", 0.01}}}}),
      dir));
  ASSERT_EQ(overfit.result.state, FinishState::Completed) << overfit.result.reason;
  const auto oe = overfit.recorder->ofType(EventType::EpochEnd);
  EXPECT_EQ(overfit.recorder->ofType(EventType::BatchEnd).size(), 30u);
  EXPECT_EQ(oe.back().epoch.validation.samples, 32);
  EXPECT_GT(oe.back().epoch.validation.accuracy, 0.95);  // one batch, memorised
}

TEST(Trainer, GradientAccumulationClippingLabelSmoothingAndClassWeights) {
  TempDir dir;
  const auto run = trainRun(configFor(testutil::writeTrainProject(dir, {{"grad_accumulation", 4},
                                                                        {"clip_grad_norm", 0.5},
                                                                        {"label_smoothing", 0.1},
                                                                        {"class_weights", "auto"},
                                                                        {"amp", "bf16"},
                                                                        {"channels_last", true}}),
                                      dir));
  ASSERT_EQ(run.result.state, FinishState::Completed) << run.result.reason;
  // 6 batches an epoch, 4 per step: steps 1 and 2 in each epoch.
  const auto batches = run.recorder->ofType(EventType::BatchEnd);
  ASSERT_EQ(batches.size(), 12u);
  EXPECT_EQ(batches[3].batch.step, 1);
  EXPECT_EQ(batches[5].batch.step, 2);
  EXPECT_EQ(batches.back().batch.step, 4);
  EXPECT_EQ(batches.back().batch.totalSteps, 4);
}

TEST(Trainer, LrFindSweepsSuggestsAndRestoresTheWeights) {
  TempDir dir;
  auto config = configFor(testutil::writeTrainProject(dir), dir);
  config.lrFind = true;
  config.writeRun = false;
  config.lrFindOptions.steps = 40;
  config.lrFindOptions.startLr = 1e-5;
  config.lrFindOptions.endLr = 100;
  const auto run = trainRun(config);
  ASSERT_EQ(run.result.state, FinishState::Completed) << run.result.reason;
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

TEST(Trainer, InitFromAnotherModelReportsWhatMatched) {
  TempDir dir;
  const auto path = testutil::writeTrainProject(dir, {{"epochs", 1}});
  const auto first = trainRun(configFor(path, dir));
  ASSERT_EQ(first.result.state, FinishState::Completed);
  // The same layers, but 6 classes: fc no longer fits.
  auto config = configFor(path, dir);
  setNodeParam(config, "fc", "out_features", 6);
  config.initFromPath = first.result.lastCheckpoint;
  const auto tuned = trainRun(config);
  ASSERT_EQ(tuned.result.state, FinishState::Completed) << tuned.result.reason;
  const auto& report = tuned.result.initReport;
  EXPECT_NE(report.find("shape mismatch 2"), std::string::npos) << report;
  EXPECT_NE(report.find("fc.weight"), std::string::npos) << report;
}

TEST(Trainer, FrozenNodesAreNotUpdated) {
  TempDir dir;
  auto config = configFor(testutil::writeTrainProject(dir, {{"epochs", 1}}), dir);
  for (auto& n : config.project.model.nodes)
    if (n.id == "conv") n.frozen = true;
  const auto run = trainRun(config);
  ASSERT_EQ(run.result.state, FinishState::Completed) << run.result.reason;
  // The same seed builds the same initial conv weights.
  torch::manual_seed(3);
  const auto registry = ops::OpRegistry::withBuiltins();
  const auto w = weightsOf(run.result.lastCheckpoint);
  graph::GraphModule fresh(config.project.model, registry);
  const auto init = checkpoint::moduleState(*fresh);
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (w[i].first.rfind("conv.", 0) == 0) {
      EXPECT_TRUE(torch::equal(w[i].second, init[i].second)) << w[i].first;
    }
    if (w[i].first == "fc.weight") {
      EXPECT_FALSE(torch::equal(w[i].second, init[i].second));
    }
  }
}

// --- Bad input: each a clear error, before or during training, nothing half-written. ---

TEST(TrainOptionsErrors, EachNamesTheKey) {
  const auto schedules = ScheduleRegistry::withBuiltins();
  auto problems = [&](const char* json) {
    Problems p;
    parseTrainOptions(Json::parse(json), schedules, p);
    return formatProblems(p);
  };
  EXPECT_NE(problems(R"({"optimizer": {"type": "adam", "lr": 0}})").find("train.optimizer.lr"),
            std::string::npos);
  EXPECT_NE(problems(R"({"optimizer": {"type": "adam", "lr": -1}})").find("must be > 0"),
            std::string::npos);
  EXPECT_NE(problems(R"({"optimizer": {"type": "adam", "lr": "NaN"}})").find("train.optimizer.lr"),
            std::string::npos);
  EXPECT_NE(problems(R"({"batch_size": 0})").find("train.batch_size"), std::string::npos);
  EXPECT_NE(problems(R"({"epochs": 0})").find("train.epochs"), std::string::npos);
  EXPECT_NE(problems(R"({"optimizer": {"type": "adamm"}})").find("did you mean \"adam\""),
            std::string::npos);
  EXPECT_NE(problems(R"({"schedule": {"type": "cosin"}})").find("train.schedule"),
            std::string::npos);
  EXPECT_NE(problems(R"({"schedule": {"type": "step", "gamma": 7}})").find("train.schedule.gamma"),
            std::string::npos);
  EXPECT_NE(problems(R"({"grad_acumulation": 2})").find("did you mean \"grad_accumulation\""),
            std::string::npos);
  EXPECT_NE(problems(R"({"device": "gpu"})").find("train.device"), std::string::npos);
  EXPECT_NE(problems(R"({"amp": "fp8"})").find("train.amp"), std::string::npos);
  EXPECT_NE(problems(R"({"early_stopping": {"metric": "val_los"}})").find("train.early_stopping"),
            std::string::npos);
  EXPECT_NE(problems(R"({"class_weights": [1, -2]})").find("train.class_weights"),
            std::string::npos);
  EXPECT_EQ(problems(R"({"early_stopping": {"metric": "val_loss", "patience": 3},
                         "plateau": {"metric": "val_accuracy", "factor": 0.5}})"),
            "");
}

TEST(TrainerErrors, BatchLargerThanTheDataWithDropLast) {
  TempDir dir;
  const auto run = trainRun(
      configFor(testutil::writeTrainProject(dir, {{"batch_size", 500}, {"drop_last", true}}), dir));
  EXPECT_EQ(run.result.state, FinishState::Failed);
  EXPECT_NE(run.result.reason.find("train.batch_size 500 is larger than the 192 training samples"),
            std::string::npos)
      << run.result.reason;
  EXPECT_TRUE(run.result.runDir.empty());
  EXPECT_FALSE(fs::exists(dir.file("runs")));
}

TEST(TrainerErrors, CudaAskedForOnACpuBuild) {
  if (torch::cuda::is_available()) GTEST_SKIP() << "this machine has CUDA";
  TempDir dir;
  const auto run =
      trainRun(configFor(testutil::writeTrainProject(dir, {{"device", "cuda:0"}}), dir));
  EXPECT_EQ(run.result.state, FinishState::Failed);
  EXPECT_NE(run.result.reason.find("train.device is \"cuda:0\""), std::string::npos)
      << run.result.reason;
}

TEST(TrainerErrors, ResumeFromAnotherModelOrACorruptFile) {
  TempDir dir;
  const auto path = testutil::writeTrainProject(dir, {{"epochs", 1}});
  const auto first = trainRun(configFor(path, dir));
  ASSERT_EQ(first.result.state, FinishState::Completed);

  auto other = configFor(path, dir);
  setNodeParam(other, "conv", "out_channels", 16);
  other.resumePath = first.result.lastCheckpoint;
  const auto a = trainRun(other);
  EXPECT_EQ(a.result.state, FinishState::Failed);
  EXPECT_NE(a.result.reason.find("a checkpoint of another model"), std::string::npos)
      << a.result.reason;

  std::string bytes = readTextFile(first.result.lastCheckpoint);
  writeFileAtomically(dir.file("cut.safetensors"), bytes.substr(0, bytes.size() / 2));
  auto cut = configFor(path, dir);
  cut.resumePath = dir.file("cut.safetensors");
  const auto b = trainRun(cut);
  EXPECT_EQ(b.result.state, FinishState::Failed);
  EXPECT_NE(b.result.reason.find("cut.safetensors"), std::string::npos) << b.result.reason;

  writeFileAtomically(dir.file("junk.safetensors"), "this is not a checkpoint at all");
  auto junk = configFor(path, dir);
  junk.resumePath = dir.file("junk.safetensors");
  const auto c = trainRun(junk);
  EXPECT_EQ(c.result.state, FinishState::Failed);
  EXPECT_NE(c.result.reason.find("junk.safetensors"), std::string::npos) << c.result.reason;

  // The finished run cannot be resumed without more epochs.
  auto done = configFor(path, dir);
  done.resumePath = first.result.lastCheckpoint;
  const auto d = trainRun(done);
  EXPECT_EQ(d.result.state, FinishState::Failed);
  EXPECT_NE(d.result.reason.find("raise --epochs"), std::string::npos) << d.result.reason;
}

TEST(TrainerErrors, OutputFolderNotWritable) {
  TempDir dir;
  auto config = configFor(testutil::writeTrainProject(dir), dir);
  writeFileAtomically(dir.file("a-file"), "x");
  config.runsRoot = dir.file("a-file") + "/runs";
  const auto run = trainRun(config);
  EXPECT_EQ(run.result.state, FinishState::Failed);
  EXPECT_NE(run.result.reason.find("cannot create the runs folder"), std::string::npos)
      << run.result.reason;
  EXPECT_EQ(run.result.steps, 0);
}

// The disk fills while the second epoch's checkpoint is written: the run fails with the
// reason, and the first epoch's checkpoint is intact.
TEST(TrainerErrors, DiskFullWhileWritingACheckpoint) {
  TempDir dir;
  auto config = configFor(testutil::writeTrainProject(dir, {{"epochs", 3}}), dir);
  setWriteFaultForTesting("last.safetensors", 1);
  const auto run = trainRun(config);
  setWriteFaultForTesting("", 0);
  EXPECT_EQ(run.result.state, FinishState::Failed);
  EXPECT_NE(run.result.reason.find("No space left on device"), std::string::npos)
      << run.result.reason;
  EXPECT_NE(run.result.reason.find("the existing file is unchanged"), std::string::npos)
      << run.result.reason;
  const std::string last = run.result.runDir + "/checkpoints/last.safetensors";
  const auto meta = checkpoint::readCheckpoint(last).meta;
  EXPECT_EQ(meta["epoch"], 1);  // the position after the first epoch
  for (const auto& entry : fs::directory_iterator(run.result.runDir + "/checkpoints"))
    EXPECT_EQ(entry.path().filename().string().find(".tmp"), std::string::npos) << entry.path();
}

TEST(Trainer, KeepsEveryNthEpochCheckpointUpToALimit) {
  TempDir dir;
  const auto run = trainRun(
      configFor(testutil::writeTrainProject(
                    dir, {{"epochs", 5}, {"checkpoint_every", 1}, {"keep_checkpoints", 2}}),
                dir));
  ASSERT_EQ(run.result.state, FinishState::Completed) << run.result.reason;
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(run.result.runDir + "/checkpoints"))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"best.safetensors", "epoch-4.safetensors",
                                             "epoch-5.safetensors", "last.safetensors"}));
}

// Files planted in a received run folder under epoch checkpoint names neither end the run (a
// number past 64 bits) nor push the run's own checkpoints out (a number it has not reached).
TEST(Trainer, PlantedEpochCheckpointNamesAreLeftAlone) {
  TempDir dir;
  const std::string runDir = dir.file("run");
  fs::create_directories(runDir + "/checkpoints");
  for (const char* name : {"epoch-99999999999999999999.safetensors", "epoch-999.safetensors"})
    std::ofstream(runDir + "/checkpoints/" + name) << "planted";
  auto config =
      configFor(testutil::writeTrainProject(
                    dir, {{"epochs", 4}, {"checkpoint_every", 1}, {"keep_checkpoints", 2}}),
                dir);
  config.runDir = runDir;
  const auto run = trainRun(config);
  ASSERT_EQ(run.result.state, FinishState::Completed) << run.result.reason;
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(runDir + "/checkpoints"))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"best.safetensors", "epoch-3.safetensors",
                                             "epoch-4.safetensors", "epoch-999.safetensors",
                                             "epoch-99999999999999999999.safetensors",
                                             "last.safetensors"}));
}

// ReduceLROnPlateau: with a threshold no epoch can meet, every epoch after the first is a
// plateau and (patience 0) halves the LR; the state survives in the checkpoint.
TEST(Trainer, PlateauCutsTheLearningRate) {
  TempDir dir;
  const auto run = trainRun(configFor(
      testutil::writeTrainProject(
          dir,
          {{"epochs", 4},
           {"optimizer", Json{{"type", "sgd"}, {"lr", 0.01}, {"momentum", 0.0}}},
           {"schedule", Json{{"type", "constant"}}},
           {"plateau",
            Json{{"metric", "val_loss"}, {"factor", 0.5}, {"patience", 0}, {"threshold", 0.99}}}}),
      dir));
  ASSERT_EQ(run.result.state, FinishState::Completed) << run.result.reason;
  const auto epochs = run.recorder->ofType(EventType::EpochEnd);
  ASSERT_EQ(epochs.size(), 4u);
  EXPECT_DOUBLE_EQ(epochs[0].epoch.lr, 0.01);
  EXPECT_DOUBLE_EQ(epochs[1].epoch.lr, 0.01);
  EXPECT_DOUBLE_EQ(epochs[2].epoch.lr, 0.005);
  EXPECT_DOUBLE_EQ(epochs[3].epoch.lr, 0.0025);
  const auto meta = checkpoint::readCheckpoint(run.result.lastCheckpoint).meta;
  // The plateau's state under its own key of the loop object (callback.h: stateKey()).
  const auto& plateau = meta["loop"]["lr_plateau"];
  EXPECT_DOUBLE_EQ(plateau["factor"].get<double>(), 0.125);
  EXPECT_EQ(plateau["controller"]["has_best"], true);
  EXPECT_DOUBLE_EQ(plateau["controller"]["best"].get<double>(), epochs[0].epoch.validation.loss);
}

// Durability of the run folder: a second process that would write into the same run is refused
// with the holder's PID; the temporaries of killed checkpoint writes are cleared at start; a
// record that cannot be written (a full disk) stops the run with a checkpoint instead of going
// on with lines missing.
TEST(RunFolder, ASecondWriterIsRefusedWithTheHoldersPid) {
  TempDir dir;
  const std::string runDir = dir.file("run");
  fs::create_directories(runDir);
  RunFolderLock held(runDir);
  auto config = configFor(testutil::writeTrainProject(dir), dir);
  config.runDir = runDir;
  const auto run = trainRun(config);
  EXPECT_EQ(run.result.state, FinishState::Failed);
  EXPECT_NE(run.result.reason.find("the run is in use by process " + std::to_string(::getpid())),
            std::string::npos)
      << run.result.reason;
  EXPECT_FALSE(fs::exists(runDir + "/metrics.csv"));  // nothing written into it
}

TEST(RunFolder, TemporariesOfKilledCheckpointWritesAreRemoved) {
  TempDir dir;
  const std::string runDir = dir.file("run");
  fs::create_directories(runDir + "/checkpoints");
  std::ofstream(runDir + "/checkpoints/.last.safetensors.tmp-12345") << std::string(1000, 'x');
  std::ofstream(runDir + "/checkpoints/keep.txt") << "mine";
  auto config = configFor(testutil::writeTrainProject(dir, {{"epochs", 1}}), dir);
  config.runDir = runDir;
  const auto run = trainRun(config);
  ASSERT_EQ(run.result.state, FinishState::Completed) << run.result.reason;
  EXPECT_FALSE(fs::exists(runDir + "/checkpoints/.last.safetensors.tmp-12345"));
  EXPECT_TRUE(fs::exists(runDir + "/checkpoints/keep.txt"));
  EXPECT_NE(readTextFile(runDir + "/train.log").find("removed 1 unfinished checkpoint file"),
            std::string::npos);
}

TEST(RunFolder, ARecordThatCannotBeWrittenStopsTheRunWithACheckpoint) {
  TempDir dir;
  const std::string runDir = dir.file("run");
  fs::create_directories(runDir);
  // The disk is full from the fourth write of metrics.csv on (a link to /dev/full would be
  // refused: the writer does not follow links).
  setWriteFaultForTesting(runDir + "/metrics.csv", 3);
  auto config = configFor(testutil::writeTrainProject(dir, {{"epochs", 3}}), dir);
  config.runDir = runDir;
  const auto run = trainRun(config);
  setWriteFaultForTesting("", 0);
  EXPECT_EQ(run.result.state, FinishState::Failed);
  EXPECT_EQ(run.result.failure, TrainResult::Failure::Io);
  EXPECT_NE(run.result.reason.find("the run's records could not be written (" + runDir +
                                   "/metrics.csv: No space left on device)"),
            std::string::npos)
      << run.result.reason;
  EXPECT_LT(run.result.steps, 3 * 6);  // it stopped, not trained on without its records
  ASSERT_FALSE(run.result.lastCheckpoint.empty());
  EXPECT_EQ(checkpoint::readCheckpoint(run.result.lastCheckpoint).meta["step"], run.result.steps);
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
  ASSERT_EQ(run.result.state, FinishState::Completed) << run.result.reason;
  const auto& b = run.result.bench;
  // Every batch, warm-up included, went through the trainer's batch code: each published its
  // event and took its optimizer step (accumulation 1).
  const auto batches = run.recorder->ofType(EventType::BatchEnd);
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
