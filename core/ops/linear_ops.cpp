// Linear family: Linear (fully connected).
#include "ops/node_layer.h"
#include "ops/op_params.h"
#include "ops/op_registry.h"
#include "ops/shape_rules.h"

namespace netsmith::ops {
namespace {

using schema::Params;
using schema::ParamSpec;

Shape linearShape(const std::vector<Shape>& in, const Params& p) {
  if (in[0].size() != 1) {
    const std::string given =
        p.isAuto("in_features") ? std::string() : std::to_string(p.integer("in_features")) + " ";
    throw ShapeError{"Linear expects a flat vector of " + given + "features but receives " +
                         formatShape(in[0]) + " (" + std::to_string(shapeNumel(in[0])) + " values)",
                     "insert a Flatten before it"};
  }
  if (!p.isAuto("in_features") && p.integer("in_features") != in[0][0]) {
    throw ShapeError{"Linear expects " + std::to_string(p.integer("in_features")) +
                         " inputs but receives " + std::to_string(in[0][0]),
                     "set in_features to " + std::to_string(in[0][0]) + " or \"auto\""};
  }
  return {p.integer("out_features")};
}

class LinearLayerImpl : public NodeLayerImpl {
 public:
  explicit LinearLayerImpl(const LayerSpec& spec) {
    const std::int64_t in = spec.inputShapes[0][0];
    const std::int64_t out = spec.params.integer("out_features");
    weight = register_parameter("weight", torch::empty({out, in}));
    if (spec.params.flag("bias")) bias = register_parameter("bias", torch::empty({out}));
    initialise(InitScheme::Default);
  }

  torch::Tensor forward(const std::vector<torch::Tensor>& inputs) override {
    return torch::linear(inputs.at(0), weight, bias);
  }

  void initialise(InitScheme scheme) override { initialiseWeightAndBias(weight, bias, scheme); }

  torch::Tensor weight, bias;
};

}  // namespace

void registerLinearOps(OpRegistry& registry) {
  OpDef linear;
  linear.name = "Linear";
  linear.group = "Linear";
  linear.help = "fully connected layer: y = x W^T + b";
  linear.schema = {
      inputSizeParam("in_features", "input size; \"auto\" takes it from the input"),
      ParamSpec::integer("out_features", nullptr,
                         "output size (the number of classes for the last layer)")
          .atLeast(1)
          .atMost(1 << 24),
      ParamSpec::boolean("bias", true, "learn an additive bias"),
  };
  linear.initSchemes = weightInitSchemes();
  linear.inferShape = linearShape;
  linear.autoValues = inputSizeFor("in_features");
  linear.paramCount = [](const std::vector<Shape>& in, const Params& p) -> std::int64_t {
    const auto out = p.integer("out_features");
    return in[0][0] * out + (p.flag("bias") ? out : 0);
  };
  linear.macs = [](const std::vector<Shape>& in, const Shape& out, const Params&) {
    return in[0][0] * out[0];
  };
  linear.build = [](const LayerSpec& spec) { return std::make_shared<LinearLayerImpl>(spec); };
  linear.toOnnx = [](OnnxEmitter& onnx, const EmitNode& n) {
    std::vector<std::string> in{n.inputs[0], onnx.tensor(n.id + ".weight")};
    if (n.params.flag("bias")) in.push_back(onnx.tensor(n.id + ".bias"));
    return onnx.node("Gemm", in, {OnnxAttr::integer("transB", 1)});
  };
  linear.toPyTorch = [](const EmitNode& n) {
    return pyModule("nn.Linear(" + std::to_string(n.inputShapes[0][0]) + ", " +
                        std::to_string(n.params.integer("out_features")) +
                        ", bias=" + pyBool(n.params.flag("bias")) + ")",
                    n);
  };
  registry.add(std::move(linear));
}

}  // namespace netsmith::ops
