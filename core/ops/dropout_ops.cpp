// Regularisation family: Dropout and Dropout2d (whole channels).
#include "ops/cpu_kernels.h"
#include "ops/node_layer.h"
#include "ops/op_registry.h"
#include "ops/shape_rules.h"

namespace netsmith::ops {
namespace {

using schema::ParamSpec;

schema::ParamSchema dropoutSchema() {
  return {ParamSpec::real("p", 0.5, "probability of zeroing an element (a channel for Dropout2d)")
              .atLeast(0)
              .atMost(1)};
}

}  // namespace

void registerDropoutOps(OpRegistry& registry) {
  OpDef dropout;
  dropout.name = "Dropout";
  dropout.group = "Regularisation";
  dropout.help = "zeroes random elements while training and rescales the rest";
  dropout.schema = dropoutSchema();
  dropout.inferShape = [](const std::vector<Shape>& in, const schema::Params&) { return in[0]; };
  dropout.build = [](const LayerSpec& spec) {
    const double p = spec.params.real("p");
    return unaryLayer([p](const torch::Tensor& x, bool training) {
      // Float32 on the CPU: a hashed mask, recomputed in backward (not LibTorch's per-element
      // Bernoulli draws under a lock).
      if (training && p > 0 && p < 1 && kernels::dropoutTakes(x)) return kernels::dropout(x, p);
      return torch::dropout(x, p, training);
    });
  };
  dropout.toOnnx = onnxPassThrough;  // inference graph: dropout does nothing
  dropout.toPyTorch = [](const EmitNode& n) {
    return pyModule("nn.Dropout(p=" + pyNumber(n.params.real("p")) + ")", n);
  };
  registry.add(std::move(dropout));

  OpDef dropout2d;
  dropout2d.name = "Dropout2d";
  dropout2d.group = "Regularisation";
  dropout2d.help = "zeroes whole random channels while training and rescales the rest";
  dropout2d.schema = dropoutSchema();
  dropout2d.inferShape = [](const std::vector<Shape>& in, const schema::Params&) {
    requireImage(in[0], "Dropout2d");
    return in[0];
  };
  dropout2d.build = [](const LayerSpec& spec) {
    const double p = spec.params.real("p");
    return unaryLayer([p](const torch::Tensor& x, bool training) {
      return torch::feature_dropout(x, p, training);
    });
  };
  dropout2d.toOnnx = onnxPassThrough;
  dropout2d.toPyTorch = [](const EmitNode& n) {
    return pyModule("nn.Dropout2d(p=" + pyNumber(n.params.real("p")) + ")", n);
  };
  registry.add(std::move(dropout2d));
}

}  // namespace netsmith::ops
