#pragma once

// Builds LibTorch optimizers from the project's optimizer options.
#include <torch/torch.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graph/model_graph.h"

#include "train/train_options.h"

namespace netsmith::train {

/// An optimizer over the trainable (requires_grad) parameters of `named`. With
/// no_decay_norm_and_bias, parameters of one dimension (biases, BatchNorm scales and shifts)
/// form a second group without weight decay.
/// `lrMult`: a learning-rate multiplier per node id (parameter names are "<node>.<name>"); each
/// multiplier gets its own groups, and `groupScales` (when given) receives the multiplier of
/// every group in order, for setLearningRate. `includeFrozen`: frozen parameters join too (for
/// gradual unfreezing; they take no step while they have no gradient).
std::unique_ptr<torch::optim::Optimizer> makeOptimizer(
    const OptimizerOptions& options, const torch::OrderedDict<std::string, torch::Tensor>& named,
    const std::map<std::string, double>& lrMult = {}, std::vector<double>* groupScales = nullptr,
    bool includeFrozen = false);

/// Sets the learning rate of every parameter group: `lr` times the group's scale (1 where
/// `scales` has no entry).
void setLearningRate(torch::optim::Optimizer& optimizer, double lr,
                     const std::vector<double>& scales = {});

/// The nodes of `model` whose multiplier is not 1, by id.
std::map<std::string, double> lrMultipliers(const graph::ModelGraph& model);

}  // namespace netsmith::train
