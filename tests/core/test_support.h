#pragma once

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdlib>
#include <functional>
#include <optional>
#include <string>

#include "common/error.h"
#include "export/onnx_runtime.h"
#include "ops/op_registry.h"
#include "project/project.h"

namespace netsmith::testutil {

/// What `fn` throws as netsmith::Error, or "(no error)".
inline std::string errorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

/// Seeds LibTorch so every test is repeatable.
class SeededTest : public ::testing::Test {
 protected:
  void SetUp() override { torch::manual_seed(0); }
  const ops::OpRegistry registry = ops::OpRegistry::withBuiltins();
};

/// A project around a model section written inline:
///   parseModel(R"({"input": {...}, "nodes": [...]})")
inline project::LoadedProject parseModel(const std::string& modelJson) {
  const std::string text =
      R"({"format": "netsmith-project", "version": 1, "name": "t", "model": )" + modelJson + "}";
  return project::parseProject(text, "test.netsmith.json");
}

/// All problems of a project, one per line.
inline std::string problemsText(const project::LoadedProject& loaded,
                                const ops::OpRegistry& registry) {
  return formatProblems(project::validateProject(loaded, registry));
}

/// Random weights (uniform in +-`weights`), running means (+-`means`) and running variances
/// (0.5..1.5), so that exports and explanations are checked away from the initial values.
inline void randomiseWeights(torch::nn::Module& net, double weights, double means) {
  torch::NoGradGuard noGrad;
  for (auto& item : net.named_parameters())
    item.value().uniform_(-weights, weights);
  for (auto& item : net.named_buffers()) {
    if (item.key().find("running_mean") != std::string::npos) item.value().uniform_(-means, means);
    if (item.key().find("running_var") != std::string::npos) item.value().uniform_(0.5, 1.5);
  }
}

inline std::string sourcePath(const std::string& relative) {
  return std::string(NETSMITH_SOURCE_DIR) + "/" + relative;
}

/// ONNX Runtime for a test (export/onnx_runtime.h). Not found, the test fails saying why and how
/// to install it, unless NETSMITH_ONNXRUNTIME=off asks to go without; the caller skips on nullopt.
inline std::optional<exporting::OnnxRuntimeLocation> onnxRuntimeForTest() {
  std::string why;
  auto ort = exporting::findOnnxRuntime(&why);
  const char* setting = std::getenv("NETSMITH_ONNXRUNTIME");
  if (!ort && !(setting && std::string(setting) == "off")) ADD_FAILURE() << why;
  return ort;
}

}  // namespace netsmith::testutil
