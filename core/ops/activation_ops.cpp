// Activation family: ReLU, ReLU6, LeakyReLU, GELU, SiLU, Hardsigmoid, Hardswish, Sigmoid, Tanh,
// Softmax.
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
                 std::function<std::shared_ptr<NodeLayerImpl>(const Params&)> make,
                 std::function<std::string(OnnxEmitter&, const EmitNode&)> toOnnx,
                 std::function<std::string(const Params&)> pyModuleText) {
  OpDef def;
  def.name = std::move(name);
  def.group = "Activation";
  def.help = std::move(help);
  def.schema = std::move(params);
  def.inferShape = sameShape;
  def.build = [make = std::move(make)](const LayerSpec& spec) { return make(spec.params); };
  def.toOnnx = std::move(toOnnx);
  def.toPyTorch = [py = std::move(pyModuleText)](const EmitNode& n) {
    return pyModule(py(n.params), n);
  };
  return def;
}

// One ONNX node of `type` on the node's input.
std::function<std::string(OnnxEmitter&, const EmitNode&)> onnxUnary(std::string type) {
  return [type = std::move(type)](OnnxEmitter& onnx, const EmitNode& n) {
    return onnx.node(type, {n.inputs[0]});
  };
}

std::function<std::string(const Params&)> pyText(std::string text) {
  return [text = std::move(text)](const Params&) { return text; };
}

// GELU as its formula (ONNX has no Gelu before opset 20).
std::string onnxGelu(OnnxEmitter& onnx, const EmitNode& n) {
  const std::string& x = n.inputs[0];
  if (n.params.text("approximate") == "tanh") {
    // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    const auto x3 = onnx.node("Mul", {onnx.node("Mul", {x, x}), x});
    const auto inner = onnx.node("Add", {x, onnx.node("Mul", {x3, onnx.constant({0.044715f})})});
    const auto t =
        onnx.node("Tanh", {onnx.node("Mul", {inner, onnx.constant({0.7978845608028654f})})});
    const auto one = onnx.node("Add", {t, onnx.constant({1.0f})});
    return onnx.node("Mul", {onnx.node("Mul", {x, one}), onnx.constant({0.5f})});
  }
  // 0.5 x (1 + erf(x / sqrt(2)))
  const auto e = onnx.node("Erf", {onnx.node("Div", {x, onnx.constant({1.4142135623730951f})})});
  const auto one = onnx.node("Add", {e, onnx.constant({1.0f})});
  return onnx.node("Mul", {onnx.node("Mul", {x, one}), onnx.constant({0.5f})});
}

// relu6(x + 3) / 6 as ONNX's HardSigmoid (alpha 1/6, beta 1/2: the same function).
std::string onnxHardsigmoid(OnnxEmitter& onnx, const std::string& x) {
  return onnx.node("HardSigmoid", {x},
                   {OnnxAttr::real("alpha", 1.0f / 6.0f), OnnxAttr::real("beta", 0.5f)});
}

}  // namespace

// arch: table of data (one entry per activation).
void registerActivationOps(OpRegistry& registry) {
  registry.add(activation(
      "ReLU", "max(0, x)", {},
      [](const Params&) {
        return unaryLayer([](const torch::Tensor& x, bool) { return torch::relu(x); });
      },
      onnxUnary("Relu"), pyText("nn.ReLU()")));
  registry.add(activation(
      "ReLU6", "min(max(0, x), 6) (MobileNet)", {},
      [](const Params&) {
        return unaryLayer([](const torch::Tensor& x, bool) { return torch::clamp(x, 0.0, 6.0); });
      },
      [](OnnxEmitter& onnx, const EmitNode& n) {
        // 6 * HardSigmoid(x; 1/6, 0) = clamp(x, 0, 6). Clip with bound inputs (opset 11+) is
        // what PyTorch writes, but OpenCV DNN 4.6 reads only the attribute form of opset < 11.
        const auto h =
            onnx.node("HardSigmoid", {n.inputs[0]},
                      {OnnxAttr::real("alpha", 1.0f / 6.0f), OnnxAttr::real("beta", 0.0f)});
        return onnx.node("Mul", {h, onnx.constant({6.0f})});
      },
      pyText("nn.ReLU6()")));
  registry.add(activation(
      "Hardsigmoid", "relu6(x + 3) / 6 (MobileNetV3's gates)", {},
      [](const Params&) {
        return unaryLayer([](const torch::Tensor& x, bool) { return torch::hardsigmoid(x); });
      },
      [](OnnxEmitter& onnx, const EmitNode& n) { return onnxHardsigmoid(onnx, n.inputs[0]); },
      pyText("nn.Hardsigmoid()")));
  registry.add(activation(
      "Hardswish", "x * relu6(x + 3) / 6 (MobileNetV3)", {},
      [](const Params&) {
        return unaryLayer([](const torch::Tensor& x, bool) { return torch::hardswish(x); });
      },
      [](OnnxEmitter& onnx, const EmitNode& n) {
        if (onnx.opset() >= 14) return onnx.node("HardSwish", {n.inputs[0]});
        return onnx.node("Mul", {n.inputs[0], onnxHardsigmoid(onnx, n.inputs[0])});
      },
      pyText("nn.Hardswish()")));
  registry.add(activation(
      "LeakyReLU", "x for x > 0, negative_slope * x otherwise",
      {ParamSpec::real("negative_slope", 0.01, "slope for negative inputs").atLeast(0).atMost(1)},
      [](const Params& p) {
        const double slope = p.real("negative_slope");
        return unaryLayer(
            [slope](const torch::Tensor& x, bool) { return torch::leaky_relu(x, slope); });
      },
      [](OnnxEmitter& onnx, const EmitNode& n) {
        return onnx.node(
            "LeakyRelu", {n.inputs[0]},
            {OnnxAttr::real("alpha", static_cast<float>(n.params.real("negative_slope")))});
      },
      [](const Params& p) { return "nn.LeakyReLU(" + pyNumber(p.real("negative_slope")) + ")"; }));
  registry.add(activation(
      "GELU", "Gaussian error linear unit",
      {ParamSpec::choice("approximate", "none", {"none", "tanh"},
                         "exact erf formula, or the tanh approximation")},
      [](const Params& p) {
        const std::string approx = p.text("approximate");
        return unaryLayer(
            [approx](const torch::Tensor& x, bool) { return torch::gelu(x, approx); });
      },
      onnxGelu,
      [](const Params& p) { return "nn.GELU(approximate='" + p.text("approximate") + "')"; }));
  registry.add(activation(
      "SiLU", "x * sigmoid(x) (swish)", {},
      [](const Params&) {
        return unaryLayer([](const torch::Tensor& x, bool) { return torch::silu(x); });
      },
      [](OnnxEmitter& onnx, const EmitNode& n) {
        return onnx.node("Mul", {n.inputs[0], onnx.node("Sigmoid", {n.inputs[0]})});
      },
      pyText("nn.SiLU()")));
  registry.add(activation(
      "Sigmoid", "1 / (1 + exp(-x))", {},
      [](const Params&) {
        return unaryLayer([](const torch::Tensor& x, bool) { return torch::sigmoid(x); });
      },
      onnxUnary("Sigmoid"), pyText("nn.Sigmoid()")));
  registry.add(activation(
      "Tanh", "hyperbolic tangent", {},
      [](const Params&) {
        return unaryLayer([](const torch::Tensor& x, bool) { return torch::tanh(x); });
      },
      onnxUnary("Tanh"), pyText("nn.Tanh()")));
  registry.add(activation(
      "Softmax", "softmax over the channel / feature dimension", {},
      [](const Params&) {
        return unaryLayer(
            [](const torch::Tensor& x, bool) { return torch::softmax(x, /*dim=*/1); });
      },
      [](OnnxEmitter& onnx, const EmitNode& n) {
        // Before opset 13, Softmax flattens everything after `axis`: right only for vectors.
        if (onnx.opset() < 13 && n.inputShapes[0].size() > 1) {
          throw NotExportable{"Softmax over the channels of a " + formatShape(n.inputShapes[0]) +
                                  " tensor needs opset 13",
                              13};
        }
        return onnx.node("Softmax", {n.inputs[0]}, {OnnxAttr::integer("axis", 1)});
      },
      pyText("nn.Softmax(dim=1)")));
}

}  // namespace netsmith::ops
