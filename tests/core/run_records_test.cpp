// The run folder read back (run/run_records.h): against the events a real run sent, while a
// run is being written (only what was appended is read), and from folders someone else made.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "common/file_util.h"
#include "project/project.h"
#include "registries/registries.h"
#include "run/run_records.h"
#include "run/run_writer.h"
#include "train/trainer.h"
#include "train_fixtures.h"

using namespace netsmith;
using namespace netsmith::train;
using netsmith::testutil::Recorder;
using netsmith::testutil::TempDir;
namespace fs = std::filesystem;

namespace {

/// The file's text printed as the writer prints numbers ("%.9g"), read back.
double asWritten(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return std::strtod(buf, nullptr);
}

run::TrainingEvent batchEvent(std::int64_t epoch, std::int64_t batch, std::int64_t step,
                              double loss) {
  run::TrainingEvent e;
  e.type = run::EventType::BatchEnd;
  e.batch.epoch = epoch;
  e.batch.batch = batch;
  e.batch.step = step;
  e.batch.loss = loss;
  e.batch.lr = 0.01;
  e.time = double(step);
  return e;
}

run::TrainingEvent epochEvent(std::int64_t epoch, double valAccuracy) {
  run::TrainingEvent e;
  e.type = run::EventType::EpochEnd;
  e.epoch.epoch = epoch;
  e.epoch.trainLoss = 1.0 / double(epoch + 1);
  e.epoch.hasValidation = true;
  e.epoch.validation.accuracy = valAccuracy;
  e.epoch.validation.figures["accuracy"] = valAccuracy;
  e.epoch.validation.loss = 0.5;
  return e;
}

}  // namespace

TEST(RunRecords, AReadRunHoldsWhatTheTrainerSent) {
  TempDir dir;
  auto loaded = project::loadProject(testutil::writeTrainProject(dir, Json{{"epochs", 2}}, 128));
  ASSERT_TRUE(loaded.problems.empty()) << formatProblems(loaded.problems);
  TrainerConfig config;
  config.registries = ::netsmith::Registries::builtins();
  config.project = loaded.project;
  config.baseDir = loaded.baseDir();
  config.runsRoot = dir.file("runs");
  auto recorder = std::make_shared<Recorder>();
  Trainer trainer(std::move(config));
  trainer.addSink(recorder);
  trainer.start();
  trainer.wait();
  const auto result = trainer.result();
  ASSERT_FALSE(result.runDir.empty());

  EXPECT_EQ(run::runFolders(dir.file("runs")), std::vector<std::string>{result.runDir});
  const run::RunRecord r = run::readRunRecord(result.runDir);
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.project, "blobs");
  const auto batches = recorder->ofType(run::EventType::BatchEnd);
  ASSERT_EQ(r.steps.size(), batches.size());
  ASSERT_FALSE(batches.empty());
  for (std::size_t i = 0; i < batches.size(); ++i) {
    EXPECT_EQ(r.steps[i].step, double(batches[i].batch.step));
    EXPECT_EQ(r.steps[i].epoch, batches[i].batch.epoch);
    EXPECT_EQ(r.steps[i].batch, batches[i].batch.batch);
    EXPECT_EQ(r.steps[i].loss, asWritten(batches[i].batch.loss)) << i;
    EXPECT_EQ(r.steps[i].lr, asWritten(batches[i].batch.lr)) << i;
  }
  const auto epochs = recorder->ofType(run::EventType::EpochEnd);
  ASSERT_EQ(r.epochs.size(), 2u);
  ASSERT_EQ(r.epochEvents.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(r.epochs[i].epoch, std::int64_t(i));
    EXPECT_EQ(r.epochs[i].valFigure, asWritten(epochs[i].epoch.validation.accuracy));
    EXPECT_EQ(r.epochEvents[i]["validation"]["accuracy"].get<double>(),
              epochs[i].epoch.validation.accuracy);
  }
  // The epoch row sits after its last step.
  EXPECT_EQ(r.epochs[1].lastStep, r.steps.back().step);
  const auto finished = recorder->ofType(run::EventType::Finished);
  ASSERT_EQ(finished.size(), 1u);
  EXPECT_EQ(r.finishState, "completed");
  EXPECT_EQ(r.durationSeconds, finished[0].time);
  ASSERT_TRUE(finished[0].hasTest);
  EXPECT_EQ(r.testFigure(), finished[0].test.accuracy);
  EXPECT_EQ(r.testSamples, 32);
  EXPECT_EQ(r.device.rfind("cpu", 0), 0u) << r.device;
  EXPECT_NE(std::find(r.checkpoints.begin(), r.checkpoints.end(), "last.safetensors"),
            r.checkpoints.end());
}

TEST(RunRecords, FollowingARunReadsOnlyWhatWasAppended) {
  TempDir dir;
  const std::string run = dir.file("run");
  fs::create_directories(run);
  run::RunRecordReader reader(run);
  reader.update();
  EXPECT_NE(reader.record().error.find("metrics.csv: cannot open"), std::string::npos)
      << reader.record().error;
  auto writer = std::make_unique<run::RunWriter>(run, "accuracy");
  EXPECT_TRUE(reader.update());
  EXPECT_EQ(reader.record().error, "");
  EXPECT_TRUE(reader.record().steps.empty());
  // Step rows reach the file when the writer flushes (at an epoch's end at the latest).
  writer->onEvent(batchEvent(0, 0, 1, 2.5));
  writer->onEvent(batchEvent(0, 1, 2, 2.0));
  writer->onEvent(epochEvent(0, 0.75));
  EXPECT_TRUE(reader.update());
  ASSERT_EQ(reader.record().steps.size(), 2u);
  ASSERT_EQ(reader.record().epochs.size(), 1u);
  EXPECT_EQ(reader.record().epochs[0].valFigure, 0.75);
  EXPECT_EQ(reader.record().epochs[0].lastStep, 2.0);
  ASSERT_EQ(reader.record().epochEvents.size(), 1u);
  EXPECT_FALSE(reader.update());  // nothing new
  // A row still being written stays for the next update.
  {
    std::ofstream csv(fs::path(run) / "metrics.csv", std::ios::app);
    csv << "step,1,0,3,1.2";
  }
  EXPECT_FALSE(reader.update());
  EXPECT_EQ(reader.record().steps.size(), 2u);
  {
    std::ofstream csv(fs::path(run) / "metrics.csv", std::ios::app);
    csv << ",,0.01,,,,,,,4\n";
  }
  EXPECT_TRUE(reader.update());
  ASSERT_EQ(reader.record().steps.size(), 3u);
  EXPECT_EQ(reader.record().steps[2].loss, 1.2);
  EXPECT_EQ(reader.record().steps[2].seconds, 4.0);
  // A budget smaller than what is new: read in turns, the same result.
  for (int k = 0; k < 2000; ++k)
    writer->onEvent(batchEvent(1, k + 1, k + 4, 1.0));
  writer->onEvent(epochEvent(1, 0.8));
  reader.update(4096);
  EXPECT_FALSE(reader.caughtUp());
  int turns = 1;
  while (!reader.caughtUp()) {
    reader.update(4096);
    ++turns;
  }
  EXPECT_GT(turns, 10);
  EXPECT_EQ(reader.record().steps.size(), 2003u);
  EXPECT_EQ(reader.record().epochs.size(), 2u);
  // A replaced (shorter) file is read again from its start.
  writer.reset();
  fs::remove(fs::path(run) / "metrics.csv");
  fs::remove(fs::path(run) / "events.jsonl");
  writer = std::make_unique<run::RunWriter>(run, "accuracy");
  writer->onEvent(batchEvent(0, 0, 1, 9.0));
  writer.reset();  // flushed and closed
  reader.update();
  ASSERT_EQ(reader.record().steps.size(), 1u);
  EXPECT_EQ(reader.record().steps[0].loss, 9.0);
  EXPECT_TRUE(reader.record().epochs.empty());
  EXPECT_TRUE(reader.record().epochEvents.empty());
}

TEST(RunRecords, FoldersFromElsewhereAreBoundedAndNamed) {
  TempDir dir;
  const fs::path run = dir.path() / "run";
  fs::create_directories(run);
  // Not a metrics file.
  std::ofstream(run / "metrics.csv") << "a,b,c\n1,2,3\n";
  auto r = run::readRunRecord(run.string());
  EXPECT_EQ(r.error, (run / "metrics.csv").string() + ":1: not a Netsmith metrics file");
  // A row with a field missing: named by its line; the rows before it are kept.
  std::ofstream(run / "metrics.csv")
      << "kind,epoch,batch,step,loss,accuracy,lr,grad_norm,images_per_second,memory_kind,"
         "memory_bytes,val_loss,val_accuracy,seconds\n"
         "step,0,0,1,2.5,,0.01,,,,,,,0.1\n"
         "step,0,1\n";
  r = run::readRunRecord(run.string());
  EXPECT_EQ(r.error, (run / "metrics.csv").string() + ":3: expected 14 fields, found 3");
  EXPECT_EQ(r.steps.size(), 1u);
  // An events line of 2 MiB is skipped whole; the lines around it are read.
  {
    std::ofstream ev(run / "events.jsonl");
    ev << R"({"event":"log","message":"device cpu, 1 compute thread"})"
       << "\n"
       << "{\"event\":\"epoch_end\",\"x\":\"" << std::string(2 << 20, 'a') << "\"}\n"
       << R"({"event":"finished","state":"stopped","time":3})"
       << "\n";
  }
  r = run::readRunRecord(run.string());
  EXPECT_EQ(r.device, "cpu, 1 compute thread");
  EXPECT_TRUE(r.epochEvents.empty());
  EXPECT_EQ(r.finishState, "stopped");
  // A FIFO and a device where the records are: not read, not waited on.
  const fs::path other = dir.path() / "other";
  fs::create_directories(other);
  ASSERT_EQ(::mkfifo((other / "metrics.csv").c_str(), 0644), 0);
  fs::create_symlink("/dev/zero", other / "events.jsonl");
  const auto start = std::chrono::steady_clock::now();
  r = run::readRunRecord(other.string());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_NE(r.error.find("metrics.csv: is a FIFO"), std::string::npos) << r.error;
  // A link among the runs is not listed as one.
  fs::create_directories(dir.path() / "runs");
  fs::create_directory_symlink(run, dir.path() / "runs" / "linked");
  EXPECT_TRUE(run::runFolders((dir.path() / "runs").string()).empty());
}
