// netsmith-cli's data commands end to end: a project and its data written by the test, the
// real binary run on them, its output and files checked.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <opencv2/imgcodecs.hpp>

#include "../core/data_fixtures.h"
#include "cli_runner.h"
#include "common/json.h"

using netsmith::Json;
using netsmith::testutil::TempDir;

namespace {

using netsmith::testutil::runCli;

std::string writeProject(const TempDir& dir, const std::string& data, const std::string& augment,
                         int channels = 3) {
  const std::string path = dir.file("p.netsmith.json");
  std::ofstream(path) << R"({"format": "netsmith-project", "version": 1, "name": "cli",
    "model": {"input": {"channels": )"
                      << channels << R"(, "height": 16, "width": 16}, "nodes": [
      {"id": "input", "op": "Input"}, {"id": "flat", "op": "Flatten", "inputs": ["input"]},
      {"id": "fc", "op": "Linear", "params": {"out_features": 3}, "inputs": ["flat"]}]},
    "data": )" << data << R"(, "augment": )"
                      << augment << "}";
  return path;
}

}  // namespace

TEST(CliData, DataStatsOnAnImageFolder) {
  TempDir dir;
  netsmith::testutil::writeImageFolder(dir.path() / "imgs", {"ant", "bee", "cow"}, 20, 16, 16, 3);
  const auto split = writeProject(dir, R"({"train": {"format": "image_folder", "root": "imgs"},
      "validation": {"fraction": 0.25, "seed": 1}, "normalize": "auto"})",
                                  "[]");
  const auto r = runCli("data-stats " + split + " --json");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const Json j = Json::parse(r.output);
  EXPECT_EQ(j["splits"]["train"], 45);
  EXPECT_EQ(j["splits"]["validation"], 15);
  EXPECT_EQ(j["class_counts"]["validation"]["ant"], 5);
  EXPECT_EQ(j["class_counts"]["train"]["cow"], 15);
  EXPECT_EQ(j["classes"], Json::parse(R"(["ant", "bee", "cow"])"));
  ASSERT_EQ(j["mean"].size(), 3u);
  EXPECT_EQ(j["normalization"]["mode"], "auto");

  // Everything in training: the odd-sized image is counted, the broken one skipped, named and
  // left out of the split's count (61 readable of 62 files).
  cv::imwrite(dir.file("imgs/cow/big.png"), netsmith::testutil::patternImage(40, 30, 3, 5));
  std::ofstream(dir.file("imgs/bee/broken.png")) << "nope";
  const auto all = writeProject(
      dir, R"({"train": {"format": "image_folder", "root": "imgs"}, "normalize": "none"})", "[]");
  const auto r2 = runCli("data-stats " + all + " --json");
  ASSERT_EQ(r2.exitCode, 0) << r2.output;
  const Json k = Json::parse(r2.output);
  EXPECT_EQ(k["splits"]["train"], 61);
  EXPECT_EQ(k["image_sizes"]["16x16x3"], 60);
  EXPECT_EQ(k["image_sizes"]["30x40x3"], 1);
  ASSERT_EQ(k["skipped"].size(), 1u) << r2.output;
  EXPECT_NE(k["skipped"][0]["item"].get<std::string>().find("broken.png"), std::string::npos);
  const auto text = runCli("data-stats " + all);
  EXPECT_EQ(text.exitCode, 0);
  EXPECT_NE(text.output.find("Splits:  train 61, validation 0, test 0"), std::string::npos)
      << text.output;
  EXPECT_NE(text.output.find("broken.png: not a readable image"), std::string::npos) << text.output;
}

TEST(CliData, PreviewAugWritesAReadableGrid) {
  TempDir dir;
  netsmith::testutil::writeImageFolder(dir.path() / "imgs", {"a", "b"}, 6, 20, 20, 3);
  const auto project = writeProject(
      dir, R"({"train": {"format": "image_folder", "root": "imgs"}, "normalize": "none"})",
      R"([{"transform": "RandomResizedCrop"}, {"transform": "HorizontalFlip"}])");
  const auto out = dir.file("grid.png");
  const auto r =
      runCli("preview-aug " + project + " --out " + out + " --samples 3 --draws 4 --seed 2");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const cv::Mat grid = cv::imread(out);
  ASSERT_FALSE(grid.empty());
  EXPECT_EQ(grid.cols, 6 + 5 * (96 + 6));  // original + 4 draws
  EXPECT_GT(grid.rows, 3 * 96);
  // The same seed gives the same grid; another seed another one.
  ASSERT_EQ(runCli("preview-aug " + project + " --out " + dir.file("again.png") +
                   " --samples 3 --draws 4 --seed 2")
                .exitCode,
            0);
  const cv::Mat again = cv::imread(dir.file("again.png"));
  EXPECT_EQ(cv::norm(grid, again, cv::NORM_INF), 0.0);
  ASSERT_EQ(runCli("preview-aug " + project + " --out " + dir.file("other.png") +
                   " --samples 3 --draws 4 --seed 3")
                .exitCode,
            0);
  EXPECT_GT(cv::norm(grid, cv::imread(dir.file("other.png")), cv::NORM_INF), 0.0);
}

TEST(CliData, BadDataGivesExitTwoAndNamesThePlace) {
  TempDir dir;
  const auto missing =
      writeProject(dir, R"({"train": {"format": "image_folder", "root": "nowhere"}})", "[]");
  auto r = runCli("data-stats " + missing);
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.output.find("data.train.root: " + dir.file("nowhere") + ": folder not found"),
            std::string::npos)
      << r.output;
  const auto badAug = writeProject(dir, R"({"train": {"format": "image_folder", "root": "x"}})",
                                   R"([{"transform": "RandomCrop", "size": 64, "padding": 0}])");
  r = runCli("validate " + badAug);
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.output.find("augment[0].size: 64x64 is larger than the 16x16 input"),
            std::string::npos)
      << r.output;
  r = runCli("preview-aug " + missing);
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.output.find("preview-aug needs --out"), std::string::npos) << r.output;
}

namespace {

// `init` on a folder of class folders: what it prints is what the files hold (5 classes of 6
// images, one broken), the project it writes validates and names the data relative to itself,
// and a second run refuses to replace it.
TEST(CliData, InitMakesAProjectFromClassFoldersAndSaysWhatItFound) {
  TempDir dir;
  netsmith::testutil::writeImageFolder(dir.path() / "shapes", {"a", "b", "c", "d", "e"}, 6, 48, 48,
                                       3);
  std::ofstream(dir.path() / "shapes" / "c" / "broken.png") << "no image";
  const auto r = runCli("init " + (dir.path() / "shapes").string());
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("30 training images"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("1 unreadable or unusable file"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("classes (5): a, b, c, d, e"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("input: 3 x 48 x 48"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("the small_resnet template"), std::string::npos) << r.output;
  const std::string project = dir.file("shapes.netsmith.json");
  const Json p = Json::parse(std::ifstream(project));
  EXPECT_EQ(p["data"]["train"]["root"], "shapes");
  EXPECT_EQ(p["model"]["nodes"].back()["params"]["out_features"], 5);
  EXPECT_EQ(runCli("validate " + project).exitCode, 0);
  const auto again = runCli("init " + (dir.path() / "shapes").string());
  EXPECT_NE(again.exitCode, 0);
  EXPECT_NE(again.output.find("exists already"), std::string::npos) << again.output;
  // Flags checked before any work; a task that the data cannot feed is named.
  EXPECT_EQ(runCli("init " + (dir.path() / "shapes").string() + " --out x.json").exitCode, 2);
  const auto wrong =
      runCli("init " + (dir.path() / "shapes").string() + " --task regression --dry-run");
  EXPECT_NE(wrong.exitCode, 0);
  EXPECT_NE(wrong.output.find("regression"), std::string::npos) << wrong.output;
}

}  // namespace
