#pragma once

// MixUp and CutMix on whole batches (LibTorch). Declared for the augment list in
// batch_transforms.cpp; applied by the data loader.
#include <torch/torch.h>

#include <vector>

#include "augment/pipeline.h"
#include "augment/sample_rng.h"

namespace netsmith::augment {

/// labels (N, int64) -> N x numClasses float one-hot.
torch::Tensor oneHot(const torch::Tensor& labels, std::int64_t numClasses);

/// Picks one of `mixes` (uniformly), fires it with its probability, and mixes `images`
/// (N x C x H x W) and `targets` (N x K soft labels) in place with a partner permutation drawn
/// from `rng`. Returns the weight of the original image (1 when nothing fired).
/// `targets` may be undefined (nothing to blend). `masks` (N x H x W class masks): CutMix
/// pastes the partner's mask under the same box; MixUp cannot mix masks and throws.
double applyBatchMix(torch::Tensor& images, torch::Tensor& targets,
                     const std::vector<BatchMix>& mixes, SampleRng& rng,
                     torch::Tensor* masks = nullptr);

}  // namespace netsmith::augment
