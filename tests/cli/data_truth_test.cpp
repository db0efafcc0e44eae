// What data-stats and train count is what the data holds: limits keep every class, every split
// is decoded and its unreadable files named and left out, hidden entries are not classes, CSV
// manifests from spreadsheets (byte-order mark, CRLF, quotes) read, and ambiguous labels are
// refused. Each figure is checked against what the test itself wrote.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <opencv2/imgcodecs.hpp>

#include "../core/data_fixtures.h"
#include "cli_runner.h"
#include "common/file_util.h"
#include "common/json.h"
#include "data/data_module.h"

using netsmith::Json;
using netsmith::testutil::runCli;
using netsmith::testutil::TempDir;
namespace fs = std::filesystem;

namespace {

std::string writeProject(const TempDir& dir, const std::string& data, int classes) {
  return netsmith::testutil::writeClassifierProject(dir, data, classes);
}

Json dataStats(const std::string& project) {
  const auto r = runCli("data-stats " + project + " --json");
  EXPECT_EQ(r.exitCode, 0) << r.output;
  return r.exitCode == 0 ? Json::parse(r.output) : Json::object();
}

std::vector<std::string> classNames(int n) {
  std::vector<std::string> out;
  for (int k = 0; k < n; ++k)
    out.push_back("class" + std::to_string(k));
  return out;
}

}  // namespace

TEST(StratifiedSubset, EveryClassKeepsItsShareAndTheChoiceIsSeeded) {
  // Class k has 30 + 10k samples (labels in class order, as folders list them).
  std::vector<std::int64_t> labels, all;
  for (int k = 0; k < 5; ++k)
    for (int i = 0; i < 30 + 10 * k; ++i)
      labels.push_back(k);
  // 30+40+50+60+70 = 250 samples; ask for 100.
  for (std::size_t i = 0; i < labels.size(); ++i)
    all.push_back(std::int64_t(i));
  auto label = [&](std::int64_t i) { return labels[std::size_t(i)]; };
  const auto a = netsmith::data::stratifiedSubset(all, label, 5, 100, 7);
  ASSERT_EQ(a.size(), 100u);
  std::vector<int> counts(5, 0);
  for (auto i : a)
    ++counts[std::size_t(label(i))];
  EXPECT_EQ(counts, (std::vector<int>{12, 16, 20, 24, 28}));  // 100 x each class's share
  EXPECT_TRUE(std::is_sorted(a.begin(), a.end()));
  EXPECT_EQ(netsmith::data::stratifiedSubset(all, label, 5, 100, 7), a);
  EXPECT_NE(netsmith::data::stratifiedSubset(all, label, 5, 100, 8), a);
  EXPECT_EQ(netsmith::data::stratifiedSubset(all, label, 5, 0, 7), all);
}

TEST(DataTruth, ALimitOnATenClassFolderKeepsEveryClassAndTrains) {
  TempDir dir;
  netsmith::testutil::writeImageFolder(dir.path() / "imgs", classNames(10), 60, 8, 8, 1);
  const auto project = writeProject(dir, R"({"train": {"format": "image_folder", "root": "imgs",
      "limit": 500}, "validation": {"fraction": 0.2, "seed": 3}, "normalize": "none"})",
                                    10);
  const Json j = dataStats(project);
  EXPECT_EQ(j["splits"]["train"], 400);
  EXPECT_EQ(j["splits"]["validation"], 100);
  for (const auto& name : classNames(10)) {
    EXPECT_EQ(j["class_counts"]["train"][name], 40) << name;
    EXPECT_EQ(j["class_counts"]["validation"][name], 10) << name;
  }
  ASSERT_EQ(j["subsets"].size(), 1u);
  EXPECT_NE(j["subsets"][0].get<std::string>().find("data.train.limit: 500 of 600 samples, a "
                                                    "stratified random subset"),
            std::string::npos);
  const auto r = runCli("train " + project + " --out " + dir.file("runs"));
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("trained 1 epoch\n"), std::string::npos) << r.output;
}

TEST(DataTruth, ATruncatedImageIsReportedByNetsmithAloneOnStderr) {
  TempDir dir;
  netsmith::testutil::writeImageFolder(dir.path() / "imgs", {"a", "b"}, 4, 8, 8, 1);
  const std::string png = netsmith::readTextFile(dir.file("imgs/a/img_0.png"));
  std::ofstream(dir.file("imgs/a/cut.png"), std::ios::binary) << png.substr(0, png.size() / 2);
  const auto project = writeProject(
      dir, R"({"train": {"format": "image_folder", "root": "imgs"}, "normalize": "none"})", 2);
  const auto r = runCli("data-stats " + project);
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("cut.png: not a readable image"), std::string::npos) << r.output;
  // OpenCV's own decoder warning does not reach the terminal.
  EXPECT_EQ(r.output.find("PNG input buffer is incomplete"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("WARN"), std::string::npos) << r.output;
}

TEST(DataTruth, AnUnreadableFileInValidationOrTestIsNamedAndNotCounted) {
  TempDir dir;
  netsmith::testutil::writeImageFolder(dir.path() / "train", {"a", "b", "c"}, 10, 8, 8, 1);
  netsmith::testutil::writeImageFolder(dir.path() / "val", {"a", "b", "c"}, 5, 8, 8, 1);
  netsmith::testutil::writeImageFolder(dir.path() / "test", {"a", "b", "c"}, 4, 8, 8, 1);
  std::ofstream(dir.file("val/b/zero.png")).close();  // 0 bytes
  std::ofstream(dir.file("test/c/junk.png")) << "not a png";
  const auto project = writeProject(dir, R"({"train": {"format": "image_folder", "root": "train"},
      "validation": {"format": "image_folder", "root": "val"},
      "test": {"format": "image_folder", "root": "test"}, "normalize": "none"})",
                                    3);
  const Json j = dataStats(project);
  EXPECT_EQ(j["splits"]["train"], 30);
  EXPECT_EQ(j["splits"]["validation"], 15);  // 16 files, one unreadable
  EXPECT_EQ(j["splits"]["test"], 12);        // 13 files, one unreadable
  EXPECT_EQ(j["class_counts"]["validation"]["b"], 5);
  ASSERT_EQ(j["skipped"].size(), 2u) << j.dump(1);
  std::string all;
  for (const auto& s : j["skipped"])
    all += s["item"].get<std::string>() + ": " + s["reason"].get<std::string>() + "\n";
  EXPECT_NE(all.find("zero.png: empty file (0 bytes)"), std::string::npos) << all;
  EXPECT_NE(all.find("junk.png: not a readable image"), std::string::npos) << all;
  // Each skipped item names its file once.
  for (const auto& s : j["skipped"])
    EXPECT_EQ(s["reason"].get<std::string>().find(".png"), std::string::npos) << s.dump();
}

TEST(DataTruth, HiddenEntriesAreNotClassesAndNestedFoldersBelongToTheirClass) {
  TempDir dir;
  const fs::path root = dir.path() / "imgs";
  netsmith::testutil::writeImageFolder(root, {"a", "b"}, 4, 8, 8, 1);
  netsmith::testutil::writeImageFolder(root / ".ipynb_checkpoints", {"a"}, 3, 8, 8, 1);
  netsmith::testutil::writeImageFolder(root / "a", {".hidden", "nested"}, 2, 8, 8, 1);
  std::ofstream((root / "a" / ".DS_Store").string()) << "junk";
  cv::imwrite((root / "b" / "._b.png").string(), netsmith::testutil::patternImage(8, 8, 1, 1));
  const auto project = writeProject(
      dir, R"({"train": {"format": "image_folder", "root": "imgs"}, "normalize": "none"})", 2);
  const Json j = dataStats(project);
  EXPECT_EQ(j["classes"], Json::parse(R"(["a", "b"])"));
  EXPECT_EQ(j["class_counts"]["train"]["a"], 6);  // 4 + 2 in a/nested; a/.hidden ignored
  EXPECT_EQ(j["class_counts"]["train"]["b"], 4);
  EXPECT_EQ(j["skipped"].size(), 0u) << j.dump(1);
}

TEST(DataTruth, ACsvManifestFromASpreadsheetReadsAndTrains) {
  TempDir dir;
  netsmith::testutil::writeImageFolder(dir.path() / "imgs", {"cat", "dog"}, 6, 8, 8, 1);
  fs::rename(dir.path() / "imgs" / "dog" / "img_0.png", dir.path() / "imgs" / "dog" / "a, b.png");
  std::string csv = "\xEF\xBB\xBFpath,label,note\r\n";
  for (int i = 0; i < 6; ++i)
    csv += "imgs/cat/img_" + std::to_string(i) + ".png,cat,\"x, y\"\r\n";
  csv += "\"imgs/dog/a, b.png\",dog,\r\n";
  for (int i = 1; i < 6; ++i)
    csv += "imgs/dog/img_" + std::to_string(i) + ".png,\"dog\",\r\n";
  std::ofstream(dir.file("m.csv"), std::ios::binary) << csv;
  const auto project = writeProject(
      dir, R"({"train": {"format": "csv", "manifest": "m.csv"}, "normalize": "none"})", 2);
  const Json j = dataStats(project);
  EXPECT_EQ(j["splits"]["train"], 12);
  EXPECT_EQ(j["class_counts"]["train"]["dog"], 6);
  EXPECT_EQ(j["skipped"].size(), 0u) << j.dump(1);
  const auto r = runCli("train " + project + " --out " + dir.file("runs"));
  EXPECT_EQ(r.exitCode, 0) << r.output;
}

TEST(DataTruth, ACsvMixingClassIndicesAndNamesIsRefusedAtTheFirstOddRow) {
  TempDir dir;
  netsmith::testutil::writeImageFolder(dir.path() / "imgs", {"cat", "dog"}, 2, 8, 8, 1);
  std::ofstream(dir.file("m.csv")) << "path,label\nimgs/cat/img_0.png,cat\n"
                                      "imgs/dog/img_0.png,dog\nimgs/cat/img_1.png,0\n";
  const auto project = writeProject(
      dir, R"({"train": {"format": "csv", "manifest": "m.csv"}, "normalize": "none"})", 2);
  const auto r = runCli("data-stats " + project);
  EXPECT_EQ(r.exitCode, 2) << r.output;
  EXPECT_NE(r.output.find("m.csv: line 4: label \"0\" is a class index but line 2's label "
                          "\"cat\" is a class name"),
            std::string::npos)
      << r.output;
}

TEST(DataTruth, ValidateRefusesWhatTrainWouldRefuse) {
  TempDir dir;
  netsmith::testutil::writeImageFolder(dir.path() / "imgs", classNames(4), 5, 8, 8, 1);
  const std::string data =
      R"({"train": {"format": "image_folder", "root": "imgs"}, "normalize": "none"})";
  // Three scores for four classes: refused by both, with the fix.
  const auto three = writeProject(dir, data, 3);
  const auto v = runCli("validate " + three);
  EXPECT_EQ(v.exitCode, 2) << v.output;
  const std::string expected =
      "node \"fc\": the model outputs 3 scores but the data has 4 classes; set fc.out_features to "
      "4";
  EXPECT_NE(v.output.find(expected), std::string::npos) << v.output;
  const auto t = runCli("train " + three + " --out " + dir.file("runs"));
  EXPECT_EQ(t.exitCode, 2) << t.output;
  EXPECT_NE(t.output.find(expected), std::string::npos) << t.output;
  // The fitting model validates.
  EXPECT_EQ(runCli("validate " + writeProject(dir, data, 4)).exitCode, 0);
  // A data folder that does not exist.
  const auto missing =
      runCli("validate " +
             writeProject(dir, R"({"train": {"format": "image_folder", "root": "nowhere"}})", 4));
  EXPECT_EQ(missing.exitCode, 2) << missing.output;
  EXPECT_NE(missing.output.find("nowhere: folder not found"), std::string::npos) << missing.output;
  // A test split with no samples (a manifest with only its header).
  std::ofstream(dir.file("empty.csv")) << "path,label\n";
  const auto empty = runCli(
      "validate " + writeProject(dir, R"({"train": {"format": "image_folder", "root": "imgs"},
        "test": {"format": "csv", "manifest": "empty.csv"}})",
                                 4));
  EXPECT_EQ(empty.exitCode, 2) << empty.output;
  EXPECT_NE(empty.output.find("empty.csv: no usable rows"), std::string::npos) << empty.output;
  // A model that is only its Input.
  std::ofstream(dir.file("input.netsmith.json"))
      << R"({"format": "netsmith-project", "version": 1, "name": "bare",
    "model": {"input": {"channels": 1, "height": 8, "width": 8},
              "nodes": [{"id": "input", "op": "Input"}]}})";
  const auto bare = runCli("validate " + dir.file("input.netsmith.json"));
  EXPECT_EQ(bare.exitCode, 2) << bare.output;
  EXPECT_NE(bare.output.find("the model has nothing to train"), std::string::npos) << bare.output;
}
