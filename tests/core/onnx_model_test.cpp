// An exported ONNX file loaded to use (export/onnx_model.h): its metadata gives back what its
// checkpoint knew (project, classes, normalisation, fit, task state), its forward() runs the
// file in ONNX Runtime and gives LibTorch's output; files that are not Netsmith exports are
// refused by name.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>

#include "common/error.h"
#include "common/file_util.h"
#include "export/onnx_export.h"
#include "export/onnx_model.h"
#include "graph/graph_module.h"
#include "registries/registries.h"
#include "test_support.h"

using namespace netsmith;
using namespace netsmith::exporting;
using netsmith::testutil::TempDir;

namespace {

/// The small ResNet template with random weights, classes, a normalisation and a fit.
ExportModel smallModel(const RegistriesPtr& registries) {
  auto loaded =
      project::loadProject(testutil::sourcePath("resources/templates/small_resnet.netsmith.json"));
  const std::shared_ptr<const ops::OpRegistry> ops(registries, &registries->ops);
  torch::manual_seed(3);
  graph::GraphModule net(loaded.project.model, *ops);
  testutil::randomiseWeights(*net, 0.1, 0.1);
  auto model = exportModelFrom(loaded.project, std::move(net), ops);
  for (int c = 0; c < 10; ++c)
    model.classes.push_back("class " + std::to_string(c));
  const auto channels = std::size_t(loaded.project.model.input.channels);
  model.mean.assign(channels, 0.25);
  model.std.assign(channels, 0.5);
  model.fit = data::FitPolicy::ResizeCrop;
  model.taskState = Json{{"note", "kept"}};
  return model;
}

/// `bytes` with `from` replaced by `to` once (the same length, so the protobuf stays valid).
std::string replacedOnce(std::string bytes, const std::string& from, const std::string& to) {
  const auto at = bytes.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  EXPECT_EQ(from.size(), to.size());
  if (at != std::string::npos) bytes.replace(at, from.size(), to);
  return bytes;
}

std::string errorOf(const std::string& path, const RegistriesPtr& registries) {
  try {
    readOnnxModelFile(path, registries);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST(OnnxModel, AnExportRunsAsItsCheckpointInOnnxRuntime) {
  const auto ort = testutil::onnxRuntimeForTest();
  if (!ort) GTEST_SKIP() << "ONNX Runtime is turned off";
  const RegistriesPtr registries = Registries::builtins();
  const auto model = smallModel(registries);
  OnnxOptions options;
  options.output = "logits";
  options.metadata = {{"task", model.project.task}, {"output", "logits"}};
  TempDir dir;
  const std::string path = dir.file("model.onnx");
  writeFileAtomically(path, buildOnnx(model, options));

  const auto loaded = loadOnnxModel(path, registries);
  EXPECT_EQ(loaded.classes, model.classes);
  EXPECT_EQ(loaded.mean, model.mean);
  EXPECT_EQ(loaded.std, model.std);
  EXPECT_EQ(loaded.fit, data::FitPolicy::ResizeCrop);
  EXPECT_EQ(loaded.taskState, model.taskState);
  EXPECT_EQ(loaded.project.task, model.project.task);
  EXPECT_EQ(loaded.project.model.input.height, model.project.model.input.height);
  EXPECT_EQ(loaded.runtime, ort->name());
  EXPECT_FALSE(loaded.net);  // run by ONNX Runtime, not LibTorch
  const auto& in = model.project.model.input;
  const auto x = torch::randn({5, in.channels, in.height, in.width});
  const auto want = model.forward(x);
  const auto got = loaded.forward(x);
  ASSERT_EQ(got.sizes(), want.sizes());
  EXPECT_LT((got - want).abs().max().item<double>(), 1e-4);
  EXPECT_TRUE(isOnnxPath(path));
  EXPECT_TRUE(isOnnxPath("A.ONNX"));
  EXPECT_FALSE(isOnnxPath("best.safetensors"));
}

TEST(OnnxModel, FilesThatAreNotNetsmithExportsAreRefusedByName) {
  const RegistriesPtr registries = Registries::builtins();
  const auto model = smallModel(registries);
  OnnxOptions options;
  options.output = "logits";
  options.metadata = {{"task", model.project.task}, {"output", "logits"}};
  const std::string bytes = buildOnnx(model, options);
  TempDir dir;
  const auto refused = [&](const std::string& name, const std::string& content,
                           const std::string& says) {
    const std::string path = dir.file(name);
    writeFileAtomically(path, content);
    const std::string error = errorOf(path, registries);
    EXPECT_NE(error.find(path), std::string::npos) << error;
    EXPECT_NE(error.find(says), std::string::npos) << error;
  };
  refused("junk.onnx", "\x1b[31mnot a model at all", "not an ONNX model");
  // Exported elsewhere: no project in its metadata.
  refused("foreign.onnx", replacedOnce(bytes, "netsmith_snapshot", "someone_snapshots"),
          "carries no Netsmith project");
  // A snapshot whose model section is broken.
  refused("broken.onnx", replacedOnce(bytes, "\"nodes\"", "\"nodez\""),
          "project snapshot has problems");
  // Metadata that names an output the graph lacks.
  OnnxOptions wrongOutput = options;
  wrongOutput.metadata = {{"task", model.project.task}, {"output", "values"}};
  refused("output.onnx", buildOnnx(model, wrongOutput), "has no output \"values\"");
  // Another task than its snapshot's.
  OnnxOptions wrongTask = options;
  wrongTask.metadata = {{"task", "regression"}, {"output", "logits"}};
  refused("task.onnx", buildOnnx(model, wrongTask), "is not its snapshot's task");
}
