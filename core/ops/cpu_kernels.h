#pragma once

// Float32 CPU training kernels for the layers that dominate a small CNN's step once the
// convolutions are done: batch norm with its ReLU in two passes each way (LibTorch: five),
// dropout whose mask is a hash recomputed in backward (LibTorch: a Bernoulli draw per value under
// the generator's lock, and a stored mask), and 2x2 max pooling in NCHW. Each is a
// torch::autograd::Function with its own backward; the layers call them when the *Takes() check
// passes and use LibTorch's ops otherwise (CUDA, other dtypes, strided views, evaluation).
// Results match LibTorch's ops (tests/core/cpu_kernels_test.cpp) and do not depend on the number
// of threads.
#include <torch/torch.h>

namespace netsmith::ops::kernels {

/// False when the environment sets NETSMITH_CPU_KERNELS=0 (read once): the layers then use
/// LibTorch's ops only, for side-by-side measurements of the same build.
bool enabled();

/// Whether batchNormTrain() takes `x`: float32, strided, on the CPU, 4
/// dimensions, contiguous as NCHW or as channels-last, with at least one value.
bool imageTakes(const torch::Tensor& x);

/// Training-mode batch norm over N, H and W (the batch's statistics; `runningMean` and
/// `runningVar`, float32 contiguous, updated in place with `momentum` as torch::batch_norm does),
/// then max(0, y) when `relu`. `weight` and `bias` may be undefined (no affine transform).
/// Needs imageTakes(x) and at least two values per channel. Differentiable in x, weight, bias.
torch::Tensor batchNormTrain(const torch::Tensor& x, const torch::Tensor& weight,
                             const torch::Tensor& bias, torch::Tensor runningMean,
                             torch::Tensor runningVar, double momentum, double eps, bool relu);

/// Whether dropout() takes `x`: float32, strided, on the CPU, contiguous.
bool dropoutTakes(const torch::Tensor& x);

/// Training-mode dropout, 0 < p < 1: each value is kept with probability 1 - p and scaled by
/// 1 / (1 - p). The mask comes from a counter-based hash of a seed drawn from LibTorch's default
/// CPU generator (so torch::manual_seed reproduces it), and backward recomputes it.
torch::Tensor dropout(const torch::Tensor& x, double p);

/// Whether maxPool2x2() takes `x`: imageTakes(x), contiguous as NCHW, at least 2x2.
bool maxPool2x2Takes(const torch::Tensor& x);

/// torch::max_pool2d(x, 2) (stride 2, no padding, rounding down), the same picks among equal
/// values and NaNs. Backward finds the picks again from x, which it keeps instead of indices.
/// LibTorch's NCHW max pooling walks each window with a scalar loop; this one vectorises.
torch::Tensor maxPool2x2(const torch::Tensor& x);

}  // namespace netsmith::ops::kernels
