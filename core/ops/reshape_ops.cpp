// Input and reshape family: Input, Flatten, Identity, ZeroPad2d.
#include "common/error.h"
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

namespace {

OpDef zeroPadDef() {
  OpDef pad;
  pad.name = "ZeroPad2d";
  pad.group = "Reshape";
  pad.help =
      "zeros around the image, each side its own width (asymmetric padding, as "
      "TensorFlow's SAME convolutions at a stride use)";
  for (const char* side : {"left", "right", "top", "bottom"})
    pad.schema.push_back(
        schema::ParamSpec::integer(side, 0, std::string("columns or rows of zeros on the ") + side)
            .atLeast(0)
            .atMost(4096));
  pad.inferShape = [](const std::vector<Shape>& in, const schema::Params& p) {
    if (in[0].size() != 3)
      throw ShapeError{"ZeroPad2d pads an image (CxHxW) but receives " + formatShape(in[0]),
                       "place it before the Flatten"};
    return Shape{in[0][0], in[0][1] + p.integer("top") + p.integer("bottom"),
                 in[0][2] + p.integer("left") + p.integer("right")};
  };
  pad.build = [](const LayerSpec& spec) {
    const std::vector<std::int64_t> sides{spec.params.integer("left"), spec.params.integer("right"),
                                          spec.params.integer("top"),
                                          spec.params.integer("bottom")};
    return unaryLayer([sides](const torch::Tensor& x, bool) {
      // LibTorch would pad a vector's batch dimension instead: images only, as the shape rule.
      if (x.dim() != 4) throw Error("ZeroPad2d pads N x C x H x W images only");
      return torch::constant_pad_nd(x, sides, 0.0);
    });
  };
  pad.toOnnx = [](OnnxEmitter& onnx, const EmitNode& n) {
    // ONNX pads: the starts of N, C, H, W, then their ends.
    const auto& p = n.params;
    return onnx.node(
        "Pad", {n.inputs[0], onnx.constantInts({0, 0, p.integer("top"), p.integer("left"), 0, 0,
                                                p.integer("bottom"), p.integer("right")})});
  };
  pad.toPyTorch = [](const EmitNode& n) {
    const auto& p = n.params;
    return pyModule("nn.ZeroPad2d((" + std::to_string(p.integer("left")) + ", " +
                        std::to_string(p.integer("right")) + ", " +
                        std::to_string(p.integer("top")) + ", " +
                        std::to_string(p.integer("bottom")) + "))",
                    n);
  };
  return pad;
}

}  // namespace

void registerReshapeOps(OpRegistry& registry) {
  registry.add(zeroPadDef());
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
