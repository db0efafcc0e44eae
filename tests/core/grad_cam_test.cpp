// Grad-CAM: core's map equals the one Python PyTorch computes on the exported model.py with the
// same weights and input (Debian's python3-torch); the default node is the last convolution;
// a node without a feature map and a class out of range are refused by name.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "checkpoint/checkpoint.h"
#include "common/file_util.h"
#include "data_fixtures.h"
#include "explain/grad_cam_map.h"
#include "export/exporter.h"
#include "pytorch_reference.h"
#include "test_support.h"

using namespace netsmith;
using netsmith::testutil::TempDir;

namespace {

/// Two convolutions (the second followed by BatchNorm and ReLU), pooling and a 3-class head,
/// with random weights.
exporting::ExportModel camModel() {
  auto loaded = testutil::parseModel(R"({"input": {"channels": 1, "height": 12, "width": 12},
    "nodes": [{"id": "input", "op": "Input"},
      {"id": "conv1", "op": "Conv2d", "params": {"out_channels": 4, "kernel_size": 3, "padding": 1}, "inputs": ["input"]},
      {"id": "relu1", "op": "ReLU", "inputs": ["conv1"]},
      {"id": "conv2", "op": "Conv2d", "params": {"out_channels": 6, "kernel_size": 3}, "inputs": ["relu1"]},
      {"id": "bn", "op": "BatchNorm2d", "inputs": ["conv2"]},
      {"id": "relu2", "op": "ReLU", "inputs": ["bn"]},
      {"id": "gap", "op": "GlobalAvgPool", "inputs": ["relu2"]},
      {"id": "flat", "op": "Flatten", "inputs": ["gap"]},
      {"id": "fc", "op": "Linear", "params": {"out_features": 3}, "inputs": ["flat"]}]})");
  EXPECT_TRUE(loaded.problems.empty()) << formatProblems(loaded.problems);
  auto registry = std::make_shared<ops::OpRegistry>(ops::OpRegistry::withBuiltins());
  torch::manual_seed(3);
  graph::GraphModule net(loaded.project.model, *registry);
  testutil::randomiseWeights(*net, 0.6, 0.2);
  return exporting::exportModelFrom(loaded.project, std::move(net), registry);
}

}  // namespace

TEST(GradCam, MatchesPyTorchOnTheExportedModel) {
  if (std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "SKIPPED: /usr/bin/python3 has no torch (install python3-torch to run this)";
  }
  TempDir dir;
  auto model = camModel();
  torch::manual_seed(11);
  const auto x = torch::rand({1, 1, 12, 12});
  testutil::writeForPyTorch(model, dir, x);
  const std::string python = testutil::runWithPyTorch(
      dir,
      "for node, target in (('conv2', -1), ('conv1', 2)):\n"
      "    seen = {}\n"
      "    hook = dict(net.named_modules())[node].register_forward_hook(\n"
      "        lambda mod, inp, out: seen.__setitem__('a', out))\n"
      "    logits = net(x)\n"
      "    hook.remove()\n"
      "    cls = int(logits.argmax(1)) if target < 0 else target\n"
      "    a = seen['a']\n"
      "    g, = torch.autograd.grad(logits[0, cls], a)\n"
      "    cam = torch.relu((g.mean(dim=(2, 3), keepdim=True) * a).sum(1, keepdim=True))\n"
      "    cam = torch.nn.functional.interpolate(cam, size=x.shape[2:], mode='bilinear',\n"
      "                                          align_corners=False)[0, 0]\n"
      "    cam = cam / cam.max() if float(cam.max()) > 0 else cam\n"
      "    print(cls, ' '.join(repr(float(v)) for v in cam.flatten()))\n");
  if (HasFailure()) return;
  // Trainable, then frozen as a fine-tuned backbone is (no parameter needs a gradient): the
  // map is of gradients with respect to the activation, so it is the same.
  for (const bool frozen : {false, true}) {
    SCOPED_TRACE(frozen ? "frozen" : "trainable");
    for (auto& p : model.net->parameters())
      p.requires_grad_(!frozen);
    std::istringstream lines(python);
    for (const auto& [node, target] : {std::pair<std::string, int>{"conv2", -1}, {"conv1", 2}}) {
      const auto cam = explain::gradCamMap(*model.net, x, node, target);
      std::string line;
      ASSERT_TRUE(std::getline(lines, line));
      std::istringstream in(line);
      std::int64_t cls = -1;
      in >> cls;
      EXPECT_EQ(cls, cam.targetClass) << node;
      ASSERT_EQ(cam.heat.sizes(), (std::vector<std::int64_t>{12, 12}));
      const auto heat = cam.heat.flatten();
      double peak = 0;
      for (std::int64_t i = 0; i < heat.numel(); ++i) {
        double v = -1;
        ASSERT_TRUE(in >> v) << line;
        EXPECT_NEAR(heat[i].item<double>(), v, 1e-4) << node << " pixel " << i;
        peak = std::max(peak, v);
      }
      EXPECT_NEAR(peak, 1.0, 1e-6) << node;  // normalised by its maximum
    }
  }
}

TEST(GradCam, DefaultsToTheLastConvolutionAndRefusesWhatItCannotMap) {
  auto model = camModel();
  EXPECT_EQ(explain::defaultGradCamNode(model.net->analysis()), "conv2");
  const auto x = torch::rand({1, 1, 12, 12});
  const auto cam = explain::gradCamMap(*model.net, x, "relu2", -1);
  EXPECT_NEAR(cam.probabilities.sum().item<double>(), 1.0, 1e-5);
  EXPECT_EQ(cam.predicted, cam.probabilities.argmax().item<std::int64_t>());
  auto fails = [&](const std::string& node, std::int64_t cls, const std::string& expected) {
    try {
      explain::gradCamMap(*model.net, x, node, cls);
      ADD_FAILURE() << "no error for " << node << " / " << cls;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  };
  fails("fc", -1, "node \"fc\" gives 3");
  fails("nope", -1, "no node \"nope\"");
  fails("conv2", 7, "class 7 is out of range (the model has 3 classes)");
}
