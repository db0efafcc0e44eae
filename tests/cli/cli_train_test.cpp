// netsmith-cli train / eval / lr-find end to end on test-written data.
#include <gtest/gtest.h>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "../core/test_support.h"
#include "../core/train_fixtures.h"
#include "checkpoint/checkpoint.h"
#include "cli_runner.h"
#include "common/file_util.h"
#include "common/json.h"
#include "export/onnx_export.h"
#include "netsmith/version.h"

using netsmith::Json;
using netsmith::testutil::TempDir;

namespace {

using netsmith::testutil::runCli;
using netsmith::testutil::startCli;
using netsmith::testutil::waitForText;

std::string lastLine(const std::string& text) {
  std::string t = text;
  while (!t.empty() && t.back() == '\n')
    t.pop_back();
  const auto nl = t.rfind('\n');
  return nl == std::string::npos ? t : t.substr(nl + 1);
}

/// Ctrl-C for the CLI process `pid`: its output (`log`) once it exited, which it must do with
/// status 130.
std::string interrupt(pid_t pid, const std::string& log) {
  ::kill(pid, SIGINT);
  int status = 0;
  ::waitpid(pid, &status, 0);
  const std::string out = netsmith::readTextFile(log);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 130) << out;
  return out;
}

}  // namespace

TEST(CliTrain, TrainsThenEvaluatesTheCheckpoint) {
  TempDir dir;
  const auto project = netsmith::testutil::writeTrainProject(dir);
  const auto r = runCli("train " + project + " --epochs 3 --lr 0.02 --out " + dir.file("runs"));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const std::regex last(
      R"(test accuracy ([0-9.]+)% on 64 images \(checkpoint (best|last)\); run folder (.*blobs-[0-9]{8}-[0-9]{6}))");
  std::smatch m;
  const std::string line = lastLine(r.output);
  ASSERT_TRUE(std::regex_match(line, m, last)) << r.output;
  EXPECT_GT(std::stod(m[1]), 80.0);
  const std::string tag = m[2];
  const std::string runDir = m[3];
  EXPECT_NE(r.output.find("epoch 3/3: train loss"), std::string::npos) << r.output;
  // The --lr override reached the optimizer (and the snapshot).
  // The version that made the run is in its log.
  EXPECT_NE(netsmith::readTextFile(runDir + "/train.log").find("Netsmith " NETSMITH_VERSION ":"),
            std::string::npos);
  EXPECT_NE(netsmith::readTextFile(runDir + "/project.json").find("\"lr\": 0.02"),
            std::string::npos);

  const auto e = runCli("eval " + runDir + "/checkpoints/last.safetensors");
  ASSERT_EQ(e.exitCode, 0) << e.output;
  EXPECT_NE(e.output.find("test split"), std::string::npos) << e.output;
  EXPECT_NE(e.output.find("on 64 images"), std::string::npos) << e.output;
  EXPECT_NE(e.output.find("bottom-right"), std::string::npos) << e.output;
  EXPECT_NE(e.output.find("confusion matrix"), std::string::npos) << e.output;
  // --data: another project's data (here the same files through the project file).
  const auto other = runCli("eval " + runDir + "/checkpoints/last.safetensors --data " + project +
                            " --split train --limit 40");
  ASSERT_EQ(other.exitCode, 0) << other.output;
  EXPECT_NE(other.output.find("train split"), std::string::npos) << other.output;
  EXPECT_NE(other.output.find("on 40 images"), std::string::npos) << other.output;
  // The run's test figure is the one eval gives for the checkpoint it names.
  const auto ej = runCli("eval " + runDir + "/checkpoints/" + tag + ".safetensors --json");
  ASSERT_EQ(ej.exitCode, 0) << ej.output;
  const Json j = Json::parse(ej.output);
  EXPECT_EQ(j["samples"], 64);
  EXPECT_EQ(j["confusion"].size(), 4u);
  EXPECT_NEAR(j["accuracy"].get<double>() * 100, std::stod(m[1]), 1e-9 + 0.01);

  // --split validation: the split the run held out (its fraction and seed), whose figures at the
  // last epoch are metrics.csv's last val_accuracy and val_loss for the last checkpoint.
  const auto ev =
      runCli("eval " + runDir + "/checkpoints/last.safetensors --split validation --json");
  ASSERT_EQ(ev.exitCode, 0) << ev.output;
  const Json v = Json::parse(ev.output);
  EXPECT_EQ(v["split"], "validation");
  EXPECT_EQ(v["samples"], 64);  // a quarter of 256
  std::istringstream csv(netsmith::readTextFile(runDir + "/metrics.csv"));
  std::string header, row, lastEpoch;
  std::getline(csv, header);
  while (std::getline(csv, row))
    if (row.rfind("epoch,", 0) == 0) lastEpoch = row;
  const auto column = [](const std::string& line, const std::string& headerLine,
                         const std::string& name) {
    std::vector<std::string> names, cells;
    for (auto* out : {&names, &cells}) {
      std::istringstream is(out == &names ? headerLine : line);
      for (std::string c; std::getline(is, c, ',');)
        out->push_back(c);
    }
    const auto at = std::find(names.begin(), names.end(), name) - names.begin();
    return std::stod(cells.at(std::size_t(at)));
  };
  ASSERT_FALSE(lastEpoch.empty()) << header;
  EXPECT_NEAR(v["accuracy"].get<double>(), column(lastEpoch, header, "val_accuracy"), 1e-6);
  EXPECT_NEAR(v["loss"].get<double>(), column(lastEpoch, header, "val_loss"), 1e-4);

  // --gradcam: the map of an image over it, at the last convolution, with the class figures.
  const cv::Mat blob = cv::Mat::zeros(16, 16, CV_8UC1);
  cv::circle(blob, {5, 10}, 3, cv::Scalar(255), cv::FILLED);
  ASSERT_TRUE(cv::imwrite(dir.file("blob.png"), blob));
  const auto g = runCli("eval " + runDir + "/checkpoints/last.safetensors --gradcam " +
                        dir.file("blob.png") + " --out " + dir.file("cam.png") + " --json");
  ASSERT_EQ(g.exitCode, 0) << g.output;
  const Json gj = Json::parse(g.output);
  EXPECT_EQ(gj["node"], "conv");
  const auto probabilities = gj["probabilities"].get<std::vector<double>>();
  ASSERT_EQ(probabilities.size(), 4u);
  double sum = 0;
  for (double p : probabilities)
    sum += p;
  EXPECT_NEAR(sum, 1.0, 1e-5);
  EXPECT_EQ(gj["predicted"].get<std::size_t>(),
            std::size_t(std::max_element(probabilities.begin(), probabilities.end()) -
                        probabilities.begin()));
  const cv::Mat overlay = cv::imread(dir.file("cam.png"), cv::IMREAD_UNCHANGED);
  EXPECT_EQ(overlay.cols, 280);
  EXPECT_EQ(overlay.rows, 280);
  EXPECT_EQ(overlay.channels(), 3);
  const auto badNode =
      runCli("eval " + runDir + "/checkpoints/last.safetensors --gradcam " + dir.file("blob.png") +
             " --gradcam-node nope --out " + dir.file("no.png"));
  EXPECT_NE(badNode.exitCode, 0);
  EXPECT_NE(badNode.output.find("no node \"nope\""), std::string::npos) << badNode.output;
  EXPECT_FALSE(std::filesystem::exists(dir.file("no.png")));

  // predict: the same image without labels gives Grad-CAM's class and probabilities; an
  // unreadable image is named and skipped; an output over an input is refused.
  std::filesystem::create_directories(dir.file("photos"));
  std::filesystem::copy_file(dir.file("blob.png"), dir.file("photos/blob.png"));
  netsmith::writeFileAtomically(dir.file("photos/broken.png"), "not a png");
  const auto pr = runCli("predict " + runDir + "/checkpoints/last.safetensors " +
                         dir.file("photos") + " --out " + dir.file("pred.csv"));
  ASSERT_EQ(pr.exitCode, 0) << pr.output;
  EXPECT_NE(pr.output.find("skipped " + dir.file("photos/broken.png") + ": not a readable image"),
            std::string::npos)
      << pr.output;
  EXPECT_NE(pr.output.find("1 image(s) predicted, 1 skipped"), std::string::npos) << pr.output;
  std::istringstream rows(netsmith::readTextFile(dir.file("pred.csv")));
  std::string head, cells;
  std::getline(rows, head);
  std::getline(rows, cells);
  EXPECT_EQ(head.rfind("path,prediction,probability,prob:", 0), 0u) << head;
  EXPECT_EQ(head.find("label"), std::string::npos) << head;
  std::vector<std::string> cell;
  std::istringstream split(cells);
  for (std::string c; std::getline(split, c, ',');)
    cell.push_back(c);
  ASSERT_EQ(cell.size(), 3 + probabilities.size()) << cells;
  EXPECT_EQ(cell[0], dir.file("photos/blob.png"));
  EXPECT_EQ(cell[1], gj["predicted_name"].get<std::string>());
  EXPECT_NEAR(std::stod(cell[2]), probabilities[gj["predicted"].get<std::size_t>()], 1e-5);
  for (std::size_t c = 0; c < probabilities.size(); ++c)
    EXPECT_NEAR(std::stod(cell[3 + c]), probabilities[c], 1e-5);
  const std::string before = netsmith::readTextFile(dir.file("photos/blob.png"));
  const auto over = runCli("predict " + runDir + "/checkpoints/last.safetensors " +
                           dir.file("photos/blob.png") + " --out " + dir.file("photos/blob.png"));
  EXPECT_NE(over.exitCode, 0);
  EXPECT_NE(over.output.find("is an input image"), std::string::npos) << over.output;
  EXPECT_EQ(netsmith::readTextFile(dir.file("photos/blob.png")), before);
  // A link planted where the output goes is replaced, never written through.
  netsmith::writeFileAtomically(dir.file("elsewhere.txt"), "keep");
  std::filesystem::create_symlink(dir.file("elsewhere.txt"), dir.file("planted.csv"));
  const auto linked = runCli("predict " + runDir + "/checkpoints/last.safetensors " +
                             dir.file("photos/blob.png") + " --out " + dir.file("planted.csv"));
  ASSERT_EQ(linked.exitCode, 0) << linked.output;
  EXPECT_FALSE(std::filesystem::is_symlink(dir.file("planted.csv")));
  EXPECT_EQ(netsmith::readTextFile(dir.file("elsewhere.txt")), "keep");
  EXPECT_EQ(netsmith::readTextFile(dir.file("planted.csv")).rfind("path,prediction,", 0), 0u);
  const auto none = runCli("predict " + runDir + "/checkpoints/last.safetensors " +
                           dir.file("photos/broken.png") + " --out " + dir.file("none.csv"));
  EXPECT_NE(none.exitCode, 0);
  EXPECT_NE(none.output.find("no image could be read"), std::string::npos) << none.output;
  EXPECT_FALSE(std::filesystem::exists(dir.file("none.csv")));
}

// bench --profile: one more pass under LibTorch's profiler, its chrome trace written; the op
// table counts per profiled batch (the test model has one MaxPool2d: one call a batch, as many
// as the trace holds).
TEST(CliTrain, BenchProfileWritesATraceAndCountsOpsPerBatch) {
  TempDir dir;
  const auto project = netsmith::testutil::writeTrainProject(dir);
  const std::string trace = dir.file("trace.json");
  const auto r = runCli("bench " + project + " --steps 3 --profile " + trace + " --json");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const Json j = Json::parse(r.output);
  const int batches = j["profile"]["batches"].get<int>();
  EXPECT_GE(batches, 3);
  const Json events = Json::parse(netsmith::readTextFile(trace));
  ASSERT_TRUE(events.is_array());
  int pools = 0;
  for (const auto& e : events)
    if (e.value("name", std::string()) == "aten::max_pool2d") ++pools;
  EXPECT_EQ(pools, batches);
  bool listed = false;
  for (const auto& op : j["profile"]["ops"])
    if (op["op"] == "aten::max_pool2d") {
      listed = true;
      EXPECT_DOUBLE_EQ(op["calls_per_batch"].get<double>(), 1.0);
      EXPECT_GT(op["ms_per_batch"].get<double>(), 0.0);
    }
  EXPECT_TRUE(listed) << r.output;
}

TEST(CliTrain, JsonPrintsOneEventPerLine) {
  TempDir dir;
  const auto project = netsmith::testutil::writeTrainProject(dir, {{"epochs", 1}});
  const auto r = runCli("train " + project + " --json --out " + dir.file("runs"));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  std::istringstream in(r.output);
  std::string line;
  std::vector<Json> events;
  while (std::getline(in, line))
    events.push_back(Json::parse(line));
  ASSERT_GE(events.size(), 8u);
  EXPECT_EQ(events.back()["event"], "finished");
  EXPECT_EQ(events.back()["state"], "completed");
  EXPECT_EQ(events.back()["test"]["samples"], 64);
  int batches = 0;
  for (const auto& e : events)
    batches += e["event"] == "batch_end";
  EXPECT_EQ(batches, 6);
}

// A validation limit does not limit the test figure: it is of the whole test split unless the
// test split itself is limited, and says so.
TEST(CliTrain, TheTestFigureIsOfTheWholeTestSplitUnlessItIsLimited) {
  TempDir dir;
  const auto project = netsmith::testutil::writeTrainProject(dir);
  const auto r = runCli("train " + project + " --limit-val 10 --out " + dir.file("runs"));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(lastLine(r.output).find("% on 64 images (checkpoint "), std::string::npos) << r.output;
  const auto t = runCli("train " + project + " --limit-test 20 --out " + dir.file("runs"));
  ASSERT_EQ(t.exitCode, 0) << t.output;
  EXPECT_NE(lastLine(t.output).find("% on 20 images (checkpoint "), std::string::npos) << t.output;
  EXPECT_NE(t.output.find("--limit-test: 20 of the 64 test samples, a stratified random subset"),
            std::string::npos)
      << t.output;
}

TEST(CliTrain, ResumeContinuesAStoppedRun) {
  TempDir dir;
  const auto project = netsmith::testutil::writeTrainProject(dir);
  const auto stopped = runCli("train " + project + " --max-batches 4 --out " + dir.file("runs"));
  ASSERT_EQ(stopped.exitCode, 0) << stopped.output;
  EXPECT_NE(stopped.output.find("stopped at epoch 1, batch 4"), std::string::npos)
      << stopped.output;
  // A stopped run has a test split it did not evaluate, and says so (not "no test split").
  EXPECT_NE(lastLine(stopped.output)
                .find("the test split (64 images) was not evaluated: the run did not complete; "
                      "netsmith-cli eval "),
            std::string::npos)
      << stopped.output;
  std::string ckpt;
  for (const auto& entry : std::filesystem::directory_iterator(dir.file("runs")))
    ckpt = (entry.path() / "checkpoints" / "last.safetensors").string();
  const auto resumed = runCli("train " + project + " --resume " + ckpt);
  ASSERT_EQ(resumed.exitCode, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("resumed from"), std::string::npos) << resumed.output;
  EXPECT_NE(lastLine(resumed.output).find("test accuracy"), std::string::npos) << resumed.output;
}

// A project with a validation split and no test split, stopped before its first validation:
// the last line says no validation pass ran, not that the project has no validation split.
TEST(CliTrain, AStopBeforeValidationIsNotAMissingSplit) {
  TempDir dir;
  const auto project = netsmith::testutil::writeTrainProject(dir);
  auto json = netsmith::Json::parse(netsmith::readTextFile(project));
  json["data"].erase("test");
  std::ofstream(project) << json.dump();
  const auto r =
      runCli("train " + project + " --max-batches 1 --no-test --out " + dir.file("runs"));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(lastLine(r.output).find("no accuracy measured: no test split, and no validation "
                                    "pass ran before the run stopped"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("no test or validation split"), std::string::npos) << r.output;
}

TEST(CliTrain, LrFindPrintsASuggestion) {
  TempDir dir;
  const auto project = netsmith::testutil::writeTrainProject(dir);
  const auto r = runCli("lr-find " + project + " --steps 30 --start 1e-5 --end 10");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_TRUE(std::regex_search(
      r.output, std::regex("suggested learning rate: [0-9.e+-]+ .*weights restored")))
      << r.output;
}

// On the small Fashion-MNIST CNN (real data, Adam), with and without MixUp, lr-find suggests an
// LR below the lowest loss, between 1e-4 and 3e-3 (where Adam trains this CNN best:
// tests/cli/lr_find_flow.py trains at the suggestion, a tenth of it and ten times it).
TEST(CliTrain, LrFindOnTheSmallFashionMnistCnnWithAndWithoutMixUp) {
  const std::string example =
      std::string(NETSMITH_SOURCE_DIR) + "/resources/templates/fashion_mnist_cnn.netsmith.json";
  Json project = Json::parse(netsmith::readTextFile(example));
  const std::string images = project["data"]["train"]["images"];
  if (!std::filesystem::exists(images)) GTEST_SKIP() << images << " is not installed";
  TempDir dir;
  for (const bool mixup : {false, true}) {
    if (mixup) project["augment"].push_back(Json{{"transform", "MixUp"}, {"alpha", 0.4}});
    const std::string path = dir.file(mixup ? "mixup.netsmith.json" : "plain.netsmith.json");
    std::ofstream(path) << project.dump(1);
    const auto r = runCli("lr-find " + path + " --limit-train 12800 --json");
    ASSERT_EQ(r.exitCode, 0) << r.output;
    const Json j = Json::parse(lastLine(r.output));
    const double suggested = j["suggested_lr"], lowest = j["min_loss_lr"];
    EXPECT_LT(suggested, lowest) << mixup;
    EXPECT_GE(suggested, 1e-4) << mixup;
    EXPECT_LE(suggested, 3e-3) << mixup;
  }
}

TEST(CliTrain, BadFlagsAndDevices) {
  TempDir dir;
  const auto project = netsmith::testutil::writeTrainProject(dir);
  auto r = runCli("train " + project + " --lr -1");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.output.find("--lr must be greater than 0"), std::string::npos) << r.output;
  r = runCli("train " + project + " --epochs 0");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.output.find("--epochs must be between 1"), std::string::npos) << r.output;
  r = runCli("train " + project + " --device tpu");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.output.find("train.device"), std::string::npos) << r.output;
  r = runCli("train " + project + " --resume " + dir.file("missing.safetensors"));
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.output.find("missing.safetensors"), std::string::npos) << r.output;
  r = runCli("eval " + project);
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.output.find("blobs.netsmith.json"), std::string::npos) << r.output;
}

// Ctrl-C (SIGINT) stops the run after writing a checkpoint that loads; exit status 130.
TEST(CliTrain, InterruptWritesACheckpoint) {
  TempDir dir;
  const auto project = netsmith::testutil::writeTrainProject(dir, {{"epochs", 500}});
  const std::string log = dir.file("out.txt");
  const pid_t pid = startCli({"train", project, "--out", dir.file("runs")}, log);
  ASSERT_GT(pid, 0);
  // Wait until training is under way (the first epoch line), then interrupt.
  EXPECT_TRUE(waitForText(log, "epoch 2/500", 30)) << netsmith::readTextFile(log);
  const std::string out = interrupt(pid, log);
  if (::testing::Test::HasFatalFailure()) return;
  EXPECT_NE(out.find("interrupted: stopping after this batch"), std::string::npos) << out;
  const std::regex ckpt("checkpoint: (\\S+last\\.safetensors)");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(out, m, ckpt)) << out;
  const auto meta = netsmith::checkpoint::readCheckpoint(m[1]).meta;
  EXPECT_GE(meta["epoch"].get<int>(), 1);
}

// --json runs end as the others do on Ctrl-C: exit status 130, the last event says stopped.
TEST(CliTrain, InterruptWithJsonExits130) {
  TempDir dir;
  const auto project = netsmith::testutil::writeTrainProject(dir, {{"epochs", 500}});
  const std::string log = dir.file("out.txt");
  const pid_t pid =
      startCli({"train", project, "--out", dir.file("runs"), "--json"}, log, {}, false);
  ASSERT_GT(pid, 0);
  EXPECT_TRUE(waitForText(log, "\"epoch_end\"", 30)) << netsmith::readTextFile(log);
  const std::string out = interrupt(pid, log);
  if (::testing::Test::HasFatalFailure()) return;
  const Json last = Json::parse(lastLine(out));
  EXPECT_EQ(last["event"], "finished");
  EXPECT_EQ(last["state"], "stopped");
}

// COMMAND --help prints that command's usage with an example; unknown commands and options get
// a suggestion.
TEST(CliHelp, PerCommandHelpAndSuggestions) {
  auto r = runCli("train --help");
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_EQ(r.output.rfind("usage: netsmith-cli\n  train PROJECT [--epochs N]", 0), 0u) << r.output;
  EXPECT_NE(r.output.find("example:\n  netsmith-cli train resources/examples/"), std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("lr-find PROJECT"), std::string::npos) << r.output;  // only train's
  r = runCli("lr-schedule -h");
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("[--limit-train N] [--steps-per-epoch N]"), std::string::npos)
      << r.output;
  r = runCli("trian x.json");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.output.find("unknown command \"trian\"; did you mean \"train\"?"), std::string::npos)
      << r.output;
  TempDir dir;
  r = runCli("train " + netsmith::testutil::writeTrainProject(dir) + " --epoch 3");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.output.find("unknown option --epoch; did you mean --epochs?"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("usage: netsmith-cli\n  train PROJECT"), std::string::npos) << r.output;
}

// export on a trained checkpoint: all three files into the run's exports/, a passing parity
// report that includes real test samples; a named ONNX file with --softmax and --json.
TEST(CliExport, WritesAllThreeWithAPassingParityReport) {
  TempDir dir;
  const auto project = netsmith::testutil::writeTrainProject(dir, {{"epochs", 1}});
  const auto trained = runCli("train " + project + " --out " + dir.file("runs"));
  ASSERT_EQ(trained.exitCode, 0) << trained.output;
  std::string runDir;
  for (const auto& entry : std::filesystem::directory_iterator(dir.file("runs")))
    runDir = entry.path().string();
  const std::string ckpt = runDir + "/checkpoints/last.safetensors";
  const auto r = runCli("export " + ckpt);
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("parity passed"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("read back equal"), std::string::npos) << r.output;
  for (const char* f : {"last.onnx", "last-weights.safetensors", "last.py"})
    EXPECT_TRUE(std::filesystem::exists(runDir + "/exports/" + f)) << f << "\n" << r.output;

  const auto j =
      runCli("export " + ckpt + " --onnx " + dir.file("m.onnx") + " --opset 11 --softmax --json");
  ASSERT_EQ(j.exitCode, 0) << j.output;
  const Json report = Json::parse(j.output);
  ASSERT_EQ(report["exports"].size(), 1u);
  const auto& onnx = report["exports"][0];
  EXPECT_EQ(onnx["verified"], true);
  EXPECT_LE(onnx["parity"]["max_abs_diff"].get<double>(), 1e-4);
  EXPECT_EQ(onnx["parity"]["samples"], 24);  // random 7 + 1, and 16 test images
  EXPECT_EQ(onnx["parity"]["batches"][2], "test data x16");
  // The classification task's output, as its TaskDef says, in the report and the file.
  EXPECT_NE(onnx["message"].get<std::string>().find("output \"logits\": one score per class"),
            std::string::npos)
      << onnx["message"];
  const auto info = netsmith::exporting::inspectOnnx(netsmith::readTextFile(dir.file("m.onnx")));
  EXPECT_EQ(info.outputs, (std::vector<std::string>{"logits", "probabilities"}));
  std::map<std::string, std::string> meta(info.metadata.begin(), info.metadata.end());
  EXPECT_EQ(meta["task"], "classification");
  EXPECT_EQ(meta["output"], "logits");
  EXPECT_NE(meta["postprocessing"].find("highest score"), std::string::npos);

  const auto bad = runCli("export " + ckpt + " --opset 9");
  EXPECT_EQ(bad.exitCode, 2) << bad.output;
  EXPECT_EQ(runCli("export " + ckpt + " --calibration 8").exitCode, 2);
  if (netsmith::testutil::onnxRuntimeForTest()) {
    EXPECT_EQ(onnx["onnxruntime_parity"]["passed"], true) << onnx;
  }
}

// --int8: the float file and STEM-int8.onnx beside it, calibrated on training images and checked
// in ONNX Runtime against the float model on the test images.
TEST(CliExport, Int8IsCalibratedOnTrainingImagesAndChecked) {
  if (!netsmith::testutil::onnxRuntimeForTest()) GTEST_SKIP() << "ONNX Runtime is turned off";
  TempDir dir;
  const auto project = netsmith::testutil::writeTrainProject(dir, {{"epochs", 3}});
  ASSERT_EQ(runCli("train " + project + " --out " + dir.file("runs")).exitCode, 0);
  std::string runDir;
  for (const auto& entry : std::filesystem::directory_iterator(dir.file("runs")))
    runDir = entry.path().string();
  const std::string ckpt = runDir + "/checkpoints/last.safetensors";
  const auto q = runCli("export " + ckpt + " --onnx " + dir.file("q.onnx") +
                        " --int8 --calibration 32 --samples 64 --json");
  ASSERT_EQ(q.exitCode, 0) << q.output;
  const Json qr = Json::parse(q.output);
  ASSERT_EQ(qr["exports"].size(), 2u);
  const auto& int8 = qr["exports"][1];
  EXPECT_EQ(int8["format"], "onnx-int8");
  EXPECT_EQ(int8["path"], dir.file("q-int8.onnx"));
  EXPECT_EQ(int8["verified"], true) << int8;
  EXPECT_EQ(int8["calibration_images"], 32);
  EXPECT_EQ(int8["onnxruntime_parity"]["samples"], 64);
  EXPECT_GE(int8["onnxruntime_parity"]["top1_agreement"].get<double>(), 0.99);
  const auto floatSize = std::filesystem::file_size(dir.file("q.onnx"));
  const std::uintmax_t int8Size = std::filesystem::file_size(dir.file("q-int8.onnx"));
  EXPECT_EQ(int8["float_bytes"].get<std::uint64_t>(), floatSize);
  EXPECT_GT(int8Size, 0u);  // (this model is too small to shrink: its scales weigh as much)
  const auto qi = netsmith::exporting::inspectOnnx(netsmith::readTextFile(dir.file("q-int8.onnx")));
  for (const char* op : {"QuantizeLinear", "DequantizeLinear", "Conv"})
    EXPECT_NE(std::find(qi.opTypes.begin(), qi.opTypes.end(), op), qi.opTypes.end()) << op;
  EXPECT_EQ(std::find(qi.opTypes.begin(), qi.opTypes.end(), "BatchNormalization"),
            qi.opTypes.end());  // folded into the convolutions
  std::map<std::string, std::string> qmeta(qi.metadata.begin(), qi.metadata.end());
  EXPECT_NE(qmeta["quantization"].find("32 training images"), std::string::npos)
      << qmeta["quantization"];
  EXPECT_EQ(qmeta["task"], "classification");
}

// An imported network is evaluated and exported before any training: its project's weights
// come from init_from. The figures are the same as the checkpoint it was exported from.
TEST(CliExport, AnImportedProjectIsEvaluatedAndExportedWithoutTraining) {
  TempDir dir;
  const auto project = netsmith::testutil::writeTrainProject(dir, {{"epochs", 1}});
  ASSERT_EQ(runCli("train " + project + " --out " + dir.file("runs")).exitCode, 0);
  std::string runDir;
  for (const auto& entry : std::filesystem::directory_iterator(dir.file("runs")))
    runDir = entry.path().string();
  const std::string ckpt = runDir + "/checkpoints/last.safetensors";
  ASSERT_EQ(runCli("export " + ckpt + " --onnx " + dir.file("m.onnx")).exitCode, 0);
  const std::string imported = dir.file("imported.netsmith.json");
  const auto im = runCli("import " + dir.file("m.onnx") + " --out " + imported);
  ASSERT_EQ(im.exitCode, 0) << im.output;

  const auto fromCheckpoint = runCli("eval " + ckpt + " --data " + project + " --json");
  const auto fromImport = runCli("eval " + imported + " --data " + project + " --json");
  ASSERT_EQ(fromCheckpoint.exitCode, 0) << fromCheckpoint.output;
  ASSERT_EQ(fromImport.exitCode, 0) << fromImport.output;
  const Json a = Json::parse(fromCheckpoint.output), b = Json::parse(fromImport.output);
  EXPECT_EQ(a["samples"], b["samples"]);
  EXPECT_EQ(a["confusion"], b["confusion"]);
  EXPECT_NEAR(a["accuracy"].get<double>(), b["accuracy"].get<double>(), 1e-12);

  const auto ex = runCli("export " + imported + " --onnx " + dir.file("again.onnx"));
  EXPECT_EQ(ex.exitCode, 0) << ex.output;
  EXPECT_NE(ex.output.find("parity passed"), std::string::npos) << ex.output;
  // A project without weights is refused by name.
  const auto none = runCli("export " + project);
  EXPECT_EQ(none.exitCode, 2) << none.output;
  EXPECT_NE(none.output.find("has no weights to use"), std::string::npos) << none.output;
}
