// The run folder a training writes: epoch checkpoints kept up to a limit (planted names left
// alone), the folder's lock, the temporaries of killed writes cleared, and a record that cannot
// be written stopping the run.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "checkpoint/checkpoint.h"
#include "common/file_util.h"
#include "run/run_layout.h"
#include "run/run_records.h"
#include "run/run_writer.h"
#include "train/trainer.h"
#include "trainer_fixtures.h"

using namespace netsmith;
using namespace netsmith::train;
using netsmith::testutil::configFor;
using netsmith::testutil::TempDir;
using netsmith::testutil::trainRun;
namespace fs = std::filesystem;

TEST(Trainer, KeepsEveryNthEpochCheckpointUpToALimit) {
  TempDir dir;
  const auto run = trainRun(
      configFor(testutil::writeTrainProject(
                    dir, {{"epochs", 5}, {"checkpoint_every", 1}, {"keep_checkpoints", 2}}),
                dir));
  ASSERT_EQ(run.result.state, run::FinishState::Completed) << run.result.reason;
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
  ASSERT_EQ(run.result.state, run::FinishState::Completed) << run.result.reason;
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(runDir + "/checkpoints"))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"best.safetensors", "epoch-3.safetensors",
                                             "epoch-4.safetensors", "epoch-999.safetensors",
                                             "epoch-99999999999999999999.safetensors",
                                             "last.safetensors"}));
}

// Durability of the run folder: a second process that would write into the same run is refused
// with the holder's PID; the temporaries of killed checkpoint writes are cleared at start; a
// record that cannot be written (a full disk) stops the run with a checkpoint instead of going
// on with lines missing.
TEST(RunFolder, ASecondWriterIsRefusedWithTheHoldersPid) {
  TempDir dir;
  const std::string runDir = dir.file("run");
  fs::create_directories(runDir);
  run::RunFolderLock held(runDir);
  auto config = configFor(testutil::writeTrainProject(dir), dir);
  config.runDir = runDir;
  const auto run = trainRun(config);
  EXPECT_EQ(run.result.state, run::FinishState::Failed);
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
  ASSERT_EQ(run.result.state, run::FinishState::Completed) << run.result.reason;
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
  EXPECT_EQ(run.result.state, run::FinishState::Failed);
  EXPECT_EQ(run.result.failure, TrainResult::Failure::Io);
  EXPECT_NE(run.result.reason.find("the run's records could not be written (" + runDir +
                                   "/metrics.csv: No space left on device)"),
            std::string::npos)
      << run.result.reason;
  EXPECT_LT(run.result.steps, 3 * 6);  // it stopped, not trained on without its records
  ASSERT_FALSE(run.result.lastCheckpoint.empty());
  EXPECT_EQ(checkpoint::readCheckpoint(run.result.lastCheckpoint).meta["step"], run.result.steps);
}

// The layout is known in one place: a run of a project whose name is not a file name is found
// by the studio's "latest checkpoint" as the writer named it, and by the readers; a link in
// place of a run folder is neither a run nor searched.
TEST(RunFolder, TheLayoutFindsWhatTheWriterMade) {
  TempDir dir;
  auto config = configFor(testutil::writeTrainProject(dir, Json{{"epochs", 1}}, 64), dir);
  config.project.name = "blob study: v2";
  const auto run = trainRun(config);
  ASSERT_EQ(run.result.state, run::FinishState::Completed) << run.result.reason;
  const std::string runDir = run.result.runDir;
  EXPECT_EQ(
      fs::path(runDir).filename().string().rfind(run_layout::runNamePrefix("blob study: v2"), 0),
      0u)
      << runDir;
  EXPECT_TRUE(run_layout::isRunFolder(runDir));
  EXPECT_EQ(run::runFolders(dir.file("runs")), std::vector<std::string>{runDir});
  const std::string best = run_layout::checkpointIn(runDir, run_layout::kBest);
  ASSERT_TRUE(fs::is_regular_file(best));
  EXPECT_EQ(run_layout::latestCheckpoint(dir.file("runs"), "blob study: v2", false),
            fs::absolute(best).lexically_normal().string());
  EXPECT_EQ(run_layout::latestCheckpoint(dir.file("runs"), "blob study: v2", true),
            fs::absolute(run_layout::checkpointIn(runDir, run_layout::kLast))
                .lexically_normal()
                .string());
  EXPECT_EQ(run_layout::latestCheckpoint(dir.file("runs"), "another project", false), "");
  EXPECT_EQ(run_layout::runOfCheckpoint(best), runDir);
  EXPECT_EQ(run::resumeRunFolder(best), fs::absolute(runDir).lexically_normal().string());
  EXPECT_EQ(run_layout::runOfCheckpoint(dir.file("model.safetensors")), "");

  // A newer "run" that is a link to the real one: not a run, not searched.
  const std::string planted =
      dir.file("runs/" + run_layout::runNamePrefix("blob study: v2") + "99999999-999999");
  fs::create_directory_symlink(runDir, planted);
  EXPECT_FALSE(run_layout::isRunFolder(planted));
  EXPECT_EQ(run::runFolders(dir.file("runs")), std::vector<std::string>{runDir});
  EXPECT_EQ(run_layout::latestCheckpoint(dir.file("runs"), "blob study: v2", false),
            fs::absolute(best).lexically_normal().string());
}
