// The CPU training kernels against LibTorch's own ops (the reference): values, running
// statistics and gradients, in both memory formats; dropout's mask by its statistics.
#include "ops/cpu_kernels.h"

#include <limits>
#include <vector>

#include "graph/graph_module.h"
#include "test_support.h"

using namespace netsmith;

namespace cpu_kernels_test {

struct BnCase {
  bool channelsLast, relu, affine;
};

class CpuBatchNorm : public ::testing::TestWithParam<BnCase> {};

double maxDiff(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

TEST_P(CpuBatchNorm, MatchesLibTorchInValuesStatisticsAndGradients) {
  const BnCase k = GetParam();
  torch::manual_seed(3);
  const auto fmt =
      k.channelsLast ? torch::MemoryFormat::ChannelsLast : torch::MemoryFormat::Contiguous;
  // A mean far from zero: the statistics must not lose it (E[x^2] - E[x]^2 cancellation).
  const auto base = (torch::randn({3, 5, 7, 9}) * 2 + 40).contiguous(fmt);
  const auto grad = torch::randn({3, 5, 7, 9}).contiguous(fmt);
  torch::Tensor w0, b0;
  if (k.affine) {
    w0 = torch::rand({5}) + 0.5;
    b0 = torch::randn({5});
  }
  auto run = [&](bool ours) {
    auto x = base.clone().requires_grad_(true);
    auto w = k.affine ? w0.clone().requires_grad_(true) : torch::Tensor();
    auto b = k.affine ? b0.clone().requires_grad_(true) : torch::Tensor();
    auto rm = torch::full({5}, 0.5), rv = torch::full({5}, 2.0);
    torch::Tensor y;
    if (ours) {
      y = ops::kernels::batchNormTrain(x, w, b, rm, rv, 0.1, 1e-5, k.relu);
    } else {
      y = torch::batch_norm(x, w, b, rm, rv, true, 0.1, 1e-5, false);
      if (k.relu) y = torch::relu(y);
    }
    y.backward(grad);
    return std::vector<torch::Tensor>{y,
                                      rm,
                                      rv,
                                      x.grad(),
                                      k.affine ? w.grad() : torch::zeros({1}),
                                      k.affine ? b.grad() : torch::zeros({1})};
  };
  ASSERT_TRUE(ops::kernels::imageTakes(base));
  const auto ours = run(true), ref = run(false);
  const char* names[] = {"output", "running_mean", "running_var", "d input", "d weight", "d bias"};
  for (std::size_t i = 0; i < ours.size(); ++i) {
    EXPECT_TRUE(torch::allclose(ours[i], ref[i], 1e-4, 1e-4))
        << names[i] << ": largest difference " << maxDiff(ours[i], ref[i]);
  }
  EXPECT_EQ(ours[0].is_contiguous(fmt), true) << "the output keeps the input's memory format";
  if (k.relu) {
    EXPECT_EQ(ours[0].min().item<float>(), 0.0f);
    // The ReLU's mask: exactly where the reference lets the gradient through.
    EXPECT_TRUE(torch::equal(ours[3] == 0, ref[3] == 0));
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, CpuBatchNorm,
                         ::testing::Values(BnCase{false, true, true}, BnCase{false, false, true},
                                           BnCase{true, true, true}, BnCase{true, false, false},
                                           BnCase{false, true, false}));

TEST(CpuKernels, BatchNormResultsDoNotDependOnTheThreadCount) {
  const int threads = torch::get_num_threads();
  for (auto fmt : {torch::MemoryFormat::Contiguous, torch::MemoryFormat::ChannelsLast}) {
    torch::manual_seed(5);
    const auto base = torch::randn({16, 24, 12, 12}).contiguous(fmt);
    const auto grad = torch::randn({16, 24, 12, 12}).contiguous(fmt);
    std::vector<torch::Tensor> seen;
    for (int t : {1, 2, 3}) {
      torch::set_num_threads(t);
      auto x = base.clone().requires_grad_(true);
      auto rm = torch::zeros({24}), rv = torch::ones({24});
      auto y = ops::kernels::batchNormTrain(x, torch::Tensor(), torch::Tensor(), rm, rv, 0.1, 1e-5,
                                            true);
      y.backward(grad);
      seen.push_back(torch::cat({y.flatten(), x.grad().flatten(), rm, rv}));
    }
    torch::set_num_threads(threads);
    EXPECT_TRUE(torch::equal(seen[0], seen[1]));
    EXPECT_TRUE(torch::equal(seen[0], seen[2]));
  }
}

TEST(CpuKernels, BatchNormNotTakenFallsBackToLibTorch) {
  // A strided view and a double tensor are not taken; the results are still right.
  torch::manual_seed(1);
  const auto x = torch::randn({4, 3, 6, 6});
  const auto view = x.transpose(2, 3);
  EXPECT_FALSE(ops::kernels::imageTakes(view));
  EXPECT_FALSE(ops::kernels::imageTakes(x.to(torch::kDouble)));
  auto rm = torch::zeros({3}), rv = torch::ones({3});
  const auto y = ops::kernels::batchNormTrain(view, torch::Tensor(), torch::Tensor(), rm, rv, 0.1,
                                              1e-5, false);
  auto rm2 = torch::zeros({3}), rv2 = torch::ones({3});
  const auto ref = torch::batch_norm(view, {}, {}, rm2, rv2, true, 0.1, 1e-5, false);
  EXPECT_TRUE(torch::allclose(y, ref, 1e-5, 1e-5));
}

TEST(CpuKernels, MaxPoolMatchesLibTorchWithTiesNaNsAndOddSides) {
  // Odd and even sides, rows of 1-14 windows (four at a time, the last four overlapping, or one
  // by one); values from {0, 1, 2} so most windows hold ties; -inf and NaN windows.
  for (const auto& size : std::vector<std::vector<std::int64_t>>{{3, 4, 8, 8},
                                                                 {2, 5, 7, 9},
                                                                 {1, 2, 2, 3},
                                                                 {4, 3, 28, 28},
                                                                 {2, 3, 11, 14},
                                                                 {1, 2, 6, 6}}) {
    torch::manual_seed(size[3]);
    auto base = torch::randint(0, 3, size).to(torch::kFloat);
    base.view(-1)[0] = std::numeric_limits<float>::quiet_NaN();
    base.view(-1)[1] = -std::numeric_limits<float>::infinity();
    base.index_put_({0, 0, 1, 0}, std::numeric_limits<float>::quiet_NaN());
    base.index_put_({0, 0, 1, 1}, std::numeric_limits<float>::quiet_NaN());  // two NaNs: last wins
    if (size[2] >= 4)
      base.index_put_(
          {torch::indexing::Slice(), 0, torch::indexing::Slice(2, 4), torch::indexing::Slice(0, 2)},
          -std::numeric_limits<float>::infinity());  // a window of -inf only
    const auto grad = torch::randn({size[0], size[1], size[2] / 2, size[3] / 2});
    ASSERT_TRUE(ops::kernels::maxPool2x2Takes(base));
    auto x = base.clone().requires_grad_(true);
    auto y = ops::kernels::maxPool2x2(x);
    y.backward(grad);
    auto xr = base.clone().requires_grad_(true);
    auto yr = torch::max_pool2d(xr, {2, 2}, {2, 2});
    yr.backward(grad);
    EXPECT_TRUE(torch::equal(y.isnan(), yr.isnan()));
    EXPECT_TRUE(torch::equal(torch::nan_to_num(y), torch::nan_to_num(yr)));
    EXPECT_TRUE(torch::equal(x.grad(), xr.grad())) << size;
    // Each output's gradient lands on exactly one input, the rest are zero.
    EXPECT_EQ((x.grad() != 0).sum().item<std::int64_t>(), (grad != 0).sum().item<std::int64_t>());
  }
  // Channels-last and strided views are left to LibTorch (and still right).
  const auto cl = torch::randn({2, 3, 6, 6}).contiguous(torch::MemoryFormat::ChannelsLast);
  EXPECT_FALSE(ops::kernels::maxPool2x2Takes(cl));
  EXPECT_TRUE(torch::equal(ops::kernels::maxPool2x2(cl), torch::max_pool2d(cl, {2, 2}, {2, 2})));
}

TEST(CpuKernels, DropoutKeepsOneMinusPScalesAndIsReproducible) {
  const double p = 0.3;
  const auto x = torch::ones({1000, 1000}, torch::requires_grad());
  torch::manual_seed(11);
  const auto y = ops::kernels::dropout(x, p);
  torch::manual_seed(11);
  const auto again = ops::kernels::dropout(x, p);
  EXPECT_TRUE(torch::equal(y, again)) << "the same seed gives the same mask";
  const auto other = ops::kernels::dropout(x, p);
  EXPECT_FALSE(torch::equal(y, other)) << "the next call draws a new mask";

  const auto kept = (y != 0);
  const double scale = 1.0 / (1.0 - p);
  // Kept values are scaled, the rest are exactly zero.
  EXPECT_TRUE(torch::allclose(y.masked_select(kept), torch::full({1}, scale).to(torch::kFloat)));
  // 10^6 draws: the kept fraction is within 5 standard deviations (0.0023) of 1 - p.
  const double fraction = kept.to(torch::kDouble).mean().item<double>();
  EXPECT_NEAR(fraction, 1.0 - p, 0.0023);
  // Neighbours are independent: both kept in (1 - p)^2 of adjacent pairs, along rows and
  // columns; and the masks of two calls agree no more than chance says.
  const auto k = kept.to(torch::kDouble);
  const double rows = (k.narrow(1, 0, 999) * k.narrow(1, 1, 999)).mean().item<double>();
  const double cols = (k.narrow(0, 0, 999) * k.narrow(0, 1, 999)).mean().item<double>();
  const double calls = (k * (other != 0).to(torch::kDouble)).mean().item<double>();
  for (double both : {rows, cols, calls})
    EXPECT_NEAR(both, (1 - p) * (1 - p), 0.003);

  // Backward recomputes the same mask: the gradient of sum(y) is y itself.
  y.sum().backward();
  EXPECT_TRUE(torch::equal(x.grad(), y.detach()));
}

// A graph whose BatchNorm -> ReLU pairs run folded must compute what it computes unfolded.
TEST(CpuKernels, GraphModuleFoldsTheReluIntoBatchNormWithTheSameResult) {
  torch::manual_seed(2);
  const auto loaded =
      testutil::parseModel(R"({"input": {"channels": 3, "height": 8, "width": 8}, "nodes": [
      {"id": "input", "op": "Input"},
      {"id": "c1", "op": "Conv2d", "params": {"out_channels": 6, "padding": 1}, "inputs": ["input"]},
      {"id": "bn1", "op": "BatchNorm2d", "inputs": ["c1"]},
      {"id": "r1", "op": "ReLU", "inputs": ["bn1"]},
      {"id": "c2", "op": "Conv2d", "params": {"out_channels": 6, "padding": 1}, "inputs": ["r1"]},
      {"id": "bn2", "op": "BatchNorm2d", "inputs": ["c2"]},
      {"id": "r2", "op": "ReLU", "inputs": ["bn2"]},
      {"id": "sum", "op": "Add", "inputs": ["r2", "bn2"]},
      {"id": "gap", "op": "GlobalAvgPool", "inputs": ["sum"]},
      {"id": "flat", "op": "Flatten", "inputs": ["gap"]}]})");
  const ops::OpRegistry registry = ops::OpRegistry::withBuiltins();
  ASSERT_TRUE(loaded.problems.empty()) << testutil::problemsText(loaded, registry);
  graph::GraphModule net(loaded.project.model, registry);
  net->train();
  const auto x = torch::randn({4, 3, 8, 8});
  auto gradsOf = [&](const torch::Tensor& out) {
    net->zero_grad();
    out.pow(2).sum().backward();
    std::vector<torch::Tensor> g;
    for (const auto& p : net->parameters())
      g.push_back(p.grad().clone());
    return g;
  };
  const auto folded = net->forward(x);
  const auto foldedGrads = gradsOf(folded);
  // Tapping bn1 runs the graph unfolded: the tap is the batch norm's own output (negatives
  // kept), and the network's output and gradients are the same.
  torch::Tensor tapped;
  const auto plain = net->forwardTapping(x, "bn1", tapped);
  EXPECT_LT(tapped.min().item<float>(), 0.0f);
  EXPECT_TRUE(torch::allclose(folded, plain, 1e-5, 1e-5)) << maxDiff(folded, plain);
  const auto plainGrads = gradsOf(plain);
  for (std::size_t i = 0; i < plainGrads.size(); ++i)
    EXPECT_TRUE(torch::allclose(foldedGrads[i], plainGrads[i], 1e-4, 1e-5)) << "parameter " << i;
}

}  // namespace cpu_kernels_test
