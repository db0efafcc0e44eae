// The process group behind the loop. A single process is a group of one: sums leave the values
// as they are, anyRank() is its own flag, a pause holds on the user's controls and a stop during
// it counts. Two ranks in one test process (two threads, Gloo over loopback, meeting in a file
// store): sums add both ranks' values and anyRank() hears either rank.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "data_fixtures.h"
#include "registries/registries.h"
#include "train/process_group.h"
#include "train/run_context.h"
#include "train/train_options.h"
#include "train/trainer.h"

using namespace netsmith;
using namespace netsmith::train;
using netsmith::testutil::TempDir;

namespace {

/// A RunContext of its own (the trainer's is made by Trainer::run), its log lines kept.
struct GroupContext {
  explicit GroupContext(TrainerConfig c = TrainerConfig()) : config(std::move(c)) {}
  std::vector<std::string> logLines() {
    std::lock_guard<std::mutex> lock(mutex);
    return lines;
  }

  TrainerConfig config = [] {
    TrainerConfig c;
    c.registries = ::netsmith::Registries::builtins();
    return c;
  }();
  RunControls controls;
  std::atomic<RunState> state{RunState::Running};
  std::mutex mutex;
  std::vector<std::string> lines;
  RunContext ctx{config,
                 controls,
                 state,
                 [this](run::TrainingEvent e) {
                   std::lock_guard<std::mutex> lock(mutex);
                   lines.push_back(e.message);
                 },
                 nullptr,
                 nullptr};
};

/// Resumes (or stops) the paused controls once the group says it is paused, after `holdMs`.
std::thread releaseWhenPaused(GroupContext& g, int holdMs, bool stop) {
  return std::thread([&g, holdMs, stop] {
    while (g.state.load() != RunState::Paused)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::this_thread::sleep_for(std::chrono::milliseconds(holdMs));
    {
      std::lock_guard<std::mutex> lock(g.controls.mutex);
      if (stop)
        g.controls.stopNow = true;
      else
        g.controls.paused = false;
    }
    g.controls.cv.notify_all();
  });
}

}  // namespace

TEST(ProcessGroup, ASingleProcessIsAGroupOfOne) {
  GroupContext g;
  TrainOptions options;
  torch::Device device(torch::kCPU);
  const auto group = makeProcessGroup(g.ctx, options, device);
  EXPECT_EQ(group->rank(), 0);
  EXPECT_EQ(group->worldSize(), 1);
  EXPECT_EQ(group->localProcesses(), 1);
  EXPECT_TRUE(group->stopsAlone());
  EXPECT_FALSE(group->crossProcessBatchNorm());
  std::vector<double> values{1.5, -2.0, 1e300, 0.0};
  group->sum(values, "the test's figures");
  EXPECT_EQ(values, (std::vector<double>{1.5, -2.0, 1e300, 0.0}));
  EXPECT_TRUE(group->anyRank(true, "a flag"));
  EXPECT_FALSE(group->anyRank(false, "a flag"));
  // No pause asked: no wait, and a stop is what the figures or the controls say.
  auto out = group->holdOrStop(false, false);
  EXPECT_FALSE(out.stop);
  EXPECT_EQ(out.pausedSeconds, 0.0);
  EXPECT_TRUE(group->holdOrStop(false, true).stop);
  g.controls.stopNow = true;
  EXPECT_TRUE(group->holdOrStop(false, false).stop);
  EXPECT_TRUE(g.logLines().empty());  // nothing to say without a pause
  EXPECT_EQ(device, torch::Device(torch::kCPU));
}

// Paused by the user: holdOrStop() waits until the resume, says so in the log, and reports the
// time paused; a stop pressed during the pause ends the wait and counts.
TEST(ProcessGroup, ASingleProcessHoldsWhilePausedAndHearsAStopDuringIt) {
  GroupContext g;
  TrainOptions options;
  torch::Device device(torch::kCPU);
  const auto group = makeProcessGroup(g.ctx, options, device);
  g.controls.paused = true;
  std::thread resumer = releaseWhenPaused(g, 100, /*stop=*/false);
  const auto out = group->holdOrStop(true, false);
  resumer.join();
  EXPECT_FALSE(out.stop);
  EXPECT_GE(out.pausedSeconds, 0.05);
  EXPECT_LT(out.pausedSeconds, 30.0);
  EXPECT_EQ(g.state.load(), RunState::Running);
  EXPECT_EQ(g.logLines(), (std::vector<std::string>{"paused", "resumed"}));

  g.controls.paused = true;
  std::thread stopper = releaseWhenPaused(g, 20, /*stop=*/true);
  const auto stopped = group->holdOrStop(true, false);
  stopper.join();
  EXPECT_TRUE(stopped.stop);
  EXPECT_GT(stopped.pausedSeconds, 0);
}

// Two ranks as two threads of this process: a data-parallel group each, meeting in a file in a
// temporary folder. Each rank's sum gets both ranks' values added.
TEST(ProcessGroup, TwoRanksSumTheirValues) {
  TempDir dir;
  std::vector<std::unique_ptr<GroupContext>> contexts;
  for (int rank = 0; rank < 2; ++rank) {
    TrainerConfig config;
    config.registries = ::netsmith::Registries::builtins();
    config.dist.rank = config.dist.localRank = rank;
    config.dist.worldSize = config.dist.localWorldSize = 2;
    config.dist.storeFile = dir.file("rendezvous");
    config.dist.launcher = "test";
    contexts.push_back(std::make_unique<GroupContext>(std::move(config)));
  }
  struct Seen {
    int rank = -1, worldSize = 0;
    bool stopsAlone = true;
    std::vector<double> sum;
    bool anyOne = false, anyNone = true;
    std::string error;
  };
  std::vector<Seen> seen(2);
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < 2; ++rank) {
    ranks.emplace_back([&, rank] {
      auto& s = seen[static_cast<std::size_t>(rank)];
      try {
        TrainOptions options;
        options.distBackend = "gloo";
        options.distTimeout = 30;
        torch::Device device(torch::kCPU);
        const auto group =
            makeProcessGroup(contexts[static_cast<std::size_t>(rank)]->ctx, options, device);
        s.rank = group->rank();
        s.worldSize = group->worldSize();
        s.stopsAlone = group->stopsAlone();
        s.sum =
            rank == 0 ? std::vector<double>{1.0, 2.5, -4.0} : std::vector<double>{10.0, 0.5, 4.0};
        group->sum(s.sum, "the test's figures");
        s.anyOne = group->anyRank(rank == 1, "rank 1's flag");
        s.anyNone = group->anyRank(false, "nobody's flag");
      } catch (const std::exception& e) {
        s.error = e.what();
      }
    });
  }
  for (auto& t : ranks)
    t.join();
  for (int rank = 0; rank < 2; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    const auto& s = seen[static_cast<std::size_t>(rank)];
    ASSERT_EQ(s.error, "");
    EXPECT_EQ(s.rank, rank);
    EXPECT_EQ(s.worldSize, 2);
    EXPECT_FALSE(s.stopsAlone);  // in a job, every rank finishes an evaluation
    EXPECT_EQ(s.sum, (std::vector<double>{11.0, 3.0, 0.0}));
    EXPECT_TRUE(s.anyOne);
    EXPECT_FALSE(s.anyNone);
    const auto lines = contexts[static_cast<std::size_t>(rank)]->logLines();
    ASSERT_FALSE(lines.empty());
    EXPECT_EQ(lines[0].rfind("distributed: world size 2, rank " + std::to_string(rank) +
                                 ", backend gloo, rendezvous file " + dir.file("rendezvous"),
                             0),
              0u)
        << lines[0];
  }
}
