// The CPU training kernels (core/ops/cpu_kernels) against LibTorch's ops on the default
// project's shapes: milliseconds per forward + backward, medians of alternating rounds.
//   kernel_bench [--threads N] [--rounds R] [--reps K]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "env/env_report.h"
#include "ops/cpu_kernels.h"

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// Milliseconds per call of f (forward and backward of one op), over `reps` calls after one.
double timeIt(const std::function<void()>& f, int reps) {
  f();
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i)
    f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() /
         reps;
}

struct Case {
  std::string name;
  std::function<void()> ours, libtorch;
};

}  // namespace

int main(int argc, char** argv) {
  int threads = 2, rounds = 5, reps = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--threads")) threads = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--rounds")) rounds = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--reps")) reps = std::atoi(argv[i + 1]);
  }
  threads = netsmith::env::configureThreads(threads);
  namespace k = netsmith::ops::kernels;
  torch::manual_seed(0);
  std::vector<Case> cases;
  for (const auto& [c, hw] :
       std::vector<std::pair<std::int64_t, std::int64_t>>{{32, 28}, {64, 14}}) {
    const auto x = torch::randn({128, c, hw, hw});
    const auto gPool = torch::randn({128, c, hw / 2, hw / 2});
    const std::string shape =
        "128x" + std::to_string(c) + "x" + std::to_string(hw) + "x" + std::to_string(hw);
    cases.push_back({"max pool 2x2, " + shape,
                     [x, gPool] {
                       auto v = x.detach().requires_grad_(true);
                       k::maxPool2x2(v).backward(gPool);
                     },
                     [x, gPool] {
                       auto v = x.detach().requires_grad_(true);
                       torch::max_pool2d(v, {2, 2}, {2, 2}).backward(gPool);
                     }});
    const auto g = torch::randn_like(x);
    cases.push_back({"batch norm + ReLU, " + shape,
                     [x, g, c = c] {
                       auto v = x.detach().requires_grad_(true);
                       auto rm = torch::zeros({c}), rv = torch::ones({c});
                       k::batchNormTrain(v, torch::ones({c}), torch::zeros({c}), rm, rv, 0.1, 1e-5,
                                         true)
                           .backward(g);
                     },
                     [x, g, c = c] {
                       auto v = x.detach().requires_grad_(true);
                       auto rm = torch::zeros({c}), rv = torch::ones({c});
                       torch::relu(torch::batch_norm(v, torch::ones({c}), torch::zeros({c}), rm, rv,
                                                     true, 0.1, 1e-5, false))
                           .backward(g);
                     }});
  }
  const auto flat = torch::randn({128, 3136});
  const auto gFlat = torch::randn_like(flat);
  cases.push_back({"dropout 0.25, 128x3136",
                   [flat, gFlat] {
                     auto v = flat.detach().requires_grad_(true);
                     k::dropout(v, 0.25).backward(gFlat);
                   },
                   [flat, gFlat] {
                     auto v = flat.detach().requires_grad_(true);
                     torch::dropout(v, 0.25, true).backward(gFlat);
                   }});
  std::printf(
      "CPU kernels against LibTorch's ops, forward + backward, %d threads, median of %d "
      "alternating rounds of %d calls\n",
      threads, rounds, reps);
  std::printf("%-34s %12s %12s %8s\n", "op", "Netsmith ms", "LibTorch ms", "ratio");
  for (const auto& cs : cases) {
    std::vector<double> a, b;
    for (int r = 0; r < rounds; ++r) {
      a.push_back(timeIt(cs.ours, reps));
      b.push_back(timeIt(cs.libtorch, reps));
    }
    std::printf("%-34s %12.2f %12.2f %7.2fx\n", cs.name.c_str(), median(a), median(b),
                median(b) / median(a));
  }
  return 0;
}
