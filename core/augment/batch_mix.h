#pragma once

// MixUp and CutMix on whole batches (LibTorch). Declared for the augment list in
// batch_transforms.cpp; applied by the data loader.
#include <torch/torch.h>

#include <vector>

#include "augment/pipeline.h"
#include "augment/sample_rng.h"
#include "target/box.h"

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

/// Mosaic on a batch of `images` (N x C x H x W, as the model takes them) and each image's
/// `boxes` (its pixels): each image, with `probability`, becomes four images at half size
/// (H / 2 x W / 2, bilinear), itself top left and three images of the batch drawn from `rng`
/// (any, itself included) in the other quadrants, each's boxes scaled and moved with it. The
/// partners are read as they were before any Mosaic of this batch. An odd row or column left
/// over is 0 (the normalised mean). Throws netsmith::Error when there are not N box lists.
void applyMosaic(torch::Tensor& images, std::vector<std::vector<target::Box>>& boxes,
                 double probability, SampleRng& rng);

}  // namespace netsmith::augment
