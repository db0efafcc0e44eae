// ONNX Runtime as the second runtime: its outputs against arithmetic done here, every template's
// export against LibTorch, its refusals made printable, the export going on without it where it
// is missing, timing, and a child that runs too long stopped. The deploy bench's costs of a
// model counted by hand, and its percentiles.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "common/file_util.h"
#include "common/subprocess.h"
#include "data_fixtures.h"
#include "export/deploy_bench.h"
#include "export/exporter.h"
#include "graph/graph_module.h"
#include "test_support.h"

using namespace netsmith;
using namespace netsmith::exporting;
using netsmith::testutil::TempDir;

namespace {

/// Sets an environment variable for a scope, then puts back what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : m_name(name) {
    if (const char* old = std::getenv(name)) m_old = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (m_old)
      ::setenv(m_name, m_old->c_str(), 1);
    else
      ::unsetenv(m_name);
  }

 private:
  const char* m_name;
  std::optional<std::string> m_old;
};

/// 1 x 2 x 2 input -> Flatten -> Linear(4 -> 3) with the weights given.
ExportModel linearModel(const std::vector<float>& weight, const std::vector<float>& bias) {
  auto loaded = testutil::parseModel(
      R"({"input": {"channels": 1, "height": 2, "width": 2}, "nodes": [
          {"id": "input", "op": "Input"},
          {"id": "f", "op": "Flatten", "inputs": ["input"]},
          {"id": "fc", "op": "Linear", "params": {"out_features": 3}, "inputs": ["f"]}]})");
  EXPECT_TRUE(loaded.problems.empty()) << formatProblems(loaded.problems);
  auto registry = std::make_shared<ops::OpRegistry>(ops::OpRegistry::withBuiltins());
  graph::GraphModule net(loaded.project.model, *registry);
  {
    torch::NoGradGuard noGrad;
    for (auto& item : net->named_parameters()) {
      const auto& values = item.key().find("weight") != std::string::npos ? weight : bias;
      item.value().copy_(torch::tensor(values).reshape(item.value().sizes()));
    }
  }
  auto m = exportModelFrom(loaded.project, std::move(net), registry);
  m.classes = {"a", "b", "c"};
  return m;
}

}  // namespace

TEST(OnnxRuntime, ComputesWhatArithmeticGives) {
  const auto ort = testutil::onnxRuntimeForTest();
  if (!ort) GTEST_SKIP() << "ONNX Runtime is turned off";
  // y = W x + b, with the values chosen here and the answer worked out by hand.
  const std::vector<float> w{1, 0, 0, 0, /**/ 0, 2, 0, -1, /**/ 0.5f, 0.5f, 0.5f, 0.5f};
  const auto model = linearModel(w, {0, 1, -2});
  OnnxRuntimeFeed feed;
  feed.inputs["input"] = HostTensor{{2, 1, 2, 2}, {1, 2, 3, 4, /**/ -1, 0, 0, 5}, {}, false};
  feed.outputs = {"logits"};
  const auto out = runOnnxRuntimeOnBytes(*ort, buildOnnx(model, {}), {feed});
  ASSERT_EQ(out.size(), 1u);
  const auto& y = out[0].at("logits");
  EXPECT_EQ(y.dims, (std::vector<std::int64_t>{2, 3}));
  const std::vector<float> want{1, 0 + 4 - 4 + 1, 5 - 2, /**/ -1, 0 - 5 + 1, 2 - 2};
  ASSERT_EQ(y.values.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(y.values[i], want[i], 1e-6) << i;
  EXPECT_FALSE(ort->version.empty());
}

TEST(OnnxRuntime, EveryTemplateMatchesLibTorch) {
  const auto ort = testutil::onnxRuntimeForTest();
  if (!ort) GTEST_SKIP() << "ONNX Runtime is turned off";
  int count = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(testutil::sourcePath("resources/templates"))) {
    auto loaded = project::loadProject(entry.path().string());
    auto registry = std::make_shared<ops::OpRegistry>(ops::OpRegistry::withBuiltins());
    torch::manual_seed(3);
    graph::GraphModule net(loaded.project.model, *registry);
    testutil::randomiseWeights(*net, 0.2, 0.3);
    const auto model = exportModelFrom(loaded.project, std::move(net), registry);
    const auto report =
        checkOnnxRuntimeParity(*ort, buildOnnx(model, {}), model, randomParityBatches(model));
    EXPECT_TRUE(report.passed()) << entry.path() << ": " << report.summary();
    EXPECT_EQ(report.samples, 8);
    EXPECT_EQ(report.runtime, ort->name());
    ++count;
  }
  EXPECT_GE(count, 4);
}

TEST(OnnxRuntime, ARefusalIsNamedAndPrintable) {
  const auto ort = testutil::onnxRuntimeForTest();
  if (!ort) GTEST_SKIP() << "ONNX Runtime is turned off";
  OnnxRuntimeFeed feed;
  feed.inputs["input"] = HostTensor{{1, 1, 2, 2}, {1, 2, 3, 4}, {}, false};
  feed.outputs = {"logits"};
  const std::string garbage = "\x1b]0;owned\x07\x1b[31mnot a model at all";
  const std::string loadError =
      testutil::errorOf([&] { runOnnxRuntimeOnBytes(*ort, garbage, {feed}); });
  EXPECT_NE(loadError.find("ONNX Runtime cannot load the model"), std::string::npos) << loadError;
  EXPECT_EQ(loadError.find('\x1b'), std::string::npos) << loadError;
  EXPECT_EQ(loadError.find('\x07'), std::string::npos) << loadError;

  // An input of the wrong shape is the runtime's refusal, said as such.
  const auto model = linearModel(std::vector<float>(12, 0.f), {0, 0, 0});
  feed.inputs["input"] = HostTensor{{1, 1, 3, 3}, std::vector<float>(9, 1.f), {}, false};
  const std::string runError =
      testutil::errorOf([&] { runOnnxRuntimeOnBytes(*ort, buildOnnx(model, {}), {feed}); });
  EXPECT_NE(runError.find("ONNX Runtime cannot run the model"), std::string::npos) << runError;
  // And an input that does not hold its shape's values never reaches it.
  feed.inputs["input"] = HostTensor{{1, 1, 2, 2}, {1, 2}, {}, false};
  EXPECT_NE(testutil::errorOf([&] {
              runOnnxRuntimeOnBytes(*ort, buildOnnx(model, {}), {feed});
            }).find("does not hold its shape's floats"),
            std::string::npos);
}

TEST(OnnxRuntime, TimesRunsOfOneShape) {
  const auto ort = testutil::onnxRuntimeForTest();
  if (!ort) GTEST_SKIP() << "ONNX Runtime is turned off";
  TempDir dir;
  const auto model = linearModel(std::vector<float>(12, 0.5f), {0, 0, 0});
  writeFileAtomically(dir.file("m.onnx"), buildOnnx(model, {}));
  const auto timing = timeOnnxRuntime(*ort, dir.file("m.onnx"), "input", {1, 1, 2, 2}, 1, 2, 25, 0);
  EXPECT_EQ(timing.ms.size(), 25u);
  for (const double ms : timing.ms) {
    EXPECT_GT(ms, 0);
    EXPECT_LT(ms, 5000);
  }
}

TEST(OnnxRuntime, WithoutItTheExportIsCheckedInOpenCvAndSaysWhy) {
  TempDir dir;
  ScopedEnv env("NETSMITH_ONNXRUNTIME", dir.file("nowhere"));
  std::string why;
  EXPECT_FALSE(findOnnxRuntime(&why));
  EXPECT_NE(why.find(dir.file("nowhere")), std::string::npos) << why;
  ExportRequest request;
  request.path = dir.file("m.onnx");
  const auto model = linearModel(std::vector<float>(12, 0.25f), {1, 2, 3});
  const auto r = ExporterRegistry::withBuiltins().find("onnx")->run(model, request);
  EXPECT_TRUE(r.verified) << r.message;
  EXPECT_TRUE(r.written);
  ASSERT_TRUE(r.parity);
  EXPECT_EQ(r.parity->runtime.rfind("OpenCV DNN", 0), 0u);
  EXPECT_FALSE(r.runtimeParity);
  EXPECT_NE(r.message.find("ONNX Runtime was not found in " + dir.file("nowhere")),
            std::string::npos)
      << r.message;
  EXPECT_EQ(r.toJson().value("onnxruntime_note", std::string()), r.runtimeNote);
}

TEST(OnnxRuntime, TheExportReportsBothRuntimes) {
  const auto ort = testutil::onnxRuntimeForTest();
  if (!ort) GTEST_SKIP() << "ONNX Runtime is turned off";
  TempDir dir;
  ExportRequest request;
  request.path = dir.file("m.onnx");
  const auto model = linearModel({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {1, 2, 3});
  const auto r = ExporterRegistry::withBuiltins().find("onnx")->run(model, request);
  EXPECT_TRUE(r.verified) << r.message;
  ASSERT_TRUE(r.parity && r.runtimeParity) << r.message;
  EXPECT_TRUE(r.runtimeParity->passed());
  EXPECT_NE(r.message.find("parity passed (" + ort->name() + " vs LibTorch)"), std::string::npos)
      << r.message;
  const auto json = r.toJson();
  EXPECT_EQ(json["onnxruntime_parity"]["runtime"], ort->name());
  EXPECT_EQ(json["onnxruntime_parity"]["samples"], 8);
}

TEST(Subprocess, AChildThatRunsTooLongIsStopped) {
  SpawnSpec spec;
  spec.program = "/bin/sleep";
  spec.args = {"30"};
  spec.what = "a sleeper";
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = spawnChild(spec);
  const std::string error = testutil::errorOf([&] { waitChildFor(pid, 0.3, spec.what); });
  EXPECT_NE(error.find("a sleeper took longer than 0.3 s"), std::string::npos) << error;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 10);
  EXPECT_NE(::kill(pid, 0), 0);  // reaped: no such process
  // A child that ends in time gives its status.
  spec.program = "/bin/true";
  spec.args = {};
  EXPECT_TRUE(exitedWell(waitChildFor(spawnChild(spec), 30, spec.what)));
}

TEST(DeployBench, CostsOfAHandBuiltModel) {
  TempDir dir;
  // 1 x 2 x 2 -> Flatten -> Linear(4 -> 3): 12 weights and 3 biases, 12 multiply-accumulates.
  const auto model = linearModel(std::vector<float>(12, 0.5f), {0, 0, 0});
  const std::string bytes = buildOnnx(model, {});
  writeFileAtomically(dir.file("m.onnx"), bytes);
  const auto cost = onnxCost(dir.file("m.onnx"));
  EXPECT_EQ(cost.fileBytes, std::int64_t(bytes.size()));
  EXPECT_EQ(cost.parameters, 15);
  EXPECT_EQ(cost.quantizedWeights, 0);
  EXPECT_EQ(cost.macs, 12);
  EXPECT_EQ(cost.inputName, "input");
  EXPECT_EQ(cost.inputDims, (std::vector<std::int64_t>{1, 2, 2}));
  EXPECT_EQ(cost.outputs, (std::vector<std::string>{"logits"}));
}

TEST(DeployBench, PercentilesAreNumpys) {
  // numpy.percentile([4, 1, 3, 2], q) with linear interpolation: 2.5 at 50, 3.85 at 95.
  EXPECT_DOUBLE_EQ(percentile({4, 1, 3, 2}, 50), 2.5);
  EXPECT_DOUBLE_EQ(percentile({4, 1, 3, 2}, 95), 3.85);
  EXPECT_DOUBLE_EQ(percentile({7}, 95), 7);
  EXPECT_DOUBLE_EQ(percentile({}, 50), 0);
}

TEST(DeployBench, AFileThatIsNoImageModelIsRefusedByName) {
  TempDir dir;
  writeFileAtomically(dir.file("junk.onnx"), "\x1b[2Jnot protobuf at all \xff\xfe");
  EXPECT_NE(testutil::errorOf([&] {
              onnxCost(dir.file("junk.onnx"));
            }).find(dir.file("junk.onnx") + ": not an ONNX model"),
            std::string::npos);
  EXPECT_NE(
      testutil::errorOf([&] { benchOnnxModel(dir.file("missing.onnx"), {}); }).find("missing.onnx"),
      std::string::npos);
}
