#pragma once

// The detection head's arithmetic: one feature map, anchor-free, FCOS's design (Tian et al.,
// "FCOS: Fully Convolutional One-Stage Object Detection", with centre sampling). The task
// (task/detection.h), the evaluation and the exports' checks all go through these functions, so
// the conventions below are the one definition.
//
// Output. Per batch a float tensor N x (K + 5) x H x W (any float dtype; the loss and the decoder
// compute in float32):
//   channels 0 .. K-1   class logits, one sigmoid per class (no background class)
//   channels K .. K+3   box distances l, t, r, b (left, top, right, bottom) as raw values: a
//                       distance is exp(min(raw, 10)) x stride pixels
//   channel  K+4        the centre-ness logit
// `stride` = input height / H = input width / W, a whole number (detectionOutputProblem checks
// it). Location (i, j) (row i, column j) stands for the input point
// (px, py) = ((j + 0.5) x stride, (i + 0.5) x stride); its box is
// [px - l, py - t, px + r, py + b] in input pixels.
//
// Target. Per batch a float tensor N x M x 6, a row [cls, x0, y0, x1, y1, flags] per box in
// input pixels (M may be 0). cls < 0 (-1) marks a padding row, which is ignored; flags bit 1
// (value 1) = crowd, bit 2 (value 2) = difficult (targetFromBoxes / boxesFromTarget).
//
// Assignment (assignTargets), per image:
//   - A box with no extent (x1 <= x0 or y1 <= y0) is left out.
//   - Location (i, j) qualifies for a non-crowd box when its point lies strictly inside the box
//     (x0 < px < x1 and y0 < py < y1) and within centreRadius x stride of the box's centre on
//     both axes (|px - cx| < r and |py - cy| < r, r = centreRadius x stride): the centre region
//     clipped to the box, FCOS's centre sampling.
//   - A box for which no location qualifies (one smaller than a stride) has as its one candidate
//     the location nearest its centre: the cell holding the centre (floor(cx / stride),
//     floor(cy / stride)), clamped to the map. This keeps small objects in the class loss, but
//     poorly placed: the cell's point lies on or outside the box, so its distances on that side
//     are clamped (below) and its box target is the box stretched to reach the point (for a
//     4-pixel box at stride 8 an IoU of about 0.4 with the true box) with a centre-ness near 0.
//     Choose a stride below your smallest objects (data-stats lists the boxes' sizes).
//   - A location that is a candidate of several boxes (qualifying or by that fallback) is a
//     positive of the one of the smallest area (w x h); on equal areas the first in the target's
//     order. So a fallback takes a location from a larger box but never from a smaller one.
//   - Crowd boxes are never assigned. A location that is not positive but whose point lies
//     strictly inside a crowd box is ignored by the class loss (`valid` false).
//   - Every other location is a negative (all classes 0).
//   A positive's targets: its class one-hot; the distances l = px - x0, t = py - y0,
//   r = x1 - px, b = y1 - py, each clamped to at least 0.01 x stride (a fallback's point may lie
//   on or outside its box); the box target is the box those clamped distances give around the
//   point (the box itself unless clamped); centre-ness =
//   sqrt(min(l, r) / max(l, r) x min(t, b) / max(t, b)) of the clamped distances.
//
// Loss (detectionLoss), over the batch:
//   cls = sigmoid focal loss (torchvision's sigmoid_focal_loss: BCE x (1 - p_t)^gamma x alpha_t,
//         alpha_t = alpha for a 1, 1 - alpha for a 0) summed over the valid locations and all
//         classes, / max(1, positives)
//   box = (1 - GIoU) of the predicted and the target box at each positive, weighted by its
//         centre-ness target, / max(1e-6, the sum of those centre-ness targets)
//   ctr = binary cross-entropy with logits of the centre-ness logit against its target, summed
//         over the positives, / max(1, positives)
//   total = cls + box + ctr. A batch without boxes gives finite values and gradients (box and
//   ctr 0).
//
// Decoding (decodeDetections), per image: score = sqrt(sigmoid(class logit) x sigmoid(centre-ness
// logit)) for every location and class; the scores >= scoreThreshold; of those the preNms best
// (equal scores: the lower class, then row, then column first); their boxes clipped to
// [0, width] x [0, height], a box of no width or height after clipping dropped; class-aware
// non-maximum suppression at nmsIou (nonMaxSuppression); the maxDetections best, best first.
#include <torch/torch.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "target/box.h"
#include "task/coco_map.h"

namespace netsmith::task {

struct DetectionHeadParams {
  std::int64_t classes = 1;
  std::int64_t stride = 8;
  double centreRadius = 1.5;  ///< centre sampling radius, in strides
  double focalAlpha = 0.25, focalGamma = 2.0;
  double scoreThreshold = 0.05;      ///< of sqrt(class prob x centre-ness prob)
  double nmsIou = 0.6;               ///< class-aware
  std::int64_t preNms = 1000;        ///< best scores kept per image before NMS
  std::int64_t maxDetections = 100;  ///< per image after NMS
};

/// What the assignment gives a batch, on the target's device.
struct DetectionTargets {
  torch::Tensor classTarget;  ///< N x K x H x W float: a positive's class one-hot, else 0
  torch::Tensor valid;        ///< N x H x W bool: counted by the class loss (not ignored)
  torch::Tensor positive;     ///< N x H x W bool
  torch::Tensor boxTarget;    ///< N x 4 x H x W float: x0, y0, x1, y1 (0 where not positive)
  torch::Tensor centreness;   ///< N x H x W float (0 where not positive)
};

/// The loss and its parts, float32 scalars on the output's device.
struct DetectionLossParts {
  torch::Tensor total, cls, box, ctr;
};

/// The assignment above for `target` (N x M x 6) on an H x W (`height` x `width`) map. Throws
/// netsmith::Error for a target of another shape or a box class outside 0 .. classes - 1.
DetectionTargets assignTargets(const torch::Tensor& target, std::int64_t height, std::int64_t width,
                               const DetectionHeadParams& p);

/// The loss above. Throws netsmith::Error when `output` is not N x (classes + 5) x H x W or the
/// target does not fit it.
DetectionLossParts detectionLoss(const torch::Tensor& output, const torch::Tensor& target,
                                 const DetectionHeadParams& p);

/// torchvision's sigmoid_focal_loss per element (no reduction), in float32.
torch::Tensor sigmoidFocalLoss(const torch::Tensor& logits, const torch::Tensor& targets,
                               double alpha, double gamma);

/// 1 - GIoU of boxes `predicted` and `target` (... x 4: x0, y0, x1, y1) pairwise, over the last
/// axis (1e-7 added to the union and the enclosing area).
torch::Tensor generalizedIouLoss(const torch::Tensor& predicted, const torch::Tensor& target);

/// Class-aware greedy non-maximum suppression: the boxes best score first (equal scores: the
/// lower index first; NaN as the lowest), a box dropped when its IoU (boxIou) with a kept box of
/// the same class is > `iou`. Returns the kept indices in that order, the first `most` of them
/// (it stops there: NMS over 1,000 candidates of an untrained model is quadratic).
std::vector<std::size_t> nonMaxSuppression(const std::vector<ScoredBox>& boxes, double iou,
                                           std::size_t most = std::size_t(-1));

/// The head decoded at every location, before any filter: `boxes` N x L x 4 (x0, y0, x1, y1 in
/// input pixels, clipped to [0, imageWidth] x [0, imageHeight]; L = H x W, row-major) and
/// `scores` N x K x L, float32 on the CPU. What decodeDetections filters and suppresses, and
/// what the ONNX export's decoder outputs ("boxes", "scores"), checked against this.
struct DecodedHead {
  torch::Tensor boxes, scores;
};
DecodedHead decodeHead(const torch::Tensor& output, std::int64_t stride, double imageWidth,
                       double imageHeight);

/// Each image's detections, best first (decoding above); box.cls the class. `output` as the
/// model gives it (moved to the CPU and float32 here); the image's size in input pixels.
std::vector<std::vector<ScoredBox>> decodeDetections(const torch::Tensor& output,
                                                     const DetectionHeadParams& p, int imageWidth,
                                                     int imageHeight);

/// Nothing when a sample's output shape (C, H, W) is a head for `classes` on the input: C =
/// classes + 5, and H and W divide the input's height and width into the same whole stride
/// (then *stride, when given, is set). Otherwise what is wrong: about the shape or the channels
/// a phrase to follow "the model" ("gives 12 channels; a detector of 3 classes needs 8 (3 class
/// scores, 4 box distances, 1 centre-ness)", "gives an output of 10; ..."), about the map a
/// clause of its own ("a 10x10 map does not divide the 64x64 input into equal strides").
std::optional<std::string> detectionOutputProblem(const std::vector<std::int64_t>& outputShape,
                                                  std::int64_t classes, std::int64_t inputHeight,
                                                  std::int64_t inputWidth, std::int64_t* stride);

/// The N x M x 6 target of a batch's boxes (CPU, float): M the most boxes of any image, the rows
/// after an image's boxes padding (cls -1, the rest 0).
torch::Tensor targetFromBoxes(const std::vector<std::vector<target::Box>>& boxes);

/// The inverse: each image's boxes, padding rows (cls < 0) dropped, the flags decoded. Throws
/// netsmith::Error for a tensor that is not N x M x 6.
std::vector<std::vector<target::Box>> boxesFromTarget(const torch::Tensor& target);

}  // namespace netsmith::task
