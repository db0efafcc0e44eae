#pragma once

// Measures training steps per second: what `netsmith-cli bench` and bench/loader_bench print.
#include <torch/torch.h>

#include <functional>
#include <utility>

namespace netsmith::train {

struct StepRate {
  std::int64_t steps = 0;
  std::int64_t images = 0;
  double seconds = 0;
  double imagesPerSecond() const { return seconds > 0 ? double(images) / seconds : 0.0; }
};

/// Runs `warmup` untimed then `steps` timed training steps (forward, cross-entropy, backward,
/// optimizer step) on the batches `next` returns; stops early when it returns an undefined
/// image tensor.
StepRate measureStepRate(torch::nn::Module& model,
                         const std::function<torch::Tensor(const torch::Tensor&)>& forward,
                         torch::optim::Optimizer& optimizer,
                         const std::function<std::pair<torch::Tensor, torch::Tensor>()>& next,
                         int warmup, int steps);

}  // namespace netsmith::train
