// Bad input to the trainer: each a clear error, before or during training, nothing
// half-written.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <string>

#include "checkpoint/checkpoint.h"
#include "common/file_util.h"
#include "train/lr_schedule.h"
#include "train/train_options.h"
#include "train/trainer.h"
#include "trainer_fixtures.h"

using namespace netsmith;
using namespace netsmith::train;
using netsmith::testutil::configFor;
using netsmith::testutil::setNodeParam;
using netsmith::testutil::TempDir;
using netsmith::testutil::trainRun;
namespace fs = std::filesystem;

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
  EXPECT_EQ(run.result.state, run::FinishState::Failed);
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
  EXPECT_EQ(run.result.state, run::FinishState::Failed);
  EXPECT_NE(run.result.reason.find("train.device is \"cuda:0\""), std::string::npos)
      << run.result.reason;
}

TEST(TrainerErrors, ResumeFromAnotherModelOrACorruptFile) {
  TempDir dir;
  const auto path = testutil::writeTrainProject(dir, {{"epochs", 1}});
  const auto first = trainRun(configFor(path, dir));
  ASSERT_EQ(first.result.state, run::FinishState::Completed);

  auto other = configFor(path, dir);
  setNodeParam(other, "conv", "out_channels", 16);
  other.resumePath = first.result.lastCheckpoint;
  const auto a = trainRun(other);
  EXPECT_EQ(a.result.state, run::FinishState::Failed);
  EXPECT_NE(a.result.reason.find("a checkpoint of another model"), std::string::npos)
      << a.result.reason;

  std::string bytes = readTextFile(first.result.lastCheckpoint);
  writeFileAtomically(dir.file("cut.safetensors"), bytes.substr(0, bytes.size() / 2));
  auto cut = configFor(path, dir);
  cut.resumePath = dir.file("cut.safetensors");
  const auto b = trainRun(cut);
  EXPECT_EQ(b.result.state, run::FinishState::Failed);
  EXPECT_NE(b.result.reason.find("cut.safetensors"), std::string::npos) << b.result.reason;

  writeFileAtomically(dir.file("junk.safetensors"), "this is not a checkpoint at all");
  auto junk = configFor(path, dir);
  junk.resumePath = dir.file("junk.safetensors");
  const auto c = trainRun(junk);
  EXPECT_EQ(c.result.state, run::FinishState::Failed);
  EXPECT_NE(c.result.reason.find("junk.safetensors"), std::string::npos) << c.result.reason;

  // The finished run cannot be resumed without more epochs.
  auto done = configFor(path, dir);
  done.resumePath = first.result.lastCheckpoint;
  const auto d = trainRun(done);
  EXPECT_EQ(d.result.state, run::FinishState::Failed);
  EXPECT_NE(d.result.reason.find("raise --epochs"), std::string::npos) << d.result.reason;
}

TEST(TrainerErrors, OutputFolderNotWritable) {
  TempDir dir;
  auto config = configFor(testutil::writeTrainProject(dir), dir);
  writeFileAtomically(dir.file("a-file"), "x");
  config.runsRoot = dir.file("a-file") + "/runs";
  const auto run = trainRun(config);
  EXPECT_EQ(run.result.state, run::FinishState::Failed);
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
  EXPECT_EQ(run.result.state, run::FinishState::Failed);
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
