// Convolution family: Conv2d.
#include "ops/node_layer.h"
#include "ops/op_params.h"
#include "ops/op_registry.h"
#include "ops/shape_rules.h"

namespace netsmith::ops {
namespace {

using schema::Params;
using schema::ParamSpec;

struct ConvGeometry : ConvBasics {
  std::array<std::int64_t, 2> padBefore, padAfter;  // per axis (H, W)
};

ConvGeometry convGeometry(const Shape& in, const Params& p) {
  ConvGeometry g{convBasics(in, p), {}, {}};
  if (p.isKeyword("padding", "same")) {
    for (int a = 0; a < 2; ++a) {
      const auto pad = samePadding(g.kernel[a], g.dilation[a]);
      g.padBefore[a] = pad[0];
      g.padAfter[a] = pad[1];
    }
  } else if (p.isKeyword("padding", "valid")) {
    g.padBefore = g.padAfter = {0, 0};
  } else {
    g.padBefore = g.padAfter = p.pair("padding");
  }
  return g;
}

Shape conv2dShape(const std::vector<Shape>& in, const Params& p) {
  requireImage(in[0], "Conv2d");
  const auto g = convGeometry(in[0], p);
  requireConvChannels("Conv2d", p, g);
  if (p.isKeyword("padding", "same") && (g.stride[0] != 1 || g.stride[1] != 1)) {
    throw ShapeError{"padding \"same\" needs stride 1",
                     "set stride to 1 or give padding as numbers"};
  }
  Shape out{g.outChannels, 0, 0};
  for (int a = 0; a < 2; ++a) {
    const std::int64_t padded = in[0][1 + a] + g.padBefore[a] + g.padAfter[a];
    const std::int64_t span = g.dilation[a] * (g.kernel[a] - 1) + 1;
    if (padded < span) {
      throw ShapeError{"kernel " + std::to_string(g.kernel[0]) + "x" + std::to_string(g.kernel[1]) +
                           " (dilation " + std::to_string(g.dilation[a]) +
                           ") is larger than the padded input " + formatShape(in[0]),
                       "use a smaller kernel_size or more padding"};
    }
    out[1 + a] = (padded - span) / g.stride[a] + 1;
  }
  return out;
}

std::int64_t conv2dParams(const std::vector<Shape>& in, const Params& p) {
  const auto g = convGeometry(in[0], p);
  return g.outChannels * (g.inChannels / g.groups) * g.kernel[0] * g.kernel[1] +
         (g.bias ? g.outChannels : 0);
}

std::int64_t conv2dMacs(const std::vector<Shape>& in, const Shape& out, const Params& p) {
  const auto g = convGeometry(in[0], p);
  return out[0] * out[1] * out[2] * (g.inChannels / g.groups) * g.kernel[0] * g.kernel[1];
}

class Conv2dLayerImpl : public NodeLayerImpl {
 public:
  explicit Conv2dLayerImpl(const LayerSpec& spec)
      : m_g(convGeometry(spec.inputShapes[0], spec.params)) {
    weight = register_parameter(
        "weight",
        torch::empty({m_g.outChannels, m_g.inChannels / m_g.groups, m_g.kernel[0], m_g.kernel[1]}));
    if (m_g.bias) bias = register_parameter("bias", torch::empty({m_g.outChannels}));
    m_symmetric = m_g.padBefore == m_g.padAfter;
    initialise(InitScheme::Default);
  }

  torch::Tensor forward(const std::vector<torch::Tensor>& inputs) override {
    torch::Tensor x = inputs.at(0);
    std::array<std::int64_t, 2> pad = m_g.padBefore;
    if (!m_symmetric) {
      // "same" with an even kernel: pad the extra pixel on the bottom/right, as PyTorch does.
      x = torch::constant_pad_nd(
          x, {m_g.padBefore[1], m_g.padAfter[1], m_g.padBefore[0], m_g.padAfter[0]});
      pad = {0, 0};
    }
    return torch::conv2d(x, weight, bias, m_g.stride, pad, m_g.dilation, m_g.groups);
  }

  void initialise(InitScheme scheme) override { initialiseWeightAndBias(weight, bias, scheme); }

  torch::Tensor weight, bias;

 private:
  ConvGeometry m_g;
  bool m_symmetric = true;
};

}  // namespace

void registerConvOps(OpRegistry& registry) {
  OpDef conv;
  conv.name = "Conv2d";
  conv.group = "Convolution";
  conv.help = "2-D convolution over a CxHxW input";
  conv.schema = convSchema({
      ParamSpec::intPair("kernel_size", 3, "filter height and width")
          .atLeast(1)
          .atMost(1024)
          .inUnit("px"),
      ParamSpec::intPair("stride", 1, "step between filter positions")
          .atLeast(1)
          .atMost(1024)
          .inUnit("px"),
      ParamSpec::intPair("padding", 0,
                         "zero padding on each side; \"same\" keeps the size (stride 1)")
          .atLeast(0)
          .atMost(1024)
          .orKeywords({"same", "valid"})
          .inUnit("px"),
  });
  conv.initSchemes = weightInitSchemes();
  conv.inferShape = conv2dShape;
  conv.autoValues = inputSizeFor("in_channels");
  conv.paramCount = conv2dParams;
  conv.macs = conv2dMacs;
  conv.build = [](const LayerSpec& spec) { return std::make_shared<Conv2dLayerImpl>(spec); };
  conv.toOnnx = [](OnnxEmitter& onnx, const EmitNode& n) {
    const auto g = convGeometry(n.inputShapes[0], n.params);
    std::vector<std::string> in{n.inputs[0], onnx.tensor(n.id + ".weight")};
    if (g.bias) in.push_back(onnx.tensor(n.id + ".bias"));
    return onnx.node(
        "Conv", in,
        {OnnxAttr::integers("kernel_shape", {g.kernel[0], g.kernel[1]}),
         OnnxAttr::integers("strides", {g.stride[0], g.stride[1]}),
         OnnxAttr::integers("pads", {g.padBefore[0], g.padBefore[1], g.padAfter[0], g.padAfter[1]}),
         OnnxAttr::integers("dilations", {g.dilation[0], g.dilation[1]}),
         OnnxAttr::integer("group", g.groups)});
  };
  conv.toPyTorch = [](const EmitNode& n) {
    const auto g = convGeometry(n.inputShapes[0], n.params);
    const std::string padding =
        n.params.isKeyword("padding", "same") ? "'same'" : pyPair(g.padBefore);
    return pyModule("nn.Conv2d(" + std::to_string(g.inChannels) + ", " +
                        std::to_string(g.outChannels) + ", kernel_size=" + pyPair(g.kernel) +
                        ", stride=" + pyPair(g.stride) + ", padding=" + padding +
                        ", dilation=" + pyPair(g.dilation) +
                        ", groups=" + std::to_string(g.groups) + ", bias=" + pyBool(g.bias) + ")",
                    n);
  };
  registry.add(std::move(conv));
}

}  // namespace netsmith::ops
