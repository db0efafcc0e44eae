// Input and reshape family: Input, Flatten, Identity.
#include "ops/node_layer.h"
#include "ops/op_registry.h"

namespace netsmith::ops {

void registerInputOps(OpRegistry& registry) {
  OpDef input;
  input.name = "Input";
  input.group = "Input";
  input.help =
      "the model input; its shape is the model's input declaration (channels, height, width)";
  input.minInputs = 0;
  input.maxInputs = 0;
  input.isSource = true;
  input.inferShape = [](const std::vector<Shape>& in, const schema::Params&) { return in.at(0); };
  input.build = [](const LayerSpec&) {
    return unaryLayer([](const torch::Tensor& x, bool) { return x; });
  };
  input.toOnnx = onnxPassThrough;  // the exporter names the graph input
  input.toPyTorch = [](const EmitNode& n) { return PyNode{"", n.inputs.at(0)}; };
  registry.add(std::move(input));
}

void registerReshapeOps(OpRegistry& registry) {
  OpDef flatten;
  flatten.name = "Flatten";
  flatten.group = "Reshape";
  flatten.help = "reshapes each sample to a flat vector: CxHxW -> C*H*W";
  flatten.inferShape = [](const std::vector<Shape>& in, const schema::Params&) {
    return Shape{shapeNumel(in[0])};
  };
  flatten.build = [](const LayerSpec&) {
    return unaryLayer([](const torch::Tensor& x, bool) { return torch::flatten(x, 1); });
  };
  flatten.toOnnx = [](OnnxEmitter& onnx, const EmitNode& n) {
    return onnx.node("Flatten", {n.inputs[0]}, {OnnxAttr::integer("axis", 1)});
  };
  flatten.toPyTorch = [](const EmitNode& n) { return pyModule("nn.Flatten()", n); };
  registry.add(std::move(flatten));

  OpDef identity;
  identity.name = "Identity";
  identity.group = "Reshape";
  identity.help = "passes its input through unchanged";
  identity.inferShape = [](const std::vector<Shape>& in, const schema::Params&) { return in[0]; };
  identity.build = [](const LayerSpec&) {
    return unaryLayer([](const torch::Tensor& x, bool) { return x; });
  };
  identity.toOnnx = onnxPassThrough;
  identity.toPyTorch = [](const EmitNode& n) { return pyModule("nn.Identity()", n); };
  registry.add(std::move(identity));
}

}  // namespace netsmith::ops
