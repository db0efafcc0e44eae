#pragma once

// Builds LibTorch optimizers from the project's optimizer options.
#include <torch/torch.h>

#include <memory>

#include "train/train_options.h"

namespace netsmith::train {

/// An optimizer over the trainable (requires_grad) parameters of `named`. With
/// no_decay_norm_and_bias, parameters of one dimension (biases, BatchNorm scales and shifts)
/// form a second group without weight decay.
std::unique_ptr<torch::optim::Optimizer> makeOptimizer(
    const OptimizerOptions& options, const torch::OrderedDict<std::string, torch::Tensor>& named);

/// Sets the learning rate of every parameter group.
void setLearningRate(torch::optim::Optimizer& optimizer, double lr);

}  // namespace netsmith::train
