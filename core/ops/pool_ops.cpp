// Pooling family: MaxPool2d, AvgPool2d, GlobalAvgPool.
#include "ops/cpu_kernels.h"
#include "ops/node_layer.h"
#include "ops/op_registry.h"
#include "ops/shape_rules.h"

namespace netsmith::ops {
namespace {

using schema::Params;
using schema::ParamSpec;

struct PoolGeometry {
  std::array<std::int64_t, 2> kernel, stride, padding, dilation;
  bool ceilMode;
};

PoolGeometry poolGeometry(const Params& p, bool hasDilation) {
  PoolGeometry g{};
  g.kernel = p.pair("kernel_size");
  g.stride = p.isAuto("stride") ? g.kernel : p.pair("stride");
  g.padding = p.pair("padding");
  g.dilation = hasDilation ? p.pair("dilation") : std::array<std::int64_t, 2>{1, 1};
  g.ceilMode = p.flag("ceil_mode");
  return g;
}

Shape poolShape(const std::string& op, const Shape& in, const PoolGeometry& g) {
  requireImage(in, op);
  Shape out{in[0], 0, 0};
  for (int a = 0; a < 2; ++a) {
    if (g.padding[a] > g.kernel[a] / 2) {
      throw ShapeError{"padding " + std::to_string(g.padding[a]) +
                           " is more than half the kernel size " + std::to_string(g.kernel[a]),
                       "use padding <= " + std::to_string(g.kernel[a] / 2)};
    }
    out[1 + a] = poolOutputSize(in[1 + a], g.kernel[a], g.stride[a], g.padding[a], g.dilation[a],
                                g.ceilMode);
    if (out[1 + a] < 1) {
      throw ShapeError{"window " + std::to_string(g.kernel[0]) + "x" + std::to_string(g.kernel[1]) +
                           " is larger than the input " + formatShape(in),
                       "use a smaller kernel_size, or remove this pooling layer"};
    }
  }
  return out;
}

std::vector<OnnxAttr> poolAttrs(const PoolGeometry& g) {
  return {OnnxAttr::integers("kernel_shape", {g.kernel[0], g.kernel[1]}),
          OnnxAttr::integers("strides", {g.stride[0], g.stride[1]}),
          OnnxAttr::integers("pads", {g.padding[0], g.padding[1], g.padding[0], g.padding[1]}),
          OnnxAttr::integer("ceil_mode", g.ceilMode ? 1 : 0)};
}

/// An "auto" stride is the kernel size.
Json poolAutoValues(const std::vector<Shape>&, const Params& p) {
  const auto k = p.pair("kernel_size");
  return Json{{"stride", k[0] == k[1] ? Json(k[0]) : Json::array({k[0], k[1]})}};
}

schema::ParamSchema poolSchema(bool max) {
  schema::ParamSchema s = {
      ParamSpec::intPair("kernel_size", 2, "window height and width")
          .atLeast(1)
          .atMost(1024)
          .inUnit("px"),
      ParamSpec::intPair("stride", "auto", "step between windows; \"auto\" = kernel_size")
          .atLeast(1)
          .atMost(1024)
          .orKeywords({"auto"})
          .inUnit("px"),
      ParamSpec::intPair("padding", 0, "implicit padding on each side (at most half the kernel)")
          .atLeast(0)
          .atMost(512)
          .inUnit("px"),
  };
  if (max) {
    s.push_back(
        ParamSpec::intPair("dilation", 1, "spacing between window taps").atLeast(1).atMost(64));
  }
  s.push_back(ParamSpec::boolean("ceil_mode", false, "round the output size up instead of down"));
  if (!max) {
    s.push_back(ParamSpec::boolean("count_include_pad", true, "count padded zeros in the average"));
  }
  return s;
}

}  // namespace

void registerPoolOps(OpRegistry& registry) {
  OpDef maxPool;
  maxPool.name = "MaxPool2d";
  maxPool.group = "Pooling";
  maxPool.help = "maximum over sliding windows";
  maxPool.schema = poolSchema(true);
  maxPool.inferShape = [](const std::vector<Shape>& in, const Params& p) {
    return poolShape("MaxPool2d", in[0], poolGeometry(p, true));
  };
  maxPool.autoValues = poolAutoValues;
  maxPool.build = [](const LayerSpec& spec) {
    const auto g = poolGeometry(spec.params, true);
    using Pair = std::array<std::int64_t, 2>;
    const bool halves = g.kernel == Pair{2, 2} && g.stride == Pair{2, 2} &&
                        g.padding == Pair{0, 0} && g.dilation == Pair{1, 1};
    return unaryLayer([g, halves](const torch::Tensor& x, bool) {
      // Rounding up adds a window only where a side is odd.
      if (halves && kernels::maxPool2x2Takes(x) &&
          (!g.ceilMode || (x.size(2) % 2 == 0 && x.size(3) % 2 == 0)))
        return kernels::maxPool2x2(x);
      return torch::max_pool2d(x, g.kernel, g.stride, g.padding, g.dilation, g.ceilMode);
    });
  };
  maxPool.toOnnx = [](OnnxEmitter& onnx, const EmitNode& n) {
    const auto g = poolGeometry(n.params, true);
    if (g.dilation != std::array<std::int64_t, 2>{1, 1}) {
      // Valid ONNX, but OpenCV DNN (which verifies every export) ignores MaxPool dilations,
      // so such a file could not be proven right.
      throw NotExportable{"MaxPool2d with dilation " + pyPair(g.dilation) +
                              " cannot be verified (OpenCV DNN ignores ONNX MaxPool "
                              "dilations); use dilation 1",
                          0};
    }
    return onnx.node("MaxPool", {n.inputs[0]}, poolAttrs(g));
  };
  maxPool.toPyTorch = [](const EmitNode& n) {
    const auto g = poolGeometry(n.params, true);
    return pyModule("nn.MaxPool2d(kernel_size=" + pyPair(g.kernel) +
                        ", stride=" + pyPair(g.stride) + ", padding=" + pyPair(g.padding) +
                        ", dilation=" + pyPair(g.dilation) + ", ceil_mode=" + pyBool(g.ceilMode) +
                        ")",
                    n);
  };
  registry.add(std::move(maxPool));

  OpDef avgPool;
  avgPool.name = "AvgPool2d";
  avgPool.group = "Pooling";
  avgPool.help = "average over sliding windows";
  avgPool.schema = poolSchema(false);
  avgPool.inferShape = [](const std::vector<Shape>& in, const Params& p) {
    return poolShape("AvgPool2d", in[0], poolGeometry(p, false));
  };
  avgPool.autoValues = poolAutoValues;
  avgPool.build = [](const LayerSpec& spec) {
    const auto g = poolGeometry(spec.params, false);
    const bool includePad = spec.params.flag("count_include_pad");
    return unaryLayer([g, includePad](const torch::Tensor& x, bool) {
      return torch::avg_pool2d(x, g.kernel, g.stride, g.padding, g.ceilMode, includePad);
    });
  };
  avgPool.toOnnx = [](OnnxEmitter& onnx, const EmitNode& n) {
    const auto g = poolGeometry(n.params, false);
    auto attrs = poolAttrs(g);
    attrs.push_back(
        OnnxAttr::integer("count_include_pad", n.params.flag("count_include_pad") ? 1 : 0));
    return onnx.node("AveragePool", {n.inputs[0]}, attrs);
  };
  avgPool.toPyTorch = [](const EmitNode& n) {
    const auto g = poolGeometry(n.params, false);
    return pyModule("nn.AvgPool2d(kernel_size=" + pyPair(g.kernel) +
                        ", stride=" + pyPair(g.stride) + ", padding=" + pyPair(g.padding) +
                        ", ceil_mode=" + pyBool(g.ceilMode) +
                        ", count_include_pad=" + pyBool(n.params.flag("count_include_pad")) + ")",
                    n);
  };
  registry.add(std::move(avgPool));

  OpDef global;
  global.name = "GlobalAvgPool";
  global.group = "Pooling";
  global.help = "average over the whole image: CxHxW -> Cx1x1";
  global.inferShape = [](const std::vector<Shape>& in, const Params&) {
    requireImage(in[0], "GlobalAvgPool");
    return Shape{in[0][0], 1, 1};
  };
  global.build = [](const LayerSpec&) {
    return unaryLayer([](const torch::Tensor& x, bool) {
      return torch::adaptive_avg_pool2d(x, {1, 1});
    });
  };
  global.toOnnx = [](OnnxEmitter& onnx, const EmitNode& n) {
    return onnx.node("GlobalAveragePool", {n.inputs[0]});
  };
  global.toPyTorch = [](const EmitNode& n) { return pyModule("nn.AdaptiveAvgPool2d(1)", n); };
  registry.add(std::move(global));
}

}  // namespace netsmith::ops
