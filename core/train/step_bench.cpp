#include "train/step_bench.h"

#include <chrono>

namespace netsmith::train {

StepRate measureStepRate(torch::nn::Module& model,
                         const std::function<torch::Tensor(const torch::Tensor&)>& forward,
                         torch::optim::Optimizer& optimizer,
                         const std::function<std::pair<torch::Tensor, torch::Tensor>()>& next,
                         int warmup, int steps) {
  model.train();
  auto step = [&](const std::pair<torch::Tensor, torch::Tensor>& batch) {
    optimizer.zero_grad();
    torch::nn::functional::cross_entropy(forward(batch.first), batch.second).backward();
    optimizer.step();
  };
  for (int i = 0; i < warmup; ++i) {
    const auto batch = next();
    if (!batch.first.defined()) return {};
    step(batch);
  }
  StepRate rate;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < steps; ++i) {
    const auto batch = next();
    if (!batch.first.defined()) break;
    step(batch);
    ++rate.steps;
    rate.images += batch.first.size(0);
  }
  rate.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return rate;
}

}  // namespace netsmith::train
