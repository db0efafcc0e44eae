#include "graph/graph_module.h"

#include "ops/node_layer.h"
#include "test_support.h"

using namespace netsmith;

class GraphModuleTest : public testutil::SeededTest {
 protected:
  /// The small Fashion-MNIST CNN (the first default project, kept as a template).
  project::Project defaultProject() {
    auto loaded = project::loadProject(
        testutil::sourcePath("resources/templates/fashion_mnist_cnn.netsmith.json"));
    EXPECT_TRUE(loaded.problems.empty());
    return loaded.project;
  }
};

TEST_F(GraphModuleTest, ParameterNamesComeFromNodeIds) {
  graph::GraphModule net(defaultProject().model, registry);
  std::vector<std::string> names;
  for (const auto& item : net->named_parameters())
    names.push_back(item.key());
  const std::vector<std::string> expected = {
      "conv1.weight", "conv1.bias", "bn1.weight", "bn1.bias", "conv2.weight", "conv2.bias",
      "bn2.weight",   "bn2.bias",   "fc1.weight", "fc1.bias", "fc2.weight",   "fc2.bias"};
  EXPECT_EQ(names, expected);
  std::vector<std::string> buffers;
  for (const auto& item : net->named_buffers())
    buffers.push_back(item.key());
  EXPECT_NE(std::find(buffers.begin(), buffers.end(), "bn1.running_mean"), buffers.end());
  EXPECT_NE(std::find(buffers.begin(), buffers.end(), "bn2.num_batches_tracked"), buffers.end());
}

TEST_F(GraphModuleTest, ParameterCountEqualsAnalysis) {
  graph::GraphModule net(defaultProject().model, registry);
  std::int64_t numel = 0;
  for (const auto& p : net->parameters())
    numel += p.numel();
  EXPECT_EQ(numel, net->analysis().totalParams);
  EXPECT_EQ(numel, 421834);
}

// The default CNN written by hand with LibTorch's own layers, weights copied over: both must
// compute the same function, in eval mode and (with the same dropout seed) in train mode.
TEST_F(GraphModuleTest, DefaultCnnEqualsHandWrittenSequential) {
  graph::GraphModule net(defaultProject().model, registry);
  namespace nn = torch::nn;
  nn::Conv2d conv1(nn::Conv2dOptions(1, 32, 3).padding(1)),
      conv2(nn::Conv2dOptions(32, 64, 3).padding(1));
  nn::BatchNorm2d bn1(32), bn2(64);
  nn::Linear fc1(3136, 128), fc2(128, 10);
  nn::Sequential ref(conv1, bn1, nn::ReLU(), nn::MaxPool2d(nn::MaxPool2dOptions(2)), conv2, bn2,
                     nn::ReLU(), nn::MaxPool2d(nn::MaxPool2dOptions(2)), nn::Flatten(), fc1,
                     nn::ReLU(), nn::Dropout(0.3), fc2);
  // Everything before the dropout, sharing the layers (the graph's dropout draws its own mask).
  nn::Sequential head(conv1, bn1, nn::ReLU(), nn::MaxPool2d(nn::MaxPool2dOptions(2)), conv2, bn2,
                      nn::ReLU(), nn::MaxPool2d(nn::MaxPool2dOptions(2)), nn::Flatten(), fc1,
                      nn::ReLU());
  const std::map<std::string, std::string> rename = {{"conv1", "0"}, {"bn1", "1"}, {"conv2", "4"},
                                                     {"bn2", "5"},   {"fc1", "9"}, {"fc2", "12"}};
  auto refParams = ref->named_parameters();
  auto refBuffers = ref->named_buffers();
  {
    torch::NoGradGuard noGrad;
    for (const auto& item : net->named_parameters()) {
      const auto dot = item.key().find('.');
      const auto name = rename.at(item.key().substr(0, dot)) + item.key().substr(dot);
      refParams[name].copy_(item.value());
    }
  }
  const auto x = torch::randn({8, 1, 28, 28});
  // Train mode: batch statistics, up to the dropout (whose mask is tested in
  // cpu_kernels_test.cpp).
  net->train();
  ref->train();
  torch::Tensor a;
  net->forwardTapping(x, "relu3", a);
  const auto b = head->forward(x);
  EXPECT_TRUE(torch::allclose(a, b, 1e-5, 1e-5)) << (a - b).abs().max().item<float>();
  // Running statistics were updated identically.
  for (const auto& item : net->named_buffers()) {
    const auto dot = item.key().find('.');
    const auto name = rename.at(item.key().substr(0, dot)) + item.key().substr(dot);
    EXPECT_TRUE(torch::allclose(item.value().to(torch::kDouble),
                                refBuffers[name].to(torch::kDouble), 1e-5, 1e-6))
        << item.key();
  }
  // Eval mode: running statistics, no dropout.
  net->eval();
  ref->eval();
  const auto c = net->forward(x);
  const auto d = ref->forward(x);
  EXPECT_TRUE(torch::allclose(c, d, 1e-5, 1e-6)) << (c - d).abs().max().item<float>();
  EXPECT_EQ(c.sizes().vec(), (std::vector<std::int64_t>{8, 10}));
}

TEST_F(GraphModuleTest, GradientsFlowToEveryTrainableParameter) {
  graph::GraphModule net(defaultProject().model, registry);
  const auto loss = net->forward(torch::randn({4, 1, 28, 28})).pow(2).mean();
  loss.backward();
  for (const auto& item : net->named_parameters()) {
    ASSERT_TRUE(item.value().grad().defined()) << item.key();
    EXPECT_GT(item.value().grad().abs().sum().item<double>(), 0.0) << item.key();
  }
}

TEST_F(GraphModuleTest, ResidualGraphRunsAndMatchesManualComputation) {
  const auto loaded =
      testutil::parseModel(R"({"input": {"channels": 2, "height": 5, "width": 5}, "nodes": [
      {"id": "input", "op": "Input"},
      {"id": "c", "op": "Conv2d", "params": {"out_channels": 2, "padding": "same"}, "inputs": ["input"]},
      {"id": "r", "op": "ReLU", "inputs": ["c"]},
      {"id": "sum", "op": "Add", "inputs": ["r", "input"]},
      {"id": "cat", "op": "Concat", "inputs": ["sum", "input"]}]})");
  ASSERT_TRUE(loaded.problems.empty());
  graph::GraphModule net(loaded.project.model, registry);
  const auto x = torch::randn({3, 2, 5, 5});
  const auto out = net->forward(x);
  auto conv = std::dynamic_pointer_cast<torch::nn::Module>(net->layer("c"));
  const auto params = conv->named_parameters();
  const auto expected =
      torch::cat({torch::relu(torch::conv2d(x, params["weight"], params["bias"], 1, 1)) + x, x}, 1);
  EXPECT_TRUE(torch::allclose(out, expected, 1e-5, 1e-6));
}

TEST_F(GraphModuleTest, InitOverridesAndFrozenNodes) {
  const auto loaded =
      testutil::parseModel(R"({"input": {"channels": 1, "height": 4, "width": 4}, "nodes": [
      {"id": "input", "op": "Input"},
      {"id": "c", "op": "Conv2d", "params": {"out_channels": 3}, "inputs": ["input"], "init": "zeros", "frozen": true},
      {"id": "bn", "op": "BatchNorm2d", "inputs": ["c"], "init": "zeros"},
      {"id": "f", "op": "Flatten", "inputs": ["bn"]},
      {"id": "fc", "op": "Linear", "params": {"out_features": 2}, "inputs": ["f"], "init": "xavier_uniform"}]})");
  graph::GraphModule net(loaded.project.model, registry);
  const auto params = net->named_parameters();
  EXPECT_EQ(params["c.weight"].abs().sum().item<double>(), 0.0);
  EXPECT_FALSE(params["c.weight"].requires_grad());
  EXPECT_FALSE(params["c.bias"].requires_grad());
  EXPECT_EQ(params["bn.weight"].abs().sum().item<double>(), 0.0);
  EXPECT_TRUE(params["fc.weight"].requires_grad());
  EXPECT_EQ(params["fc.bias"].abs().sum().item<double>(), 0.0);
  const double bound = std::sqrt(6.0 / (12 + 2));
  EXPECT_LE(params["fc.weight"].abs().max().item<double>(), bound);
  EXPECT_GT(params["fc.weight"].abs().max().item<double>(), 0.0);
  EXPECT_EQ(net->analysis().trainableParams, net->analysis().totalParams - (3 * 1 * 9 + 3));
}

TEST_F(GraphModuleTest, InvalidGraphIsRefusedWithItsProblems) {
  const auto loaded =
      testutil::parseModel(R"({"input": {"channels": 1, "height": 4, "width": 4}, "nodes": [
      {"id": "input", "op": "Input"}, {"id": "fc", "op": "Linear", "params": {"out_features": 2}, "inputs": ["input"]}]})");
  try {
    graph::GraphModule net(loaded.project.model, registry);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("node \"fc\": Linear expects a flat vector"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(GraphModuleTest, WrongInputTensorIsAClearError) {
  graph::GraphModule net(defaultProject().model, registry);
  try {
    net->forward(torch::randn({2, 3, 28, 28}));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "model input: expects N x 1x28x28, receives 2x3x28x28");
  }
}

// A decoder written with LibTorch's own layers (nn::ConvTranspose2d, nn::Upsample), weights
// copied over: the graph computes the same function and its parameters keep PyTorch's names
// and layout (in x out/groups x kH x kW), so gradients reach them.
TEST_F(GraphModuleTest, DecoderEqualsLibTorchsConvTransposeAndUpsample) {
  const auto loaded =
      testutil::parseModel(R"({"input": {"channels": 4, "height": 5, "width": 6}, "nodes": [
      {"id": "input", "op": "Input"},
      {"id": "up1", "op": "ConvTranspose2d", "params": {"out_channels": 6, "kernel_size": 3, "stride": 2, "padding": 1, "output_padding": 1, "groups": 2}, "inputs": ["input"]},
      {"id": "near", "op": "Upsample", "params": {"scale_factor": [2, 3]}, "inputs": ["up1"]},
      {"id": "up2", "op": "ConvTranspose2d", "params": {"out_channels": 3, "kernel_size": [2, 3], "stride": [1, 2], "dilation": 2, "bias": false}, "inputs": ["near"]},
      {"id": "blend", "op": "Upsample", "params": {"scale_factor": 2, "mode": "bilinear"}, "inputs": ["up2"]}]})");
  ASSERT_TRUE(loaded.problems.empty()) << formatProblems(loaded.problems);
  graph::GraphModule net(loaded.project.model, registry);
  std::vector<std::string> names;
  for (const auto& item : net->named_parameters())
    names.push_back(item.key());
  EXPECT_EQ(names, (std::vector<std::string>{"up1.weight", "up1.bias", "up2.weight"}));

  namespace nn = torch::nn;
  nn::ConvTranspose2d up1(
      nn::ConvTranspose2dOptions(4, 6, 3).stride(2).padding(1).output_padding(1).groups(2));
  nn::ConvTranspose2d up2(
      nn::ConvTranspose2dOptions(6, 3, {2, 3}).stride({1, 2}).dilation(2).bias(false));
  nn::Upsample nearest(
      nn::UpsampleOptions().scale_factor(std::vector<double>{2, 3}).mode(torch::kNearest));
  nn::Upsample blend(nn::UpsampleOptions()
                         .scale_factor(std::vector<double>{2, 2})
                         .mode(torch::kBilinear)
                         .align_corners(false));
  auto params = net->named_parameters();
  EXPECT_EQ(params["up1.weight"].sizes().vec(), up1->weight.sizes().vec());
  EXPECT_EQ(params["up2.weight"].sizes().vec(), up2->weight.sizes().vec());
  {
    torch::NoGradGuard noGrad;
    up1->weight.copy_(params["up1.weight"]);
    up1->bias.copy_(params["up1.bias"]);
    up2->weight.copy_(params["up2.weight"]);
  }
  const auto x = torch::randn({2, 4, 5, 6});
  const auto y = net->forward(x);
  const auto expected = blend(up2(nearest(up1(x))));
  // 5x6 -> 10x12 -> 20x36 -> 22x75 -> 44x150
  EXPECT_EQ(y.sizes().vec(), (std::vector<std::int64_t>{2, 3, 44, 150}));
  EXPECT_EQ(net->analysis().outputShape, (Shape{3, 44, 150}));
  EXPECT_TRUE(torch::allclose(y, expected, 1e-5, 1e-6)) << (y - expected).abs().max().item<float>();

  y.pow(2).mean().backward();
  for (const auto& item : net->named_parameters()) {
    ASSERT_TRUE(item.value().grad().defined()) << item.key();
    EXPECT_GT(item.value().grad().abs().sum().item<double>(), 0.0) << item.key();
  }
}
