#include "ops/shape_rules.h"

namespace netsmith::ops {

void requireImage(const Shape& shape, const std::string& op) {
  if (shape.size() == 3) return;
  if (shape.size() == 1) {
    throw ShapeError{op + " needs a CxHxW image tensor but receives a flat vector of " +
                         std::to_string(shape[0]) + " features",
                     "move it before the Flatten/Linear layers"};
  }
  throw ShapeError{op + " needs a CxHxW image tensor but receives " + formatShape(shape), {}};
}

ConvBasics convBasics(const Shape& in, const schema::Params& p) {
  ConvBasics g{};
  g.inChannels = in.at(0);
  g.outChannels = p.integer("out_channels");
  g.groups = p.integer("groups");
  g.kernel = p.pair("kernel_size");
  g.stride = p.pair("stride");
  g.dilation = p.pair("dilation");
  g.bias = p.flag("bias");
  return g;
}

void requireConvChannels(const std::string& op, const schema::Params& p, const ConvBasics& g) {
  if (!p.isAuto("in_channels") && p.integer("in_channels") != g.inChannels) {
    throw ShapeError{op + " expects " + std::to_string(p.integer("in_channels")) +
                         " input channels but receives " + std::to_string(g.inChannels),
                     "set in_channels to " + std::to_string(g.inChannels) + " or \"auto\""};
  }
  if (g.inChannels % g.groups != 0 || g.outChannels % g.groups != 0) {
    throw ShapeError{"groups = " + std::to_string(g.groups) + " must divide both the input (" +
                         std::to_string(g.inChannels) + ") and output (" +
                         std::to_string(g.outChannels) + ") channels",
                     "use a common divisor, e.g. groups = 1"};
  }
}

void requireFeatures(const Shape& shape, const std::string& op) {
  if (shape.size() == 1) return;
  throw ShapeError{op + " needs a flat feature vector but receives " + formatShape(shape),
                   "insert a Flatten (or GlobalAvgPool then Flatten) before it"};
}

namespace {
std::int64_t floorDiv(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
}  // namespace

std::int64_t convOutputSize(std::int64_t in, std::int64_t kernel, std::int64_t stride,
                            std::int64_t padding, std::int64_t dilation) {
  return floorDiv(in + 2 * padding - dilation * (kernel - 1) - 1, stride) + 1;
}

std::int64_t transposedConvOutputSize(std::int64_t in, std::int64_t kernel, std::int64_t stride,
                                      std::int64_t padding, std::int64_t outputPadding,
                                      std::int64_t dilation) {
  return (in - 1) * stride - 2 * padding + dilation * (kernel - 1) + outputPadding + 1;
}

std::int64_t poolOutputSize(std::int64_t in, std::int64_t kernel, std::int64_t stride,
                            std::int64_t padding, std::int64_t dilation, bool ceilMode) {
  // at::pooling_output_shape_pad_lr
  std::int64_t out =
      floorDiv(in + 2 * padding - dilation * (kernel - 1) - 1 + (ceilMode ? stride - 1 : 0),
               stride) +
      1;
  if (ceilMode && (out - 1) * stride >= in + padding) --out;
  return out;
}

std::array<std::int64_t, 2> samePadding(std::int64_t kernel, std::int64_t dilation) {
  const std::int64_t total = dilation * (kernel - 1);
  const std::int64_t before = total / 2;
  return {before, total - before};
}

}  // namespace netsmith::ops
