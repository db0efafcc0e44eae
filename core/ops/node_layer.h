#pragma once

// LibTorch side of the op registry. Included only by files that build or run layers.
#include <torch/torch.h>

#include <functional>
#include <vector>

#include "ops/op_def.h"

namespace netsmith::ops {

/// One graph node as a LibTorch module. Parameters and buffers are registered on the layer
/// itself, under PyTorch's names ("weight", "bias", "running_mean"), so state dicts line up
/// with the equivalent PyTorch layers.
class NodeLayerImpl : public torch::nn::Module {
 public:
  /// Runs the node on its inputs, in the order of the node's `inputs` list.
  virtual torch::Tensor forward(const std::vector<torch::Tensor>& inputs) = 0;
  /// Re-initialises the weights. `Default` reproduces PyTorch's reset_parameters().
  virtual void initialise(InitScheme scheme) { (void)scheme; }
  /// Whether forwardThenRelu() does better than forward() followed by a ReLU layer: the graph
  /// module then runs a node and the ReLU that alone consumes it as one step.
  virtual bool fusesRelu() const { return false; }
  /// relu(forward(inputs)), in one pass where the layer can.
  virtual torch::Tensor forwardThenRelu(const std::vector<torch::Tensor>& inputs) {
    return torch::relu(forward(inputs));
  }
  /// A differentiable sum over the processes of a data-parallel job, for layers whose training
  /// statistics span the whole global batch (synchronised BatchNorm). Empty: per process.
  /// Returns true when the layer uses it.
  using CrossProcessSum = std::function<torch::Tensor(const torch::Tensor&)>;
  virtual bool setCrossProcessSum(CrossProcessSum sum) {
    (void)sum;
    return false;
  }
};

/// A layer without parameters, defined by a function of its inputs and the training flag.
class FunctionLayerImpl : public NodeLayerImpl {
 public:
  using Fn = std::function<torch::Tensor(const std::vector<torch::Tensor>&, bool training)>;
  explicit FunctionLayerImpl(Fn fn) : m_fn(std::move(fn)) {}
  torch::Tensor forward(const std::vector<torch::Tensor>& inputs) override {
    return m_fn(inputs, is_training());
  }

 private:
  Fn m_fn;
};

/// Shorthand for single-input parameterless ops: `unaryLayer([](auto x, bool) { ... })`.
std::shared_ptr<NodeLayerImpl> unaryLayer(
    std::function<torch::Tensor(const torch::Tensor&, bool training)> fn);

/// Initialises a weight (and optional bias) of a Conv/Linear-like layer. Default follows
/// PyTorch: kaiming_uniform(a = sqrt(5)) and bias ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)); the
/// other schemes set the bias to zero.
void initialiseWeightAndBias(torch::Tensor& weight, torch::Tensor& bias, InitScheme scheme);

}  // namespace netsmith::ops
