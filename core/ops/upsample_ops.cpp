// Upsampling family: ConvTranspose2d and Upsample, the layers that make an image larger (the
// decoder half of a segmentation network).
#include <algorithm>
#include <array>

#include "ops/node_layer.h"
#include "ops/op_params.h"
#include "ops/op_registry.h"
#include "ops/shape_rules.h"

namespace netsmith::ops {
namespace {

using schema::Params;
using schema::ParamSpec;

std::string axisName(int axis) {
  return axis == 0 ? "height" : "width";
}

/// The largest side these ops make: stacked upsampling cannot grow a shape past what any
/// activation could hold (nor overflow the arithmetic of the shapes after it).
constexpr std::int64_t kMaxSide = 65536;

void requireSide(const std::string& op, int axis, std::int64_t side, const Shape& in) {
  if (side <= kMaxSide) return;
  throw ShapeError{op + "'s output " + axisName(axis) + " would be " + std::to_string(side) +
                       " pixels for the input " + formatShape(in) + "; at most " +
                       std::to_string(kMaxSide),
                   "upsample less, or bring the input down first"};
}

struct TransposeGeometry : ConvBasics {
  std::array<std::int64_t, 2> padding, outputPadding;
};

TransposeGeometry transposeGeometry(const Shape& in, const Params& p) {
  return TransposeGeometry{convBasics(in, p), p.pair("padding"), p.pair("output_padding")};
}

Shape convTranspose2dShape(const std::vector<Shape>& in, const Params& p) {
  requireImage(in[0], "ConvTranspose2d");
  const auto g = transposeGeometry(in[0], p);
  requireConvChannels("ConvTranspose2d", p, g);
  Shape out{g.outChannels, 0, 0};
  for (int a = 0; a < 2; ++a) {
    // PyTorch's own rule: the extra rows must lie within one step of the filter.
    if (g.outputPadding[a] >= g.stride[a] && g.outputPadding[a] >= g.dilation[a]) {
      throw ShapeError{
          "output_padding " + pyPair(g.outputPadding) + " must be smaller than the stride " +
              pyPair(g.stride) + " or the dilation " + pyPair(g.dilation) + " on each axis",
          "use an output_padding below " + std::to_string(std::max(g.stride[a], g.dilation[a])) +
              " on the " + axisName(a) + ", or a larger stride"};
    }
    out[1 + a] = transposedConvOutputSize(in[0][1 + a], g.kernel[a], g.stride[a], g.padding[a],
                                          g.outputPadding[a], g.dilation[a]);
    requireSide("ConvTranspose2d", a, out[1 + a], in[0]);
    if (out[1 + a] < 1) {
      // Without padding the size is at least 1; each unit of padding takes 2 off.
      const std::int64_t unpadded = out[1 + a] + 2 * g.padding[a];
      throw ShapeError{
          "ConvTranspose2d's output " + axisName(a) + " would be " + std::to_string(out[1 + a]) +
              ": (" + std::to_string(in[0][1 + a]) + " - 1) x stride " +
              std::to_string(g.stride[a]) + " - 2 x padding " + std::to_string(g.padding[a]) +
              " + dilation " + std::to_string(g.dilation[a]) + " x (kernel " +
              std::to_string(g.kernel[a]) + " - 1) + output_padding " +
              std::to_string(g.outputPadding[a]) + " + 1, for the input " + formatShape(in[0]),
          "use a padding of at most " + std::to_string((unpadded - 1) / 2) + " on the " +
              axisName(a) + ", or a larger kernel_size or stride"};
    }
  }
  return out;
}

std::int64_t convTranspose2dParams(const std::vector<Shape>& in, const Params& p) {
  const auto g = transposeGeometry(in[0], p);
  return g.inChannels * (g.outChannels / g.groups) * g.kernel[0] * g.kernel[1] +
         (g.bias ? g.outChannels : 0);
}

// Every input pixel of a group meets each of its output channels' filters once.
std::int64_t convTranspose2dMacs(const std::vector<Shape>& in, const Shape&, const Params& p) {
  const auto g = transposeGeometry(in[0], p);
  return (g.inChannels / g.groups) * g.outChannels * g.kernel[0] * g.kernel[1] * in[0][1] *
         in[0][2];
}

class ConvTranspose2dLayerImpl : public NodeLayerImpl {
 public:
  explicit ConvTranspose2dLayerImpl(const LayerSpec& spec)
      : m_g(transposeGeometry(spec.inputShapes[0], spec.params)) {
    // PyTorch's layout for a transposed convolution: in x out/groups x kH x kW. Its Default
    // init therefore takes fan_in from out/groups x kH x kW, as nn.ConvTranspose2d's does.
    weight = register_parameter(
        "weight",
        torch::empty({m_g.inChannels, m_g.outChannels / m_g.groups, m_g.kernel[0], m_g.kernel[1]}));
    if (m_g.bias) bias = register_parameter("bias", torch::empty({m_g.outChannels}));
    initialise(InitScheme::Default);
  }

  torch::Tensor forward(const std::vector<torch::Tensor>& inputs) override {
    return torch::conv_transpose2d(inputs.at(0), weight, bias, m_g.stride, m_g.padding,
                                   m_g.outputPadding, m_g.groups, m_g.dilation);
  }

  void initialise(InitScheme scheme) override { initialiseWeightAndBias(weight, bias, scheme); }

  torch::Tensor weight, bias;

 private:
  TransposeGeometry m_g;
};

OpDef convTranspose2dDef() {
  OpDef def;
  def.name = "ConvTranspose2d";
  def.group = "Convolution";
  def.help = "transposed 2-D convolution: a learned upsampling of a CxHxW input";
  def.schema = convSchema({
      ParamSpec::intPair("kernel_size", 2, "filter height and width")
          .atLeast(1)
          .atMost(1024)
          .inUnit("px"),
      ParamSpec::intPair("stride", 2, "how many output pixels one input pixel moves by")
          .atLeast(1)
          .atMost(1024)
          .inUnit("px"),
      ParamSpec::intPair("padding", 0, "rows and columns taken off each side of the output")
          .atLeast(0)
          .atMost(1024)
          .inUnit("px"),
      ParamSpec::intPair("output_padding", 0,
                         "rows and columns added at the bottom and right (below the stride or "
                         "the dilation)")
          .atLeast(0)
          .atMost(1024)
          .inUnit("px"),
  });
  def.initSchemes = weightInitSchemes();
  def.inferShape = convTranspose2dShape;
  def.autoValues = inputSizeFor("in_channels");
  def.paramCount = convTranspose2dParams;
  def.macs = convTranspose2dMacs;
  def.build = [](const LayerSpec& spec) {
    return std::make_shared<ConvTranspose2dLayerImpl>(spec);
  };
  def.toOnnx = [](OnnxEmitter& onnx, const EmitNode& n) {
    const auto g = transposeGeometry(n.inputShapes[0], n.params);
    if (g.dilation != std::array<std::int64_t, 2>{1, 1}) {
      // Valid ONNX, but OpenCV DNN (which verifies every export) computes its Deconvolution
      // without dilation, so such a file could not be proven right.
      throw NotExportable{"ConvTranspose2d with dilation " + pyPair(g.dilation) +
                              " cannot be verified (OpenCV DNN's Deconvolution has no "
                              "dilation); use dilation 1",
                          0};
    }
    // The weight keeps LibTorch's layout, which is ONNX's (C_in x C_out/group x kH x kW).
    std::vector<std::string> in{n.inputs[0], onnx.tensor(n.id + ".weight")};
    if (g.bias) in.push_back(onnx.tensor(n.id + ".bias"));
    return onnx.node(
        "ConvTranspose", in,
        {OnnxAttr::integers("kernel_shape", {g.kernel[0], g.kernel[1]}),
         OnnxAttr::integers("strides", {g.stride[0], g.stride[1]}),
         OnnxAttr::integers("pads", {g.padding[0], g.padding[1], g.padding[0], g.padding[1]}),
         OnnxAttr::integers("output_padding", {g.outputPadding[0], g.outputPadding[1]}),
         OnnxAttr::integers("dilations", {g.dilation[0], g.dilation[1]}),
         OnnxAttr::integer("group", g.groups)});
  };
  def.toPyTorch = [](const EmitNode& n) {
    const auto g = transposeGeometry(n.inputShapes[0], n.params);
    return pyModule("nn.ConvTranspose2d(" + std::to_string(g.inChannels) + ", " +
                        std::to_string(g.outChannels) + ", kernel_size=" + pyPair(g.kernel) +
                        ", stride=" + pyPair(g.stride) + ", padding=" + pyPair(g.padding) +
                        ", output_padding=" + pyPair(g.outputPadding) +
                        ", groups=" + std::to_string(g.groups) + ", bias=" + pyBool(g.bias) +
                        ", dilation=" + pyPair(g.dilation) + ")",
                    n);
  };
  return def;
}

bool isBilinear(const Params& p) {
  return p.text("mode") == "bilinear";
}

OpDef upsampleDef() {
  OpDef def;
  def.name = "Upsample";
  def.group = "Resize";
  def.help = "enlarge a CxHxW input by whole factors: nearest copies pixels, bilinear blends them";
  def.schema = {
      // At most 32: from 41 up, PyTorch's nearest (which takes 1/scale in float) no longer
      // picks floor(x / scale) everywhere, so its result would differ from the ONNX export's.
      ParamSpec::intPair("scale_factor", 2, "how many times larger the output is (height, width)")
          .atLeast(1)
          .atMost(32),
      ParamSpec::choice("mode", "nearest", {"nearest", "bilinear"},
                        "nearest copies each pixel; bilinear interpolates (align_corners=False)"),
  };
  def.inferShape = [](const std::vector<Shape>& in, const Params& p) {
    requireImage(in[0], "Upsample");
    const auto s = p.pair("scale_factor");
    requireSide("Upsample", 0, in[0][1] * s[0], in[0]);
    requireSide("Upsample", 1, in[0][2] * s[1], in[0]);
    return Shape{in[0][0], in[0][1] * s[0], in[0][2] * s[1]};
  };
  def.build = [](const LayerSpec& spec) {
    const auto s = spec.params.pair("scale_factor");
    const std::vector<double> scales{static_cast<double>(s[0]), static_cast<double>(s[1])};
    const bool bilinear = isBilinear(spec.params);
    return unaryLayer([scales, bilinear](const torch::Tensor& x, bool) {
      // The scale factors themselves, as nn.Upsample(scale_factor=...) passes them: the
      // source pixels are computed from them, so the values equal PyTorch's.
      const at::OptionalIntArrayRef noSize(c10::nullopt);
      const c10::optional<at::ArrayRef<double>> factors = at::ArrayRef<double>(scales);
      if (bilinear) return torch::upsample_bilinear2d(x, noSize, /*align_corners=*/false, factors);
      return torch::upsample_nearest2d(x, noSize, factors);
    });
  };
  def.toOnnx = [](OnnxEmitter& onnx, const EmitNode& n) {
    const auto s = n.params.pair("scale_factor");
    // Resize 11 and 12 require a roi (read only by tf_crop_and_resize); from 13 it may be left
    // out. Not an empty tensor: OpenCV DNN 4.5 cannot read one.
    const std::string roi =
        onnx.opset() < 13 ? onnx.constant({0.0f, 0.0f, 0.0f, 0.0f, 1.0f, 1.0f, 1.0f, 1.0f}, {8})
                          : std::string();
    const std::string scales =
        onnx.constant({1.0f, 1.0f, static_cast<float>(s[0]), static_cast<float>(s[1])}, {4});
    // PyTorch's nearest is floor(x / scale) ("asymmetric", "floor"); its bilinear with
    // align_corners=False is "pytorch_half_pixel", which OpenCV DNN 4.5 and 4.6 both read as
    // their half-pixel linear resize (4.5 reads "half_pixel" as a plain bilinear one).
    const std::vector<OnnxAttr> attrs =
        isBilinear(n.params)
            ? std::vector<OnnxAttr>{OnnxAttr::text("mode", "linear"),
                                    OnnxAttr::text("coordinate_transformation_mode",
                                                   "pytorch_half_pixel")}
            : std::vector<OnnxAttr>{OnnxAttr::text("mode", "nearest"),
                                    OnnxAttr::text("coordinate_transformation_mode", "asymmetric"),
                                    OnnxAttr::text("nearest_mode", "floor")};
    return onnx.node("Resize", {n.inputs[0], roi, scales}, attrs);
  };
  def.toPyTorch = [](const EmitNode& n) {
    const std::string factor = pyPair(n.params.pair("scale_factor"));
    return pyModule(
        isBilinear(n.params)
            ? "nn.Upsample(scale_factor=" + factor + ", mode='bilinear', align_corners=False)"
            : "nn.Upsample(scale_factor=" + factor + ", mode='nearest')",
        n);
  };
  return def;
}

}  // namespace

void registerUpsampleOps(OpRegistry& registry) {
  registry.add(convTranspose2dDef());
  registry.add(upsampleDef());
}

}  // namespace netsmith::ops
