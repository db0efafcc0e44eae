// The trainer's events and controls on a real run: events in order past a slow sink, pause,
// resume and stop within a batch, throughput that leaves a pause out, and a stop after the
// epoch with its validation.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "checkpoint/checkpoint.h"
#include "train/trainer.h"
#include "trainer_fixtures.h"

using namespace netsmith;
using namespace netsmith::train;
using netsmith::testutil::configFor;
using netsmith::testutil::Recorder;
using netsmith::testutil::TempDir;

namespace {

// Sinks receive events on their own thread, in order: once the "paused" log line has arrived,
// so has every batch event sent before the pause, and the batch count is final.
void waitForThePausedLine(const Recorder& recorder) {
  const auto pausedLogged = [&] {
    for (const auto& e : recorder.ofType(run::EventType::Log))
      if (e.message == "paused") return true;
    return false;
  };
  while (!pausedLogged())
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
}

}  // namespace

// Events arrive in order, and a sink that takes 100 ms an event does not hold the trainer up:
// the run finishes while that sink is still far behind.
TEST(Trainer, EventsInOrderAndASlowSinkNeverBlocksTraining) {
  class SlowSink : public run::EventSink {
   public:
    std::atomic<int> seen{0};
    void onEvent(const run::TrainingEvent&) override {
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
  EXPECT_EQ(events.back().type, run::EventType::Finished);
  std::int64_t lastStep = 0, epochsEnded = 0;
  bool started = false;
  for (const auto& e : events) {
    if (e.type == run::EventType::Started) started = true;
    if (e.type == run::EventType::BatchEnd) {
      EXPECT_TRUE(started);
      EXPECT_EQ(e.batch.step, lastStep + 1);
      EXPECT_EQ(e.batch.epoch, epochsEnded);
      EXPECT_GT(e.batch.memory.bytes, 0);
      EXPECT_EQ(e.batch.memory.kind, "process_rss");
      EXPECT_TRUE(std::isfinite(e.batch.gradNorm));
      lastStep = e.batch.step;
    }
    if (e.type == run::EventType::EpochEnd) {
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
  while (recorder->ofType(run::EventType::BatchEnd).size() < 3)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  trainer.pause();
  waitForThePausedLine(*recorder);
  EXPECT_EQ(trainer.state(), RunState::Paused);
  const auto pausedAt = recorder->ofType(run::EventType::BatchEnd).size();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(recorder->ofType(run::EventType::BatchEnd).size(), pausedAt);
  trainer.resume();
  while (recorder->ofType(run::EventType::BatchEnd).size() < pausedAt + 2)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  trainer.stop();
  trainer.wait();
  const auto result = trainer.result();
  EXPECT_EQ(result.state, run::FinishState::Stopped);
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
  while (recorder->ofType(run::EventType::BatchEnd).size() < 12)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  trainer.pause();
  waitForThePausedLine(*recorder);
  const auto before = recorder->ofType(run::EventType::BatchEnd);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  trainer.resume();
  while (recorder->ofType(run::EventType::BatchEnd).size() < before.size() + 3)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  trainer.stop();
  trainer.wait();
  const auto all = recorder->ofType(run::EventType::BatchEnd);
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

TEST(Trainer, StopAfterEpochFinishesTheEpochWithValidation) {
  TempDir dir;
  auto config = configFor(testutil::writeTrainProject(dir, {{"epochs", 50}}), dir);
  Trainer trainer(config);
  struct StopOnFirstBatch : run::EventSink {
    Trainer* t = nullptr;
    void onEvent(const run::TrainingEvent& e) override {
      if (e.type == run::EventType::BatchEnd) t->stopAfterEpoch();
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
  EXPECT_EQ(result.state, run::FinishState::Stopped);
  const auto epochs = recorder->ofType(run::EventType::EpochEnd);
  ASSERT_GE(epochs.size(), 1u);
  EXPECT_LT(epochs.size(), 50u);
  EXPECT_TRUE(epochs.back().epoch.hasValidation);
  EXPECT_EQ(checkpoint::readCheckpoint(result.lastCheckpoint).meta["loop"]["next_batch"], 0);
}
