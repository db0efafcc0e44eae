// The LR plan is the LR the run uses: `netsmith-cli lr-schedule --json` against the lr column
// of the same run's metrics.csv, optimizer step by optimizer step, for gradient accumulation,
// warmup, two processes and a stopped-then-resumed run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "../core/train_fixtures.h"
#include "cli_runner.h"
#include "common/file_util.h"
#include "common/json.h"

using netsmith::Json;
using netsmith::testutil::runCli;
using netsmith::testutil::TempDir;
namespace fs = std::filesystem;

namespace {

/// The project's only run folder under `runs`.
std::string onlyRun(const std::string& runs) {
  std::vector<fs::path> found;
  for (const auto& e : fs::directory_iterator(runs))
    found.push_back(e.path());
  EXPECT_EQ(found.size(), 1u);
  return found.empty() ? "" : found.front().string();
}

/// The LR of every optimizer step, as metrics.csv records it: a batch row whose step count
/// grew is the last batch of a step; its lr is that step's.
std::vector<std::string> lrPerStep(const std::string& runDir) {
  std::ifstream csv(runDir + "/metrics.csv");
  std::string line;
  std::getline(csv, line);  // header: kind,epoch,batch,step,loss,accuracy,lr,...
  std::vector<std::string> out;
  long long previous = 0;
  while (std::getline(csv, line)) {
    if (line.rfind("step,", 0) != 0) continue;
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');)
      cells.push_back(cell);
    const long long step = std::stoll(cells.at(3));
    if (step > previous) {
      EXPECT_EQ(step, previous + 1) << line;
      EXPECT_EQ(out.size(), std::size_t(step - 1));
      out.push_back(cells.at(6));
    }
    previous = step;
  }
  return out;
}

/// lr-schedule's plan, formatted as metrics.csv writes numbers (9 significant digits).
std::vector<std::string> plannedLr(const std::string& project, const std::string& flags,
                                   Json* plan = nullptr) {
  const auto r = runCli("lr-schedule " + project + " --json " + flags);
  EXPECT_EQ(r.exitCode, 0) << r.output;
  const Json j = Json::parse(r.output);
  if (plan) *plan = j;
  std::vector<std::string> out;
  for (const auto& v : j["lr"]) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", v.get<double>());
    out.push_back(buf);
  }
  return out;
}

/// 192 training samples (256 with a quarter for validation), batch 20: 10 batches per epoch.
std::string writeProject(const TempDir& dir, int accumulation) {
  return netsmith::testutil::writeTrainProject(
      dir, Json{{"epochs", 3},
                {"batch_size", 20},
                {"grad_accumulation", accumulation},
                {"optimizer", Json{{"type", "sgd"}, {"lr", 0.05}, {"momentum", 0.9}}},
                {"schedule", Json{{"type", "cosine"},
                                  {"min_lr", 0.001},
                                  {"warmup_epochs", 1},
                                  {"warmup_start_factor", 0.2}}}});
}

}  // namespace

class LrPlanEqualsRun : public ::testing::TestWithParam<int> {};

TEST_P(LrPlanEqualsRun, StepForStepWithWarmup) {
  const int accumulation = GetParam();
  TempDir dir;
  const auto project = writeProject(dir, accumulation);
  Json plan;
  const auto planned = plannedLr(project, "", &plan);
  // 10 batches per epoch; groups of `accumulation` (the last may be short).
  const int steps = (10 + accumulation - 1) / accumulation;
  EXPECT_EQ(plan["batches_per_epoch"], 10);
  EXPECT_EQ(plan["steps_per_epoch"], steps);
  ASSERT_EQ(planned.size(), std::size_t(3 * steps));
  const auto r = runCli("train " + project + " --out " + dir.file("runs"));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_EQ(lrPerStep(onlyRun(dir.file("runs"))), planned);
  // The warmup ramps over the first epoch's steps, so the plan is not flat there.
  EXPECT_NE(planned[0], planned[std::size_t(steps)]);
}

INSTANTIATE_TEST_SUITE_P(Accumulation, LrPlanEqualsRun, ::testing::Values(1, 2, 3));

TEST(LrPlan, TwoProcessesAndALimitPlanTheGlobalBatch) {
  TempDir dir;
  const auto project = writeProject(dir, 2);
  Json plan;
  const auto planned = plannedLr(project, "--nproc 2 --limit-train 150", &plan);
  EXPECT_EQ(plan["global_batch"], 40);
  EXPECT_EQ(plan["batches_per_epoch"], 4);  // 150 samples / 40
  EXPECT_EQ(plan["steps_per_epoch"], 2);
  const auto r =
      runCli("train " + project + " --nproc 2 --limit-train 150 --out " + dir.file("runs"));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_EQ(lrPerStep(onlyRun(dir.file("runs"))), planned);
}

TEST(LrPlan, AStoppedAndResumedRunFollowsThePlan) {
  TempDir dir;
  const auto project = writeProject(dir, 3);
  const auto planned = plannedLr(project, "");
  // Stop after 7 batches (the third group of the first epoch is incomplete, so the stop comes
  // at its end, batch 9), then resume from the checkpoint into the same folder.
  const auto first = runCli("train " + project + " --max-batches 7 --out " + dir.file("runs"));
  ASSERT_EQ(first.exitCode, 0) << first.output;
  const std::string runDir = onlyRun(dir.file("runs"));
  const auto steps = lrPerStep(runDir);
  ASSERT_GT(steps.size(), 0u);
  ASSERT_LT(steps.size(), planned.size());
  const auto second =
      runCli("train " + project + " --resume " + runDir + "/checkpoints/last.safetensors");
  ASSERT_EQ(second.exitCode, 0) << second.output;
  EXPECT_EQ(lrPerStep(runDir), planned);
}

TEST(LrPlan, AResumeWhoseRunWasSetUpDifferentlyIsRefusedWithTheDifferences) {
  TempDir dir;
  const auto project = writeProject(dir, 1);
  const auto first =
      runCli("train " + project + " --limit-train 150 --max-batches 3 --out " + dir.file("runs"));
  ASSERT_EQ(first.exitCode, 0) << first.output;
  const std::string ckpt = onlyRun(dir.file("runs")) + "/checkpoints/last.safetensors";
  const auto before = netsmith::readTextFile(onlyRun(dir.file("runs")) + "/metrics.csv");
  // A smaller limit: 100 samples make 5 batches an epoch, not 8.
  const auto r = runCli("train " + project + " --limit-train 100 --resume " + ckpt);
  EXPECT_EQ(r.exitCode, 2) << r.output;
  EXPECT_NE(r.output.find("train_samples: 150 in the checkpoint, 100 now"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("batches_per_epoch: 8 in the checkpoint, 5 now"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("--init-from " + ckpt), std::string::npos) << r.output;
  // Nothing was appended to the run.
  EXPECT_EQ(netsmith::readTextFile(onlyRun(dir.file("runs")) + "/metrics.csv"), before);
  // The same settings resume; more epochs are fine.
  const auto ok = runCli("train " + project + " --limit-train 150 --epochs 4 --resume " + ckpt);
  EXPECT_EQ(ok.exitCode, 0) << ok.output;
}

// Warmup reaches the base LR, and the schedule then runs over the remaining steps: the plan of
// 3 epochs x 10 steps with 1 epoch of warmup is PyTorch's LinearLR then CosineAnnealingLR over
// the other 20 steps (SequentialLR), step for step. (Before, the warmup multiplied a cosine of
// the whole run and peaked at 0.78x the base LR.)
TEST(LrPlan, WarmupReachesTheBaseLrAsInPyTorch) {
  if (std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "SKIPPED: /usr/bin/python3 has no torch";
  TempDir dir;
  const auto project = writeProject(dir, 2);  // 10 batches, 5 steps an epoch
  Json plan;
  const auto planned = plannedLr(project, "--steps-per-epoch 10", &plan);
  ASSERT_EQ(planned.size(), 30u);
  EXPECT_EQ(plan["first_step"], 1);
  std::ofstream(dir.file("lr.py")) << R"(import torch
p = torch.nn.Parameter(torch.zeros(1))
opt = torch.optim.SGD([p], lr=0.05, momentum=0.9)
S = torch.optim.lr_scheduler
warm = S.LinearLR(opt, start_factor=0.2, end_factor=1.0, total_iters=10)
cos = S.CosineAnnealingLR(opt, T_max=20, eta_min=0.001)
sched = S.SequentialLR(opt, [warm, cos], milestones=[10])
for _ in range(30):
    print(repr(opt.param_groups[0]["lr"]))
    opt.step()
    sched.step()
)";
  const auto py = netsmith::testutil::runShell("/usr/bin/python3 -W ignore " + dir.file("lr.py"));
  ASSERT_EQ(py.exitCode, 0) << py.output;
  std::istringstream lines(py.output);
  double peak = 0;
  for (std::size_t s = 0; s < planned.size(); ++s) {
    double expected = 0;
    ASSERT_TRUE(lines >> expected) << py.output;
    EXPECT_NEAR(std::stod(planned[s]), expected, 1e-8 + 1e-7 * expected) << "step " << s + 1;
    peak = std::max(peak, std::stod(planned[s]));
  }
  EXPECT_DOUBLE_EQ(peak, 0.05);  // the base LR, at step 11
  EXPECT_EQ(planned[10], "0.05");
}

// One numbering everywhere: every step row of metrics.csv joins lr-schedule's text output on
// `step` (steps from 1; the batches of an accumulation group share their step), and each
// epoch row's lr is its epoch's last step's.
TEST(LrPlan, MetricsAndThePlanJoinOnStep) {
  TempDir dir;
  const auto project = writeProject(dir, 3);  // 10 batches, 4 steps an epoch
  const auto text = runCli("lr-schedule " + project);
  ASSERT_EQ(text.exitCode, 0) << text.output;
  std::map<long long, double> planByStep;
  std::istringstream in(text.output);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    long long step = 0, epoch = 0;
    double lr = 0;
    std::istringstream row(line);
    ASSERT_TRUE(row >> step >> epoch >> lr) << line;
    planByStep[step] = lr;  // printed with 8 significant digits
  }
  ASSERT_EQ(planByStep.size(), 12u);
  EXPECT_EQ(planByStep.begin()->first, 1);
  const auto r = runCli("train " + project + " --out " + dir.file("runs"));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  std::ifstream csv(onlyRun(dir.file("runs")) + "/metrics.csv");
  std::string line;
  std::getline(csv, line);
  int joined = 0, epochs = 0;
  while (std::getline(csv, line)) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');)
      cells.push_back(cell);
    if (cells.at(0) == "step") {
      const auto it = planByStep.find(std::stoll(cells.at(3)));
      ASSERT_NE(it, planByStep.end()) << line;
      EXPECT_NEAR(std::stod(cells.at(6)), it->second, 1e-7 * it->second) << line;
      ++joined;
    } else if (cells.at(0) == "epoch") {
      ++epochs;
      // Steps 4, 8, 12 end the epochs (10 batches in groups of 3: the last group has one).
      EXPECT_NEAR(std::stod(cells.at(6)), planByStep.at(4LL * epochs),
                  1e-7 * planByStep.at(4LL * epochs))
          << line;
    }
  }
  EXPECT_EQ(joined, 30);  // every batch row
  EXPECT_EQ(epochs, 3);
}
