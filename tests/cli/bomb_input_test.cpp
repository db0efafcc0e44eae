// Models, projects and data built to exhaust memory or time: each ends within 30 s, under
// 1.5 GB resident, with an error that names the place (or imports, when it is only large).
// The files are written here by Debian's Python (onnx, numpy) and zlib.
#include <gtest/gtest.h>
#include <zlib.h>

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "../core/test_support.h"
#include "../core/train_fixtures.h"
#include "cli_runner.h"
#include "common/file_util.h"
#include "common/json.h"
#include "import/onnx_graph.h"

using netsmith::Json;
using netsmith::testutil::runCliMeasured;
using netsmith::testutil::TempDir;

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

constexpr double kLimitSeconds = 30;
constexpr long kLimitKiB = 1536 * 1024;

/// The run ended by itself within the limits. Under AddressSanitizer (several times slower, with
/// shadow memory) only its ending and its message are checked.
void expectBounded(const netsmith::testutil::MeasuredRun& r, const std::string& what) {
  EXPECT_NE(r.exitCode, -1) << what << ": killed (past " << kLimitSeconds * (kSanitized ? 8 : 1)
                            << " s?)\n"
                            << r.output.substr(0, 2000);
  if (kSanitized) return;
  EXPECT_LT(r.seconds, kLimitSeconds) << what;
  EXPECT_LT(r.peakKiB, kLimitKiB) << what << ": " << r.peakKiB / 1024 << " MiB resident";
}

bool pythonHasOnnx() {
  return std::system("/usr/bin/python3 -c 'import onnx, numpy' >/dev/null 2>&1") == 0;
}

/// Writes the ONNX files of the cases below into `dir` with Debian's Python.
void writeOnnxBombs(const TempDir& dir) {
  std::ofstream(dir.file("gen.py")) << R"(import sys, numpy as np
from onnx import helper, TensorProto, numpy_helper, save
d = sys.argv[1]
def model(nodes, inits, out, name):
    g = helper.make_graph(nodes, "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4])],
        [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)], inits)
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), d + "/" + name)
# One 32 MiB initializer read by 200 Identity nodes, as INT8 and as FLOAT.
ids = [helper.make_node("Identity", ["w"], ["i%d" % k]) for k in range(200)]
ids.append(helper.make_node("Relu", ["x"], ["y"]))
model(ids, [numpy_helper.from_array(np.ones(32 << 20, dtype=np.int8), "w")], "y", "int8.onnx")
model(ids, [numpy_helper.from_array(np.ones(8 << 20, dtype=np.float32), "w")], "y", "float.onnx")
# Two 1 MiB float initializers and a Constant of 1 MiB: 3 MiB of tensor values.
three = [helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(
    np.ones(1 << 18, dtype=np.float32), "c")), helper.make_node("Relu", ["x"], ["y"])]
model(three, [numpy_helper.from_array(np.ones(1 << 18, dtype=np.float32), n) for n in "ab"], "y",
      "three.onnx")
# Unnamed Relu chains: past the node cap, and just under it.
def chain(n, name):
    nodes, prev = [], "x"
    for k in range(n):
        nodes.append(helper.make_node("Relu", [prev], ["r%d" % k]))
        prev = "r%d" % k
    model(nodes, [], prev, name)
chain(300000, "relu300k.onnx")
chain(90000, "relu90k.onnx")
# 90,000 MatMul nodes, each read once (by the next).
nodes, prev = [helper.make_node("Flatten", ["x"], ["f"])], "f"
for k in range(90000):
    nodes.append(helper.make_node("MatMul", [prev, "W"], ["m%d" % k]))
    prev = "m%d" % k
model(nodes, [numpy_helper.from_array(np.eye(16, dtype=np.float32), "W")], prev, "matmul90k.onnx")
)";
  ASSERT_EQ(
      std::system(("/usr/bin/python3 " + dir.file("gen.py") + " " + dir.path().string()).c_str()),
      0);
}

void gzipZeros(const std::string& path, const std::string& header, std::uint64_t zeros) {
  gzFile f = gzopen(path.c_str(), "wb9");
  ASSERT_NE(f, nullptr);
  gzwrite(f, header.data(), unsigned(header.size()));
  const std::string block(1 << 20, '\0');
  for (std::uint64_t done = 0; done < zeros; done += block.size())
    gzwrite(f, block.data(), unsigned(block.size()));
  gzclose(f);
}

std::string bigEndian(std::initializer_list<std::uint32_t> words) {
  std::string out;
  for (const auto v : words)
    netsmith::testutil::putBigEndian(out, v);
  return out;
}

}  // namespace

TEST(BombInput, OnnxModelsBuiltToExhaustMemoryOrTime) {
  if (!pythonHasOnnx()) GTEST_SKIP() << "SKIPPED: /usr/bin/python3 has no onnx/numpy";
  TempDir dir;
  writeOnnxBombs(dir);
  const double limit = kLimitSeconds * (kSanitized ? 8 : 1);
  // The Identity bombs: the tensor is held once (not 200 times), INT8 not widened.
  for (const std::string name : {"int8", "float"}) {
    const auto r = runCliMeasured(
        {"import", dir.file(name + ".onnx"), "--out", dir.file(name + ".netsmith.json")}, limit);
    expectBounded(r, name);
    EXPECT_EQ(r.exitCode, 0) << r.output;
  }
  // Past the node cap: refused by count before anything is built.
  auto r = runCliMeasured(
      {"import", dir.file("relu300k.onnx"), "--out", dir.file("r.netsmith.json")}, limit);
  expectBounded(r, "relu300k");
  EXPECT_EQ(r.exitCode, 2) << r.output;
  EXPECT_NE(r.output.find("relu300k.onnx: has 300000 nodes; at most 100000 are imported"),
            std::string::npos)
      << r.output.substr(0, 2000);
  EXPECT_FALSE(std::filesystem::exists(dir.file("r.netsmith.json")));
  // Just under it: unnamed nodes get their ids in one pass, and each MatMul finds its reader
  // without a scan of the rest of the graph.
  for (const std::string name : {"relu90k", "matmul90k"}) {
    r = runCliMeasured(
        {"import", dir.file(name + ".onnx"), "--out", dir.file(name + ".netsmith.json")}, limit);
    expectBounded(r, name);
    EXPECT_EQ(r.exitCode, 0) << r.output.substr(0, 2000);
  }
  // The tensor budget (1 GiB here; 2.5 MiB for this case, a real case would need a file of
  // over 512 MB): the tensor that passes it is named before its values are read, whether an
  // initializer or a Constant's value.
  const std::string three = netsmith::readTextFile(dir.file("three.onnx"));
  EXPECT_NO_THROW(netsmith::import::parseOnnxGraph(three, "three.onnx", 3 << 20));
  try {
    netsmith::import::parseOnnxGraph(three, "three.onnx", (5 << 20) / 2);
    ADD_FAILURE() << "3 MiB of tensors read under a 2.5 MiB budget";
  } catch (const netsmith::Error& e) {
    EXPECT_NE(std::string(e.what()).find("tensor \"c\" (262144 elements) would bring the "
                                         "model's tensors past the 2 MiB read here"),
              std::string::npos)
        << e.what();
  }
  try {
    netsmith::import::parseOnnxGraph(three, "three.onnx", (3 << 20) / 2);
    ADD_FAILURE() << "3 MiB of tensors read under a 1.5 MiB budget";
  } catch (const netsmith::Error& e) {
    EXPECT_NE(std::string(e.what()).find("three.onnx: tensor \"b\" (262144 elements)"),
              std::string::npos)
        << e.what();
  }
  const Json project = Json::parse(std::ifstream(dir.file("relu90k.netsmith.json")));
  const auto& nodes = project["model"]["nodes"];
  ASSERT_EQ(nodes.size(), 90001u);
  EXPECT_EQ(nodes[1]["id"], "relu");
  EXPECT_EQ(nodes[2]["id"], "relu_2");
  EXPECT_EQ(nodes[90000]["id"], "relu_90000");
}

// A 2 MB project: a node id of a million characters, and an input naming a missing id of a
// million characters. Ids are bounded when read, before anything compares them.
TEST(BombInput, MillionCharacterIdsAreRefusedWhenRead) {
  TempDir dir;
  const std::string a(1000000, 'a'), b(1000000, 'b');
  Json nodes = Json::array({Json{{"id", "input"}, {"op", "Input"}},
                            Json{{"id", a}, {"op", "ReLU"}, {"inputs", {"input"}}},
                            Json{{"id", "r"}, {"op", "ReLU"}, {"inputs", {b}}}});
  // And 50,000 nodes whose inputs are all missing: suggestions stay bounded too.
  for (int k = 0; k < 50000; ++k)
    nodes.push_back(Json{
        {"id", "n" + std::to_string(k)}, {"op", "ReLU"}, {"inputs", {"m" + std::to_string(k)}}});
  std::ofstream(dir.file("ids.netsmith.json")) << Json{
      {"format", "netsmith-project"},
      {"version", 1},
      {"name", "ids"},
      {"model", Json{{"input", {{"channels", 1}, {"height", 8}, {"width", 8}}},
                     {"nodes", nodes}}}}.dump();
  const auto r = runCliMeasured({"validate", dir.file("ids.netsmith.json")},
                                kLimitSeconds * (kSanitized ? 8 : 1));
  expectBounded(r, "validate");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(
      r.output.find("model.nodes[1].id: an id of 1000000 characters (\"aaaaaaaaaaaaaaaaaaaaaaaa"
                    "...\"); ids have at most 128"),
      std::string::npos)
      << r.output.substr(0, 2000);
  EXPECT_NE(r.output.find("\"inputs\": an id of 1000000 characters (\"bbbb"), std::string::npos)
      << r.output.substr(0, 2000);
  EXPECT_LT(r.output.size(), 8u << 20);  // no million-character id copied into each message
}

// 0.5 MB of gzip announcing 2^28 images of 1x1 (and as many labels): refused by its count
// before the data is inflated.
TEST(BombInput, AnIdxGzipBombIsRefusedByItsCount) {
  TempDir dir;
  const std::uint32_t n = 1u << 28;
  gzipZeros(dir.file("i.idx.gz"), bigEndian({0x803, n, 1, 1}), n);
  gzipZeros(dir.file("l.idx.gz"), bigEndian({0x801, n}), n);
  EXPECT_LT(std::filesystem::file_size(dir.file("i.idx.gz")), 1u << 20);
  std::ofstream(dir.file("p.netsmith.json")) << R"({"format": "netsmith-project", "version": 1,
    "name": "bomb", "model": {"input": {"channels": 1, "height": 1, "width": 1}, "nodes": [
      {"id": "input", "op": "Input"}, {"id": "f", "op": "Flatten", "inputs": ["input"]},
      {"id": "fc", "op": "Linear", "params": {"out_features": 2}, "inputs": ["f"]}]},
    "data": {"train": {"format": "idx", "images": "i.idx.gz", "labels": "l.idx.gz"},
             "validation": {"fraction": 0.1}}})";
  const std::vector<std::vector<std::string>> commands{
      {"data-stats", dir.file("p.netsmith.json")},
      {"train", dir.file("p.netsmith.json"), "--out", dir.file("runs")}};
  for (const auto& command : commands) {
    const auto r = runCliMeasured(command, kLimitSeconds * (kSanitized ? 8 : 1));
    expectBounded(r, command[0]);
    EXPECT_EQ(r.exitCode, 2) << r.output;
    EXPECT_NE(r.output.find("i.idx.gz: the header announces 268435456 images; an IDX file may "
                            "hold at most 16777216"),
              std::string::npos)
        << r.output;
  }
}

// Two 10000 x 10000 RGB pictures (100 megapixels, the most one image may have) among small
// ones, examined by the doctor with its address space capped at about 1 GB: a decode that runs
// out of memory in a worker thread makes that image a named, skipped sample; the report is
// written and the program ends by itself (an escaped std::bad_alloc would end it by terminate).
TEST(BombInput, HugePicturesPastTheMemoryLeftAreNamedAndSkippedByTheDoctor) {
  if (kSanitized) GTEST_SKIP() << "an address-space cap and AddressSanitizer's shadow memory clash";
  TempDir dir;
  for (const char* cls : {"a", "b"}) {
    std::filesystem::create_directories(dir.path() / "images" / cls);
    for (int i = 0; i < 4; ++i) {
      cv::Mat small(12, 12, CV_8UC3, cv::Scalar(20 * i, cls[0] == 'a' ? 40 : 90, 10));
      cv::circle(small, {3 + i, 6}, 2, cv::Scalar(250, 250, 250), -1);
      cv::imwrite((dir.path() / "images" / cls / ("p" + std::to_string(i) + ".png")).string(),
                  small);
    }
    cv::Mat huge(10000, 10000, CV_8UC3, cv::Scalar(0, 0, 0));
    huge(cv::Rect(0, 0, 5000, 5000)).setTo(cv::Scalar(cls[0] == 'a' ? 200 : 60, 100, 30));
    cv::imwrite((dir.path() / "images" / cls / "huge.png").string(), huge);
  }
  std::ofstream(dir.file("p.netsmith.json")) << R"({"format": "netsmith-project", "version": 1,
    "name": "huge", "model": {"input": {"channels": 3, "height": 12, "width": 12}, "nodes": [
      {"id": "input", "op": "Input"}, {"id": "f", "op": "Flatten", "inputs": ["input"]},
      {"id": "fc", "op": "Linear", "params": {"out_features": 2}, "inputs": ["f"]}]},
    "data": {"train": {"format": "image_folder", "root": "images"}, "fit": "resize"}})";
  const auto r = runCliMeasured(
      {"doctor", dir.file("p.netsmith.json"), "--no-labels", "--out", dir.file("doctor")},
      kLimitSeconds, 1000 * 1024);
  ASSERT_EQ(r.exitCode, 0) << r.output.substr(0, 3000);
  EXPECT_TRUE(std::filesystem::is_regular_file(dir.path() / "doctor" / "report.html"));
  const Json report = Json::parse(std::ifstream(dir.file("doctor/doctor.json")));
  ASSERT_GE(report["unreadable"].get<int>(), 1) << "the cap did not bite: " << r.output;
  ASSERT_EQ(report["unreadable_samples"].size(), report["unreadable"].get<std::size_t>());
  for (const auto& u : report["unreadable_samples"]) {
    const auto item = u["sample"]["item"].get<std::string>();
    EXPECT_NE(item.find("huge.png"), std::string::npos) << item;  // only the huge ones
    EXPECT_FALSE(u["why"].get<std::string>().empty());
    EXPECT_NE(r.output.find("  " + item + ": "), std::string::npos) << r.output;  // named
  }
  EXPECT_EQ(report["examined"].get<int>(), 10);
}

// sweep.parallel (up to 64) x train.local_processes (up to 256) could start 16,000 LibTorch
// processes: bounded by the machine, and the message says the bound.
TEST(BombInput, ProcessCountsAreBoundedByTheMachine) {
  TempDir dir;
  const auto project = netsmith::testutil::writeTrainProject(dir, {{"local_processes", 256}});
  Json j = Json::parse(std::ifstream(project));
  j["sweep"] = Json::parse(R"({"method": "grid", "params": [
      {"path": "train.optimizer.lr", "choice": [0.01, 0.02]}]})");
  std::ofstream(project) << j.dump(1);
  const auto sweep = runCliMeasured(
      {"sweep", project, "--parallel", "64", "--out", dir.file("sweeps")}, kLimitSeconds * 8);
  EXPECT_EQ(sweep.exitCode, 2) << sweep.output;
  EXPECT_NE(sweep.output.find("2 trials at once, each with train.local_processes 256, would "
                              "start 512 training processes: more than the"),
            std::string::npos)
      << sweep.output;
  const auto train =
      runCliMeasured({"train", project, "--out", dir.file("runs")}, kLimitSeconds * 8);
  EXPECT_EQ(train.exitCode, 2) << train.output;
  EXPECT_NE(train.output.find("train.local_processes is 256: more than the"), std::string::npos)
      << train.output;
  EXPECT_NE(train.output.find("processes at once on this machine"), std::string::npos)
      << train.output;
}
