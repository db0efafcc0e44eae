#pragma once

// Shape arithmetic shared by the op families. Mirrors LibTorch's own formulas exactly (the
// property tests compare against real forward passes).
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "common/shape.h"
#include "ops/op_def.h"

namespace netsmith::ops {

/// Throws ShapeError unless `shape` is CxHxW; `op` names the op in the message.
void requireImage(const Shape& shape, const std::string& op);
/// Throws ShapeError unless `shape` is a flat feature vector.
void requireFeatures(const Shape& shape, const std::string& op);

/// What every convolution (Conv2d, ConvTranspose2d) reads from its input and parameters.
struct ConvBasics {
  std::int64_t inChannels, outChannels, groups;
  std::array<std::int64_t, 2> kernel, stride, dilation;
  bool bias;
};
/// The input's channels and `p`'s out_channels, groups, kernel_size, stride, dilation and bias.
ConvBasics convBasics(const Shape& in, const schema::Params& p);

/// Throws ShapeError unless a convolution `op` fits its input: `p`'s in_channels ("auto" or
/// the input's) and `groups` dividing both channel counts.
void requireConvChannels(const std::string& op, const schema::Params& p, const ConvBasics& g);

/// Output length of a convolution along one axis: floor((in + 2p - d(k-1) - 1) / s) + 1.
std::int64_t convOutputSize(std::int64_t in, std::int64_t kernel, std::int64_t stride,
                            std::int64_t padding, std::int64_t dilation);

/// Output length of a transposed convolution along one axis:
/// (in - 1)s - 2p + d(k - 1) + output_padding + 1 (may be < 1: the caller refuses it).
std::int64_t transposedConvOutputSize(std::int64_t in, std::int64_t kernel, std::int64_t stride,
                                      std::int64_t padding, std::int64_t outputPadding,
                                      std::int64_t dilation);

/// Output length of a pooling window along one axis, with PyTorch's ceil-mode rule.
std::int64_t poolOutputSize(std::int64_t in, std::int64_t kernel, std::int64_t stride,
                            std::int64_t padding, std::int64_t dilation, bool ceilMode);

/// Padding for "same": total = d(k-1), split with the extra pixel after (as PyTorch does).
/// Returns {before, after}.
std::array<std::int64_t, 2> samePadding(std::int64_t kernel, std::int64_t dilation);

}  // namespace netsmith::ops
