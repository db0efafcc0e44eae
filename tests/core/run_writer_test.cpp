// run::RunWriter on its own, fed events by hand in a real folder: metrics.csv, events.jsonl and
// train.log read back and checked against the events (the CSV split here, the expected cells
// written out by hand); a resumed writer appends; a failed write is reported, and a folder it
// cannot write is refused by name. The run folder's lock: held, refused with the holder's PID,
// released.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/file_util.h"
#include "common/json.h"
#include "netsmith/version.h"
#include "run/events.h"
#include "run/run_records.h"
#include "run/run_writer.h"
#include "train_fixtures.h"

using namespace netsmith;
using namespace netsmith::train;
using netsmith::testutil::TempDir;
namespace fs = std::filesystem;

namespace {

/// A CSV line's cells, empty ones included ("a,,b," is 4 cells).
std::vector<std::string> splitCsvLine(const std::string& line) {
  std::vector<std::string> cells(1);
  for (const char c : line) {
    if (c == ',')
      cells.emplace_back();
    else
      cells.back() += c;
  }
  return cells;
}

std::vector<std::string> linesOfFile(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  std::string line;
  while (std::getline(in, line))
    out.push_back(line);
  return out;
}

/// train.log's lines as "LEVEL TEXT", the timestamp checked and left out.
std::vector<std::string> logLinesWithoutTime(const std::string& path) {
  static const std::regex line(R"(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3} (.*))");
  std::vector<std::string> out;
  for (const auto& text : linesOfFile(path)) {
    std::smatch m;
    if (std::regex_match(text, m, line))
      out.push_back(m[1]);
    else
      out.push_back("no timestamp: " + text);
  }
  return out;
}

run::TrainingEvent writerStep(std::int64_t epoch, std::int64_t batch, std::int64_t step,
                              double loss, double time) {
  run::TrainingEvent e;
  e.type = run::EventType::BatchEnd;
  e.time = time;
  e.batch.epoch = epoch;
  e.batch.batch = batch;
  e.batch.step = step;
  e.batch.loss = loss;
  e.batch.headline = "accuracy";
  e.batch.headlineValue = 0.25;
  e.batch.lr = 0.01;
  e.batch.gradNorm = 1.5;
  e.batch.imagesPerSecond = 1234.5;
  e.batch.memory.bytes = 1048576;
  return e;
}

run::TrainingEvent writerMessage(run::EventType type, const std::string& message,
                                 const std::string& level = "info") {
  run::TrainingEvent e;
  e.type = type;
  e.message = message;
  e.level = level;
  return e;
}

run::TrainingEvent writerFinished(const std::string& reason) {
  run::TrainingEvent e = writerMessage(run::EventType::Finished, reason);
  e.state = run::FinishState::Completed;
  return e;
}

/// Turns the write fault off however the test ends.
struct WriteFaultOff {
  ~WriteFaultOff() { setWriteFaultForTesting("", 0); }
};

}  // namespace

TEST(RunWriter, TheRecordsHoldWhatTheEventsSaid) {
  TempDir dir;
  const std::string run = dir.file("run");
  fs::create_directories(run);
  std::vector<run::TrainingEvent> sent;
  run::TrainingEvent started = writerMessage(run::EventType::Started, "blobs: 2 epochs");
  started.path = run;
  sent.push_back(started);
  sent.push_back(writerStep(0, 0, 1, 2.5, 0.5));
  run::TrainingEvent second = writerStep(0, 1, 2, 2.25, 0.75);
  second.batch.headlineValue = std::nan("");  // a missing figure: an empty cell, null in JSON
  second.batch.gradNorm = std::numeric_limits<double>::infinity();
  second.batch.memory.kind = "cuda_allocator";
  second.batch.memory.bytes = 2048;
  sent.push_back(second);
  sent.push_back(writerMessage(run::EventType::Log, "a detail", "debug"));
  run::TrainingEvent epoch0;
  epoch0.type = run::EventType::EpochEnd;
  epoch0.time = 4;
  epoch0.epoch.epoch = 0;
  epoch0.epoch.epochs = 2;
  epoch0.epoch.trainLoss = 2.375;
  epoch0.epoch.trainAccuracy = 0.375;
  epoch0.epoch.trainFigures["accuracy"] = 0.375;
  epoch0.epoch.lr = 0.01;
  epoch0.epoch.seconds = 3.5;
  epoch0.epoch.hasValidation = true;
  epoch0.epoch.validation.loss = 1.75;
  epoch0.epoch.validation.accuracy = 0.5;
  epoch0.epoch.validation.figures["accuracy"] = 0.5;
  sent.push_back(epoch0);
  run::TrainingEvent checkpoint;
  checkpoint.type = run::EventType::Checkpoint;
  checkpoint.path = run + "/checkpoints/best.safetensors";
  checkpoint.tag = "best";
  sent.push_back(checkpoint);
  sent.push_back(writerMessage(run::EventType::Warning, "training is diverging", "warning"));
  run::TrainingEvent third = writerStep(1, 0, 3, 1.125, 5);
  third.batch.lr = 0.005;
  sent.push_back(third);
  run::TrainingEvent epoch1;
  epoch1.type = run::EventType::EpochEnd;
  epoch1.epoch.epoch = 1;
  epoch1.epoch.epochs = 2;
  epoch1.epoch.trainLoss = 1.125;
  epoch1.epoch.trainAccuracy = 0.5;
  epoch1.epoch.trainFigures["accuracy"] = 0.5;
  epoch1.epoch.lr = 0.005;
  epoch1.epoch.seconds = 1.5;
  sent.push_back(epoch1);
  sent.push_back(writerMessage(run::EventType::Log, "plain message"));
  run::TrainingEvent finished = writerFinished("2 epochs");
  finished.path = run;
  sent.push_back(finished);
  {
    run::RunWriter writer(run, "accuracy");
    for (const auto& e : sent)
      writer.onEvent(e);
    EXPECT_EQ(writer.failure(), "");
  }

  // metrics.csv: the header, a row per step, a row per epoch, 14 cells each.
  const auto csv = linesOfFile(run + "/metrics.csv");
  std::vector<std::vector<std::string>> rows;
  for (const auto& line : csv)
    rows.push_back(splitCsvLine(line));
  const std::vector<std::vector<std::string>> expected = {
      {"kind", "epoch", "batch", "step", "loss", "accuracy", "lr", "grad_norm", "images_per_second",
       "memory_kind", "memory_bytes", "val_loss", "val_accuracy", "seconds"},
      {"step", "0", "0", "1", "2.5", "0.25", "0.01", "1.5", "1234.5", "process_rss", "1048576", "",
       "", "0.5"},
      {"step", "0", "1", "2", "2.25", "", "0.01", "", "1234.5", "cuda_allocator", "2048", "", "",
       "0.75"},
      {"epoch", "0", "", "", "2.375", "0.375", "0.01", "", "", "", "", "1.75", "0.5", "3.5"},
      {"step", "1", "0", "3", "1.125", "0.25", "0.005", "1.5", "1234.5", "process_rss", "1048576",
       "", "", "5"},
      {"epoch", "1", "", "", "1.125", "0.5", "0.005", "", "", "", "", "", "", "1.5"},
  };
  EXPECT_EQ(rows, expected);

  // events.jsonl: one line per event, each the event's JSON.
  const auto jsonl = linesOfFile(run + "/events.jsonl");
  ASSERT_EQ(jsonl.size(), sent.size());
  std::vector<std::string> kinds;
  for (std::size_t i = 0; i < jsonl.size(); ++i) {
    const Json j = Json::parse(jsonl[i]);
    kinds.push_back(j.at("event").get<std::string>());
    EXPECT_EQ(j, sent[i].toJson()) << jsonl[i];
  }
  EXPECT_EQ(kinds, (std::vector<std::string>{"started", "batch_end", "batch_end", "log",
                                             "epoch_end", "checkpoint", "warning", "batch_end",
                                             "epoch_end", "log", "finished"}));
  const Json secondLine = Json::parse(jsonl[2]);
  EXPECT_TRUE(secondLine.at("accuracy").is_null());
  EXPECT_TRUE(secondLine.at("grad_norm").is_null());
  EXPECT_EQ(secondLine.at("step"), 2);
  EXPECT_EQ(secondLine.at("memory").at("kind"), "cuda_allocator");
  EXPECT_EQ(Json::parse(jsonl[3]).at("level"), "debug");  // in the events, not in the log

  // train.log: the started, epoch, checkpoint, warning, log and finish lines; no debug line.
  EXPECT_EQ(
      logLinesWithoutTime(run + "/train.log"),
      (std::vector<std::string>{
          "info Netsmith " + std::string(NETSMITH_VERSION) + ": run started in " + run +
              ": blobs: 2 epochs",
          "info epoch 1/2: train loss 2.3750 accuracy 37.50% | validation loss 1.7500 accuracy "
          "50.00% | 3.5 s",
          "info checkpoint best written: " + run + "/checkpoints/best.safetensors",
          "warning training is diverging",
          "info epoch 2/2: train loss 1.1250 accuracy 50.00% | 1.5 s",
          "info plain message",
          "info run completed: 2 epochs",
      }));
}

// A task whose headline is not accuracy (regression's mae): metrics.csv's figure columns carry
// its name and its values, events.jsonl names it, and the run records read it back by that name.
TEST(RunWriter, TheFigureColumnsAreTheTasksHeadline) {
  TempDir dir;
  const std::string run = dir.file("run");
  fs::create_directories(run);
  {
    run::RunWriter writer(run, "mae");
    run::TrainingEvent step = writerStep(0, 0, 1, 0.5, 0.25);
    step.batch.headline = "mae";
    step.batch.headlineValue = 0.125;
    step.batch.epochHeadlineValue = 0.125;
    writer.onEvent(step);
    run::TrainingEvent epoch;
    epoch.type = run::EventType::EpochEnd;
    epoch.epoch.epochs = 1;
    epoch.epoch.trainLoss = 0.5;
    epoch.epoch.trainAccuracy = std::nan("");
    epoch.epoch.trainFigures = {{"mae", 0.25}, {"rmse", 0.5}};
    epoch.epoch.hasValidation = true;
    epoch.epoch.validation.loss = 0.75;
    epoch.epoch.validation.accuracy = std::nan("");
    epoch.epoch.validation.figures = {{"mae", 0.375}, {"rmse", 0.625}};
    writer.onEvent(epoch);
    run::TrainingEvent finished = writerFinished("1 epoch");
    finished.hasTest = true;
    finished.test.samples = 8;
    finished.test.figures = {{"mae", 0.4375}, {"rmse", 0.5}};
    writer.onEvent(finished);
  }
  const auto csv = linesOfFile(run + "/metrics.csv");
  ASSERT_EQ(csv.size(), 3u);
  EXPECT_EQ(splitCsvLine(csv[0]),
            (std::vector<std::string>{"kind", "epoch", "batch", "step", "loss", "mae", "lr",
                                      "grad_norm", "images_per_second", "memory_kind",
                                      "memory_bytes", "val_loss", "val_mae", "seconds"}));
  EXPECT_EQ(splitCsvLine(csv[1])[5], "0.125");
  EXPECT_EQ(splitCsvLine(csv[2])[5], "0.25");
  EXPECT_EQ(splitCsvLine(csv[2])[12], "0.375");
  const Json batch = Json::parse(linesOfFile(run + "/events.jsonl").front());
  EXPECT_EQ(batch.at("mae"), 0.125);
  EXPECT_EQ(batch.at("epoch_mae"), 0.125);
  EXPECT_FALSE(batch.contains("accuracy"));

  run::RunRecordReader reader(run);
  reader.update();
  const auto& r = reader.record();
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.headline, "mae");
  ASSERT_EQ(r.epochs.size(), 1u);
  EXPECT_EQ(r.epochs[0].trainFigure, 0.25);
  EXPECT_EQ(r.epochs[0].valFigure, 0.375);
  EXPECT_EQ(r.testFigure(), 0.4375);
}

// A resumed run's writer appends to the same files: one header, the rows of both sessions.
TEST(RunWriter, AResumedWriterAppendsUnderTheSameHeader) {
  TempDir dir;
  const std::string run = dir.file("run");
  fs::create_directories(run);
  {
    run::RunWriter first(run, "accuracy");
    first.onEvent(writerStep(0, 0, 1, 2.5, 0.5));
    first.onEvent(writerStep(0, 1, 2, 2.0, 1.0));
    first.onEvent(writerFinished("stopped by the user"));
  }
  {
    run::RunWriter second(run, "accuracy");
    second.onEvent(writerStep(0, 2, 3, 1.5, 0.25));
    second.onEvent(writerFinished("done"));
  }
  const auto csv = linesOfFile(run + "/metrics.csv");
  ASSERT_EQ(csv.size(), 4u);
  EXPECT_EQ(csv[0].rfind("kind,epoch,batch,step,", 0), 0u) << csv[0];
  std::vector<std::string> steps;
  for (std::size_t i = 1; i < csv.size(); ++i) {
    const auto cells = splitCsvLine(csv[i]);
    ASSERT_EQ(cells.size(), 14u) << csv[i];
    EXPECT_EQ(cells[0], "step");
    steps.push_back(cells[3] + ":" + cells[4]);
  }
  EXPECT_EQ(steps, (std::vector<std::string>{"1:2.5", "2:2", "3:1.5"}));
  EXPECT_EQ(linesOfFile(run + "/events.jsonl").size(), 5u);
  const auto log = logLinesWithoutTime(run + "/train.log");
  EXPECT_EQ(log, (std::vector<std::string>{"info run completed: stopped by the user",
                                           "info run completed: done"}));
}

// A metrics.csv a killed run left empty gets its header when the run goes on.
TEST(RunWriter, AnEmptyMetricsFileLeftBehindGetsTheHeader) {
  TempDir dir;
  const std::string run = dir.file("run");
  fs::create_directories(run);
  { std::ofstream(run + "/metrics.csv"); }
  {
    run::RunWriter writer(run, "accuracy");
    writer.onEvent(writerStep(0, 0, 1, 2.5, 0.5));
  }
  const auto csv = linesOfFile(run + "/metrics.csv");
  ASSERT_EQ(csv.size(), 2u);
  EXPECT_EQ(csv[0].rfind("kind,epoch,batch,step,", 0), 0u) << csv[0];
  EXPECT_EQ(splitCsvLine(csv[1])[4], "2.5");
}

// The disk fills while events.jsonl is written (the third write of it): failure() names the
// file and the reason from then on, and a later failure does not replace the first.
TEST(RunWriter, AFailedWriteIsReportedByFailure) {
  TempDir dir;
  const std::string run = dir.file("run");
  fs::create_directories(run);
  WriteFaultOff faultOff;
  run::RunWriter writer(run, "accuracy");
  setWriteFaultForTesting(run + "/events.jsonl", 2);
  writer.onEvent(writerStep(0, 0, 1, 2.5, 0.5));
  writer.onEvent(writerStep(0, 1, 2, 2.0, 1.0));
  EXPECT_EQ(writer.failure(), "");
  writer.onEvent(writerStep(0, 2, 3, 1.5, 1.5));
  const std::string full = run + "/events.jsonl: No space left on device";
  EXPECT_EQ(writer.failure(), full);
  setWriteFaultForTesting(run + "/metrics.csv", 0);
  writer.onEvent(writerFinished("done"));
  EXPECT_EQ(writer.failure(), full);
}

// A folder that does not exist, and one the writer may not write in: refused at once, naming
// the first file it would have written and the reason.
TEST(RunWriter, AFolderItCannotWriteIsRefusedByName) {
  TempDir dir;
  const std::string missing = dir.file("missing");
  try {
    run::RunWriter writer(missing, "accuracy");
    ADD_FAILURE() << "a writer was made in a folder that does not exist";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()),
              missing + "/metrics.csv: cannot write (No such file or directory)");
  }
  EXPECT_FALSE(fs::exists(missing));

  const std::string readOnly = dir.file("read-only");
  fs::create_directories(readOnly);
  ASSERT_EQ(::chmod(readOnly.c_str(), 0555), 0);
  // Root (and CAP_DAC_OVERRIDE) writes in a read-only folder: nothing to refuse there.
  const bool writable = ::access(readOnly.c_str(), W_OK) == 0;
  if (!writable) {
    try {
      run::RunWriter writer(readOnly, "accuracy");
      ADD_FAILURE() << "a writer was made in a read-only folder";
    } catch (const IoError& e) {
      EXPECT_EQ(std::string(e.what()), readOnly + "/metrics.csv: cannot write (Permission denied)");
    }
    EXPECT_TRUE(fs::is_empty(readOnly));
  }
  ::chmod(readOnly.c_str(), 0755);
  if (writable) GTEST_SKIP() << "this user writes in read-only folders (root)";
}

TEST(RunFolderLock, HeldRefusedWithTheHoldersPidThenReleased) {
  TempDir dir;
  const std::string run = dir.file("run");
  fs::create_directories(run);
  const std::string pid = std::to_string(::getpid());
  {
    run::RunFolderLock held(run);
    EXPECT_EQ(readTextFile(run + "/.lock"), pid + "\n");
    try {
      run::RunFolderLock second(run);
      ADD_FAILURE() << "a second lock was taken";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(run + ": the run is in use by process " + pid + " "),
                std::string::npos)
          << e.what();
    }
  }
  // Released with its holder: the next one takes it.
  EXPECT_NO_THROW({ run::RunFolderLock again(run); });
}
