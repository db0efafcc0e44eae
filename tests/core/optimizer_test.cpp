// Each optimizer built from project options follows LibTorch's own optimizer, configured by
// hand, step for step; weight decay can spare BatchNorm and bias parameters.
#include "train/optimizer_factory.h"

#include "test_support.h"

using namespace netsmith;
using namespace netsmith::train;

namespace {

OptimizerOptions options(const std::string& json) {
  Problems problems;
  auto o = parseTrainOptions(Json::parse(json), ScheduleRegistry::withBuiltins(), problems);
  EXPECT_TRUE(problems.empty()) << formatProblems(problems);
  return o.optimizer;
}

// A small least-squares problem: returns the weight after `steps` steps of `opt`.
torch::Tensor runSteps(torch::optim::Optimizer& opt, torch::Tensor& w, torch::Tensor& b,
                       int steps) {
  torch::manual_seed(3);
  const auto x = torch::randn({32, 4});
  const auto y = x.matmul(torch::tensor({1.0f, -2.0f, 0.5f, 3.0f})) + 0.3;
  for (int i = 0; i < steps; ++i) {
    opt.zero_grad();
    const auto loss = (x.matmul(w) + b - y).pow(2).mean();
    loss.backward();
    opt.step();
  }
  return torch::cat({w.detach(), b.detach()});
}

std::pair<torch::Tensor, torch::Tensor> params() {
  torch::manual_seed(1);
  return {torch::randn({4}).requires_grad_(true), torch::zeros({1}).requires_grad_(true)};
}

}  // namespace

TEST(Optimizers, EachMatchesLibTorchsOwn) {
  namespace o = torch::optim;
  struct Case {
    std::string json;
    std::function<std::unique_ptr<o::Optimizer>(std::vector<torch::Tensor>)> reference;
  };
  const std::vector<Case> cases = {
      {R"({"optimizer": {"type": "sgd", "lr": 0.05, "momentum": 0.9, "nesterov": true, "weight_decay": 0.01}})",
       [](auto p) {
         return std::make_unique<o::SGD>(
             p, o::SGDOptions(0.05).momentum(0.9).nesterov(true).weight_decay(0.01));
       }},
      {R"({"optimizer": {"type": "adam", "lr": 0.01, "betas": [0.8, 0.99], "weight_decay": 0.001}})",
       [](auto p) {
         return std::make_unique<o::Adam>(
             p, o::AdamOptions(0.01).betas({0.8, 0.99}).weight_decay(0.001));
       }},
      {R"({"optimizer": {"type": "adamw", "lr": 0.01, "weight_decay": 0.1, "amsgrad": true}})",
       [](auto p) {
         return std::make_unique<o::AdamW>(p,
                                           o::AdamWOptions(0.01).weight_decay(0.1).amsgrad(true));
       }},
      {R"({"optimizer": {"type": "rmsprop", "lr": 0.01, "momentum": 0.5, "centered": true}})",
       [](auto p) {
         return std::make_unique<o::RMSprop>(p,
                                             o::RMSpropOptions(0.01).momentum(0.5).centered(true));
       }},
      {R"({"optimizer": {"type": "adagrad", "lr": 0.1, "lr_decay": 0.01}})",
       [](auto p) {
         return std::make_unique<o::Adagrad>(p, o::AdagradOptions(0.1).lr_decay(0.01));
       }},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.json);
    auto [w1, b1] = params();
    torch::OrderedDict<std::string, torch::Tensor> named;
    named.insert("fc.weight", w1);
    named.insert("fc.bias", b1);
    auto ours = makeOptimizer(options(c.json), named);
    const auto a = runSteps(*ours, w1, b1, 25);
    auto [w2, b2] = params();
    auto theirs = c.reference({w2, b2});
    const auto b = runSteps(*theirs, w2, b2, 25);
    EXPECT_TRUE(torch::equal(a, b)) << a << b;
    EXPECT_FALSE(torch::equal(a, std::get<0>(params()).detach()))
        << "the optimizer moved the weights";
  }
}

TEST(Optimizers, NoDecayForNormAndBiasAndSkipsFrozen) {
  auto w = torch::randn({2, 4}).requires_grad_(true);
  auto b = torch::zeros({2}).requires_grad_(true);
  auto frozen = torch::ones({3}).requires_grad_(false);
  torch::OrderedDict<std::string, torch::Tensor> named;
  named.insert("fc.weight", w);
  named.insert("fc.bias", b);
  named.insert("c.weight", frozen);
  auto opt = makeOptimizer(
      options(R"({"optimizer": {"type": "sgd", "lr": 0.1, "momentum": 0, "weight_decay": 0.5,
                                                      "no_decay_norm_and_bias": true}})"),
      named);
  ASSERT_EQ(opt->param_groups().size(), 2u);
  EXPECT_DOUBLE_EQ(
      static_cast<torch::optim::SGDOptions&>(opt->param_groups()[1].options()).weight_decay(), 0.0);
  // With zero gradients only decay moves a parameter: the weight shrinks, the bias does not.
  b.detach().fill_(1.0);
  w.mutable_grad() = torch::zeros_like(w);
  b.mutable_grad() = torch::zeros_like(b);
  const auto w0 = w.detach().clone();
  opt->step();
  EXPECT_TRUE(torch::allclose(w.detach(), w0 * 0.95));
  EXPECT_TRUE(torch::equal(b.detach(), torch::ones({2})));
  setLearningRate(*opt, 0.001);
  for (auto& g : opt->param_groups())
    EXPECT_DOUBLE_EQ(g.options().get_lr(), 0.001);
}

// Per-node learning-rate multipliers (a node's lr_mult): their own groups, scaled at every
// setLearningRate; an SGD step moves each parameter by its own rate times its gradient.
TEST(Optimizers, NodeMultipliersScaleTheirGroupsRates) {
  auto backbone = torch::zeros({3}).requires_grad_(true);
  auto head = torch::zeros({2}).requires_grad_(true);
  torch::OrderedDict<std::string, torch::Tensor> named;
  named.insert("conv.weight", backbone);
  named.insert("fc.weight", head);
  std::vector<double> scales;
  auto opt = makeOptimizer(options(R"({"optimizer": {"type": "sgd", "lr": 0.1, "momentum": 0}})"),
                           named, {{"conv", 0.25}}, &scales);
  ASSERT_EQ(opt->param_groups().size(), 2u);
  EXPECT_EQ(scales, (std::vector<double>{1.0, 0.25}));  // x1 first
  EXPECT_DOUBLE_EQ(opt->param_groups()[0].options().get_lr(), 0.1);
  EXPECT_DOUBLE_EQ(opt->param_groups()[1].options().get_lr(), 0.025);
  setLearningRate(*opt, 0.4, scales);
  backbone.mutable_grad() = torch::ones({3});
  head.mutable_grad() = torch::ones({2});
  opt->step();
  // x -= lr * grad: 0.4 for the head, 0.1 for the backbone.
  EXPECT_TRUE(torch::allclose(head.detach(), torch::full({2}, -0.4)));
  EXPECT_TRUE(torch::allclose(backbone.detach(), torch::full({3}, -0.1)));
}

TEST(Optimizers, LrMultIsReadCheckedAndWrittenBack) {
  auto loaded = testutil::parseModel(R"({"input": {"channels": 1, "height": 4, "width": 4},
    "nodes": [{"id": "input", "op": "Input"}, {"id": "f", "op": "Flatten", "inputs": ["input"]},
      {"id": "fc", "op": "Linear", "params": {"out_features": 2}, "inputs": ["f"], "lr_mult": 0.1}]})");
  ASSERT_TRUE(loaded.problems.empty()) << formatProblems(loaded.problems);
  EXPECT_DOUBLE_EQ(loaded.project.model.find("fc")->lrMult, 0.1);
  EXPECT_EQ(lrMultipliers(loaded.project.model), (std::map<std::string, double>{{"fc", 0.1}}));
  const auto again = project::parseProject(project::serialiseProject(loaded.project), "again.json");
  EXPECT_DOUBLE_EQ(again.project.model.find("fc")->lrMult, 0.1);
  for (const char* bad : {"0", "-1", "\"fast\"", "5000"}) {
    const auto b = testutil::parseModel(
        std::string(
            R"({"input": {"channels": 1, "height": 4, "width": 4}, "nodes": [{"id": "input", "op": "Input", "lr_mult": )") +
        bad + "}]}");
    EXPECT_NE(formatProblems(b.problems).find("lr_mult: must be a number in (0, 1000]"),
              std::string::npos)
        << bad << ": " << formatProblems(b.problems);
  }
}
