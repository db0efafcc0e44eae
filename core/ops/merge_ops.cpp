// Merge family: Add (residual sum), Mul (gating, with channel broadcast) and Concat (along
// channels / features).
#include "ops/node_layer.h"
#include "ops/op_registry.h"

namespace netsmith::ops {
namespace {

std::string listShapes(const std::vector<Shape>& in) {
  std::string out;
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (i) out += ", ";
    out += formatShape(in[i]);
  }
  return out;
}

Shape addShape(const std::vector<Shape>& in, const schema::Params&) {
  for (const auto& s : in) {
    if (s != in[0]) {
      throw ShapeError{"Add needs inputs of one shape but receives " + listShapes(in),
                       "make the branches agree, e.g. a 1x1 Conv2d (with the stride of the other "
                       "branch) on the shortcut"};
    }
  }
  return in[0];
}

// Mul: inputs of one shape, or a C x 1 x 1 gate (squeeze-and-excitation) times a C x H x W map.
Shape mulShape(const std::vector<Shape>& in, const schema::Params&) {
  const auto& a = in[0];
  const auto& b = in[1];
  if (a == b) return a;
  const auto isGateFor = [](const Shape& gate, const Shape& map) {
    return gate.size() == 3 && map.size() == 3 && gate[0] == map[0] && gate[1] == 1 && gate[2] == 1;
  };
  if (isGateFor(a, b)) return b;
  if (isGateFor(b, a)) return a;
  throw ShapeError{"Mul needs inputs of one shape, or a Cx1x1 gate and a CxHxW map, but receives " +
                       listShapes(in),
                   "feed it the map and a per-channel gate (GlobalAvgPool, 1x1 convolutions, "
                   "a sigmoid)"};
}

Shape concatShape(const std::vector<Shape>& in, const schema::Params&) {
  Shape out = in[0];
  for (std::size_t i = 1; i < in.size(); ++i) {
    const auto& s = in[i];
    bool fits = s.size() == out.size();
    for (std::size_t d = 1; fits && d < s.size(); ++d)
      fits = s[d] == out[d];
    if (!fits) {
      throw ShapeError{
          "Concat joins along channels, so all other dimensions must match, but it "
          "receives " +
              listShapes(in),
          "resize the branches to the same height and width first"};
    }
    out[0] += s[0];
  }
  return out;
}

}  // namespace

void registerMergeOps(OpRegistry& registry) {
  OpDef add;
  add.name = "Add";
  add.group = "Merge";
  add.help = "element-wise sum of two or more inputs of one shape (residual connections)";
  add.minInputs = 2;
  add.maxInputs = -1;
  add.inferShape = addShape;
  add.build = [](const LayerSpec&) {
    return std::make_shared<FunctionLayerImpl>([](const std::vector<torch::Tensor>& in, bool) {
      torch::Tensor sum = in.at(0);
      for (std::size_t i = 1; i < in.size(); ++i)
        sum = sum + in[i];
      return sum;
    });
  };
  add.toOnnx = [](OnnxEmitter& onnx, const EmitNode& n) {
    std::string sum = n.inputs[0];
    for (std::size_t i = 1; i < n.inputs.size(); ++i)
      sum = onnx.node("Add", {sum, n.inputs[i]});
    return sum;
  };
  add.toPyTorch = [](const EmitNode& n) {
    std::string sum = n.inputs[0];
    for (std::size_t i = 1; i < n.inputs.size(); ++i)
      sum += " + " + n.inputs[i];
    return PyNode{"", sum};
  };
  registry.add(std::move(add));

  OpDef mul;
  mul.name = "Mul";
  mul.group = "Merge";
  mul.help =
      "element-wise product of two inputs; a Cx1x1 gate scales each channel of a CxHxW map "
      "(squeeze-and-excitation)";
  mul.minInputs = 2;
  mul.maxInputs = 2;
  mul.inferShape = mulShape;
  mul.build = [](const LayerSpec&) {
    return std::make_shared<FunctionLayerImpl>(
        [](const std::vector<torch::Tensor>& in, bool) { return in.at(0) * in.at(1); });
  };
  mul.toOnnx = [](OnnxEmitter& onnx, const EmitNode& n) {
    return onnx.node("Mul", {n.inputs[0], n.inputs[1]});
  };
  mul.toPyTorch = [](const EmitNode& n) { return PyNode{"", n.inputs[0] + " * " + n.inputs[1]}; };
  registry.add(std::move(mul));

  OpDef concat;
  concat.name = "Concat";
  concat.group = "Merge";
  concat.help = "joins two or more inputs along the channel (or feature) dimension";
  concat.minInputs = 2;
  concat.maxInputs = -1;
  concat.inferShape = concatShape;
  concat.build = [](const LayerSpec&) {
    return std::make_shared<FunctionLayerImpl>(
        [](const std::vector<torch::Tensor>& in, bool) { return torch::cat(in, /*dim=*/1); });
  };
  concat.toOnnx = [](OnnxEmitter& onnx, const EmitNode& n) {
    return onnx.node("Concat", n.inputs, {OnnxAttr::integer("axis", 1)});
  };
  concat.toPyTorch = [](const EmitNode& n) {
    std::string list;
    for (const auto& in : n.inputs)
      list += (list.empty() ? "" : ", ") + in;
    return PyNode{"", "torch.cat([" + list + "], dim=1)"};
  };
  registry.add(std::move(concat));
}

}  // namespace netsmith::ops
