// StepRunner on a tiny real model (4 inputs, 5 hidden, 3 classes) in a single-process group,
// every figure checked against LibTorch computed here: the loss and the gradients of the
// batch's cross-entropy, the correct count, plain SGD's update, the global and per-node norms,
// clipping by norm and by value, accumulation over a group of two batches, and a non-finite
// loss or gradient that takes no step.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "data/data_loader.h"
#include "graph/graph_module.h"
#include "registries/registries.h"
#include "task/classification.h"
#include "test_support.h"
#include "train/loop_state.h"
#include "train/lr_schedule.h"
#include "train/optimizer_factory.h"
#include "train/process_group.h"
#include "train/run_context.h"
#include "train/run_plan.h"
#include "train/step_runner.h"
#include "train/train_options.h"
#include "train/trainer.h"

using namespace netsmith;
using namespace netsmith::train;

namespace {

/// input 1x2x2 -> Flatten -> fc1 (Linear 5) -> ReLU -> fc2 (Linear 3).
graph::ModelGraph tinyStepModel() {
  auto loaded =
      testutil::parseModel(R"({"input": {"channels": 1, "height": 2, "width": 2}, "nodes": [
      {"id": "input", "op": "Input"},
      {"id": "flat", "op": "Flatten", "inputs": ["input"]},
      {"id": "fc1", "op": "Linear", "params": {"out_features": 5}, "inputs": ["flat"]},
      {"id": "relu", "op": "ReLU", "inputs": ["fc1"]},
      {"id": "fc2", "op": "Linear", "params": {"out_features": 3}, "inputs": ["relu"]}]})");
  EXPECT_TRUE(loaded.problems.empty()) << formatProblems(loaded.problems);
  return loaded.project.model;
}

data::Batch stepBatch(const torch::Tensor& images, const torch::Tensor& labels) {
  data::Batch b;
  b.images = images;
  b.labels = labels;
  b.target = labels;
  return b;
}

/// Cross-entropy written out: the mean over the batch of -log softmax at the label.
torch::Tensor handCrossEntropy(const torch::Tensor& logits, const torch::Tensor& labels) {
  return -torch::log_softmax(logits, 1).gather(1, labels.unsqueeze(1)).mean();
}

double squaredSum(const torch::Tensor& t) {
  return t.detach().to(torch::kDouble).pow(2).sum().item<double>();
}

bool gradientsCleared(const torch::Tensor& p) {
  return !p.grad().defined() || p.grad().abs().sum().item<double>() == 0;
}

}  // namespace

class StepRunnerTest : public testutil::SeededTest {
 protected:
  /// A fresh model and batch (the same initial weights and images every time), plain SGD at lr 0.1
  /// without momentum unless `train` says otherwise, and the runner over every parameter.
  void make(const Json& train = Json::object()) {
    runner.reset();
    Json t{{"optimizer", Json{{"type", "sgd"}, {"lr", 0.1}, {"momentum", 0.0}}}};
    for (auto it = train.begin(); it != train.end(); ++it)
      t[it.key()] = it.value();
    Problems problems;
    options = parseTrainOptions(t, ScheduleRegistry::withBuiltins(), problems);
    ASSERT_TRUE(problems.empty()) << formatProblems(problems);
    torch::manual_seed(7);
    net = graph::GraphModule(tinyStepModel(), registry);
    images = torch::randn({4, 1, 2, 2});
    params.clear();
    nodes.clear();
    for (const auto& item : net->named_parameters()) {
      params.push_back(item.value());
      nodes.push_back(item.key().substr(0, item.key().find('.')));
    }
    optimizer = makeOptimizer(options.optimizer, net->named_parameters());
    group = makeProcessGroup(ctx, options, device);
    task::TaskSetup setup;
    setup.dataClasses = 3;
    classification = std::make_unique<task::ClassificationTask>(setup);
    state = LoopState();
    runner = std::make_unique<StepRunner>(net, *optimizer, options, device, *group, state, params,
                                          nodes, *classification);
  }

  std::vector<torch::Tensor> weights() const {
    std::vector<torch::Tensor> out;
    for (const auto& p : params)
      out.push_back(p.detach().clone());
    return out;
  }
  std::vector<torch::Tensor> gradients() const {
    std::vector<torch::Tensor> out;
    for (const auto& p : params)
      out.push_back(p.grad().defined() ? p.grad().clone() : torch::Tensor());
    return out;
  }

  TrainerConfig config = [] {
    TrainerConfig c;
    c.registries = ::netsmith::Registries::builtins();
    return c;
  }();
  RunControls controls;
  std::atomic<RunState> runState{RunState::Running};
  std::vector<run::TrainingEvent> published;
  RunContext ctx{config,   controls,
                 runState, [this](run::TrainingEvent e) { published.push_back(std::move(e)); },
                 nullptr,  nullptr};
  torch::Device device{torch::kCPU};
  TrainOptions options;
  graph::GraphModule net{nullptr};
  std::vector<torch::Tensor> params;
  std::vector<std::string> nodes;
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  std::unique_ptr<ProcessGroup> group;
  std::unique_ptr<task::ClassificationTask> classification;
  LoopState state;
  std::unique_ptr<StepRunner> runner;
  torch::Tensor images;  ///< 4 samples, the same in every make()
};

TEST_F(StepRunnerTest, TheLossFiguresAndGradientsAreTorchsOwn) {
  make();
  // Labels the model gets right for the first two samples and wrong for the last two.
  const auto logits = net->forward(images);
  const auto predicted = logits.argmax(1);
  auto labels = predicted.clone();
  labels.narrow(0, 2, 2).add_(1).remainder_(3);
  const auto loss = handCrossEntropy(logits, labels);
  const auto expectedGrads = torch::autograd::grad({loss}, params);
  const double expectedLoss = loss.item<double>();

  const auto f = runner->forwardBackward(stepBatch(images, labels), BatchGroup{}, true,
                                         /*stopAsked=*/true, /*pauseAsked=*/false);
  EXPECT_NEAR(f.loss, expectedLoss, 1e-6);
  EXPECT_NEAR(f.lossSum, 4 * expectedLoss, 4e-6);
  EXPECT_EQ(f.localLoss, f.loss);  // one process: its loss is the batch's
  EXPECT_EQ(f.seen, 4);
  EXPECT_FALSE(f.nonFinite);
  EXPECT_EQ(f.figureSums, std::vector<double>{2.0});  // the correct count
  EXPECT_TRUE(f.stopAgreed);
  EXPECT_FALSE(f.pauseAgreed);
  ASSERT_EQ(params.size(), 4u);  // fc1 and fc2, weight and bias
  for (std::size_t i = 0; i < params.size(); ++i) {
    ASSERT_TRUE(params[i].grad().defined()) << i;
    EXPECT_TRUE(torch::allclose(params[i].grad(), expectedGrads[i], 1e-5, 1e-7))
        << nodes[i] << " " << i;
  }
  EXPECT_EQ(state.step, 0);  // no optimizer step yet
}

// With plain SGD (no momentum, no decay) each weight moves by exactly -lr x its gradient, at
// the rate the step is given (not the one in the options); the gradients are cleared after.
TEST_F(StepRunnerTest, AnSgdStepMovesEachWeightByMinusLrTimesItsGradient) {
  make();
  const auto labels = torch::tensor({0, 2, 1, 2}, torch::kLong);
  runner->forwardBackward(stepBatch(images, labels), BatchGroup{}, true, false, false);
  const auto before = weights();
  const auto grads = gradients();
  EXPECT_EQ(runner->optimizerStep(0.05), StepResult::Stepped);
  for (std::size_t i = 0; i < params.size(); ++i) {
    ASSERT_TRUE(grads[i].defined());
    EXPECT_GT(grads[i].abs().sum().item<double>(), 0) << i;
    EXPECT_TRUE(torch::equal(params[i].detach(), before[i].add(grads[i], -0.05))) << i;
    EXPECT_TRUE(gradientsCleared(params[i])) << i;
  }
  EXPECT_EQ(state.step, 1);
}

// The norm is the L2 norm over every gradient element, taken before the step; the per-node
// sums get each node's own norm.
TEST_F(StepRunnerTest, TheGradientNormIsTheL2NormOfEveryGradient) {
  make();
  const auto labels = torch::tensor({1, 1, 0, 2}, torch::kLong);
  runner->forwardBackward(stepBatch(images, labels), BatchGroup{}, true, false, false);
  double total = 0;
  std::map<std::string, double> perNode;
  const auto grads = gradients();
  for (std::size_t i = 0; i < params.size(); ++i) {
    total += squaredSum(grads[i]);
    perNode[nodes[i]] += squaredSum(grads[i]);
  }
  ASSERT_GT(total, 0);
  runner->optimizerStep(0.1);
  EXPECT_NEAR(runner->lastGradNorm(), std::sqrt(total), 1e-5 * std::sqrt(total));
  EXPECT_EQ(state.normSteps, 1);
  ASSERT_EQ(state.normSums.size(), 2u);
  EXPECT_NEAR(state.normSums.at("fc1"), std::sqrt(perNode["fc1"]), 1e-5 * std::sqrt(total));
  EXPECT_NEAR(state.normSums.at("fc2"), std::sqrt(perNode["fc2"]), 1e-5 * std::sqrt(total));
}

// clip_grad_norm at a quarter of the batch's norm: the step taken (lr 1) has that norm, in the
// gradients' direction; lastGradNorm() still reports the norm before clipping.
TEST_F(StepRunnerTest, ClippingByNormScalesTheStepDownToTheLimit) {
  const auto labels = torch::tensor({2, 0, 1, 0}, torch::kLong);
  make();
  const auto loss = handCrossEntropy(net->forward(images), labels);
  double total = 0;
  for (const auto& g : torch::autograd::grad({loss}, params))
    total += squaredSum(g);
  const double norm = std::sqrt(total);
  const double limit = norm / 4;

  make({{"clip_grad_norm", limit}});  // the same initial weights
  runner->forwardBackward(stepBatch(images, labels), BatchGroup{}, true, false, false);
  const auto before = weights();
  const auto grads = gradients();
  EXPECT_EQ(runner->optimizerStep(1.0), StepResult::Stepped);
  EXPECT_NEAR(runner->lastGradNorm(), norm, 1e-5 * norm);
  double stepSquares = 0;
  for (std::size_t i = 0; i < params.size(); ++i) {
    stepSquares += squaredSum(before[i] - params[i].detach());
    EXPECT_TRUE(
        torch::allclose(params[i].detach(), before[i] - grads[i] * (limit / norm), 1e-5, 1e-6))
        << i;
  }
  EXPECT_NEAR(std::sqrt(stepSquares), limit, 1e-3 * limit);
}

// clip_grad_value at half the largest gradient element: every element is clamped to it, then
// stepped.
TEST_F(StepRunnerTest, ClippingByValueClampsEachGradientElement) {
  const auto labels = torch::tensor({0, 0, 2, 1}, torch::kLong);
  make();
  runner->forwardBackward(stepBatch(images, labels), BatchGroup{}, true, false, false);
  double largest = 0;
  for (const auto& g : gradients())
    largest = std::max(largest, g.abs().max().item<double>());
  const double limit = largest / 2;

  make({{"clip_grad_value", limit}});
  runner->forwardBackward(stepBatch(images, labels), BatchGroup{}, true, false, false);
  const auto before = weights();
  const auto grads = gradients();
  runner->optimizerStep(1.0);
  int clamped = 0;
  for (std::size_t i = 0; i < params.size(); ++i) {
    clamped += (grads[i].abs() > limit).sum().item<int>();
    EXPECT_TRUE(
        torch::equal(params[i].detach(), before[i].add(grads[i].clamp(-limit, limit), -1.0)))
        << i;
    EXPECT_LE((before[i] - params[i].detach()).abs().max().item<double>(), limit + 1e-6) << i;
  }
  EXPECT_GT(clamped, 0);
}

// Two batches in one accumulation group: the gradient after both is that of their mean loss.
TEST_F(StepRunnerTest, AGroupOfTwoBatchesAccumulatesTheirMeanGradient) {
  make();
  const auto otherImages = torch::randn({4, 1, 2, 2});
  const auto labelsA = torch::tensor({0, 1, 2, 0}, torch::kLong);
  const auto labelsB = torch::tensor({2, 2, 1, 0}, torch::kLong);
  const auto mean = (handCrossEntropy(net->forward(images), labelsA) +
                     handCrossEntropy(net->forward(otherImages), labelsB)) /
                    2;
  const auto expectedGrads = torch::autograd::grad({mean}, params);
  BatchGroup first;
  first.size = 2;
  first.boundary = false;
  BatchGroup last = first;
  last.boundary = true;
  runner->forwardBackward(stepBatch(images, labelsA), first, false, false, false);
  runner->forwardBackward(stepBatch(otherImages, labelsB), last, true, false, false);
  for (std::size_t i = 0; i < params.size(); ++i)
    EXPECT_TRUE(torch::allclose(params[i].grad(), expectedGrads[i], 1e-5, 1e-7)) << i;
}

// A sample that makes the loss NaN: the batch is reported non-finite, no backward is done
// (no gradient appears) and nothing counts as seen.
TEST_F(StepRunnerTest, ANonFiniteLossTakesNoBackward) {
  make();
  auto bad = images.clone();
  bad[1][0][0][0] = std::nan("");
  const auto before = weights();
  const auto f = runner->forwardBackward(stepBatch(bad, torch::tensor({0, 1, 2, 0}, torch::kLong)),
                                         BatchGroup{}, true, false, false);
  EXPECT_TRUE(f.nonFinite);
  EXPECT_TRUE(std::isnan(f.localLoss));
  EXPECT_TRUE(std::isnan(f.loss));
  EXPECT_EQ(f.seen, 0);
  EXPECT_EQ(f.lossSum, 0);
  for (std::size_t i = 0; i < params.size(); ++i) {
    EXPECT_FALSE(params[i].grad().defined()) << i;
    EXPECT_TRUE(torch::equal(params[i].detach(), before[i])) << i;
  }
}

// A NaN in a gradient: the step is refused, the weights stay as they were, the gradients are
// dropped, and the step count and norm sums do not move.
TEST_F(StepRunnerTest, ANonFiniteGradientTakesNoStep) {
  make();
  runner->forwardBackward(stepBatch(images, torch::tensor({0, 1, 2, 0}, torch::kLong)),
                          BatchGroup{}, true, false, false);
  params[2].mutable_grad()[1][3] = std::nan("");  // fc2.weight
  const auto before = weights();
  EXPECT_EQ(runner->optimizerStep(0.1), StepResult::NonFinite);
  EXPECT_TRUE(std::isnan(runner->lastGradNorm()));
  for (std::size_t i = 0; i < params.size(); ++i) {
    EXPECT_TRUE(torch::equal(params[i].detach(), before[i])) << i;
    EXPECT_TRUE(gradientsCleared(params[i])) << i;
  }
  EXPECT_EQ(state.step, 0);
  EXPECT_EQ(state.normSteps, 0);
  EXPECT_TRUE(state.normSums.empty());
}
