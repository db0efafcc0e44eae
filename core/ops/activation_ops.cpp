// Activation family: ReLU, LeakyReLU, GELU, SiLU, Sigmoid, Tanh, Softmax.
#include "ops/node_layer.h"
#include "ops/op_registry.h"

namespace netsmith::ops {
namespace {

using schema::Params;
using schema::ParamSpec;

Shape sameShape(const std::vector<Shape>& in, const Params&) {
  return in[0];
}

OpDef activation(std::string name, std::string help, schema::ParamSchema params,
                 std::function<std::shared_ptr<NodeLayerImpl>(const Params&)> make) {
  OpDef def;
  def.name = std::move(name);
  def.group = "Activation";
  def.help = std::move(help);
  def.schema = std::move(params);
  def.inferShape = sameShape;
  def.build = [make = std::move(make)](const LayerSpec& spec) { return make(spec.params); };
  return def;
}

}  // namespace

void registerActivationOps(OpRegistry& registry) {
  registry.add(activation("ReLU", "max(0, x)", {}, [](const Params&) {
    return unaryLayer([](const torch::Tensor& x, bool) { return torch::relu(x); });
  }));
  registry.add(activation(
      "LeakyReLU", "x for x > 0, negative_slope * x otherwise",
      {ParamSpec::real("negative_slope", 0.01, "slope for negative inputs").atLeast(0).atMost(1)},
      [](const Params& p) {
        const double slope = p.real("negative_slope");
        return unaryLayer(
            [slope](const torch::Tensor& x, bool) { return torch::leaky_relu(x, slope); });
      }));
  registry.add(activation("GELU", "Gaussian error linear unit",
                          {ParamSpec::choice("approximate", "none", {"none", "tanh"},
                                             "exact erf formula, or the tanh approximation")},
                          [](const Params& p) {
                            const std::string approx = p.text("approximate");
                            return unaryLayer([approx](const torch::Tensor& x, bool) {
                              return torch::gelu(x, approx);
                            });
                          }));
  registry.add(activation("SiLU", "x * sigmoid(x) (swish)", {}, [](const Params&) {
    return unaryLayer([](const torch::Tensor& x, bool) { return torch::silu(x); });
  }));
  registry.add(activation("Sigmoid", "1 / (1 + exp(-x))", {}, [](const Params&) {
    return unaryLayer([](const torch::Tensor& x, bool) { return torch::sigmoid(x); });
  }));
  registry.add(activation("Tanh", "hyperbolic tangent", {}, [](const Params&) {
    return unaryLayer([](const torch::Tensor& x, bool) { return torch::tanh(x); });
  }));
  registry.add(
      activation("Softmax", "softmax over the channel / feature dimension", {}, [](const Params&) {
        return unaryLayer(
            [](const torch::Tensor& x, bool) { return torch::softmax(x, /*dim=*/1); });
      }));
}

}  // namespace netsmith::ops
