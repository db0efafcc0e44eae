// The detection head's arithmetic (task/detection_head.h) on hand-worked cases, the numbers
// worked out in the comments: the assignment (smallest box wins, crowd boxes ignored, tiny
// boxes kept by the fallback), the targets, the focal, GIoU and centre-ness parts of the loss, a
// batch without boxes, the decoder and its non-maximum suppression, the output-shape check, the
// target tensor's round trip, and a tiny model that learns one box.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <string>
#include <vector>

#include "common/error.h"
#include "task/detection_head.h"

namespace netsmith::task {
namespace {

// (Core tests are built in batches of several files: every helper here starts with "dh".)

target::Box dhBox(std::int64_t cls, float x0, float y0, float x1, float y1, bool crowd = false,
                  bool difficult = false) {
  target::Box b;
  b.cls = cls;
  b.x0 = x0, b.y0 = y0, b.x1 = x1, b.y1 = y1;
  b.crowd = crowd;
  b.difficult = difficult;
  return b;
}

ScoredBox dhScored(std::int64_t cls, float x0, float y0, float x1, float y1, float score) {
  return ScoredBox{dhBox(cls, x0, y0, x1, y1), score};
}

/// An image's assignment as rows of text, top row first, separated by spaces: '.' a negative,
/// 'x' ignored, a digit the class of a positive. Checks on the way that a positive's class
/// target is one-hot and a non-positive's all 0.
std::string dhAssignmentMap(const DetectionTargets& t, std::int64_t image) {
  std::string out;
  const auto h = t.positive.size(1), w = t.positive.size(2);
  for (std::int64_t r = 0; r < h; ++r) {
    if (r) out += ' ';
    for (std::int64_t c = 0; c < w; ++c) {
      const auto classes = t.classTarget[image].select(1, r).select(1, c);  // K
      if (t.positive[image][r][c].item<bool>()) {
        EXPECT_FLOAT_EQ(classes.sum().item<float>(), 1.f);
        out += char('0' + classes.argmax().item<std::int64_t>());
      } else {
        EXPECT_FLOAT_EQ(classes.sum().item<float>(), 0.f);
        out += t.valid[image][r][c].item<bool>() ? '.' : 'x';
      }
    }
  }
  return out;
}

/// The boxes of the assignment cases below (stride 8 on a 32x32 input, a 4x4 map: the points
/// at 4, 12, 20, 28 on each axis; the centre region 1.5 x 8 = 12 px either side of a box's
/// centre, strictly).
///   Image 0:
///     A [0,0,32,24] class 0, area 768, centre (16,12): points strictly inside at x 4..28,
///       y 4..20; within 12 of the centre x 12, 20 (|4 - 16| = 12 is not < 12) and y 4, 12, 20:
///       rows 0-2, columns 1-2.
///     B [8,8,24,24] class 1, area 256, centre (16,16): x 12, 20 and y 12, 20: rows 1-2,
///       columns 1-2, which B (the smaller) takes from A; A keeps (0,1) and (0,2).
///     C [0,24,16,32] crowd: the points (4,28) and (12,28) inside: (3,0) and (3,1) ignored.
///     D [22,22,26,26] class 2, 4x4 px: no point inside (none of 4, 12, 20, 28 lies in
///       (22,26)), so the cell of its centre (floor(24 / 8), floor(24 / 8)) = (3,3) is its
///       positive.
///   Image 1:
///     B [8,8,24,24] class 1: rows 1-2, columns 1-2.
///     F [13,13,16,16] class 0, area 9, centre (14.5,14.5): no point inside; its fallback (1,1)
///       it takes from B (area 256).
///     E [13,13,17,17] class 2, area 16, centre (15,15): no point inside; its fallback is (1,1)
///       too, where F is smaller: E gets no location.
torch::Tensor dhAssignmentTarget() {
  return targetFromBoxes(
      {{dhBox(0, 0, 0, 32, 24), dhBox(1, 8, 8, 24, 24), dhBox(0, 0, 24, 16, 32, true),
        dhBox(2, 22, 22, 26, 26)},
       {dhBox(1, 8, 8, 24, 24), dhBox(0, 13, 13, 16, 16), dhBox(2, 13, 13, 17, 17)}});
}

DetectionHeadParams dhParams(std::int64_t classes) {
  DetectionHeadParams p;
  p.classes = classes;
  p.stride = 8;
  return p;
}

/// Sets location (r, col) of image n of an output to `channels` (class logits, l, t, r, b raw,
/// centre-ness logit).
void dhLocation(torch::Tensor& output, std::int64_t n, std::int64_t r, std::int64_t col,
                const std::vector<double>& channels) {
  for (std::size_t c = 0; c < channels.size(); ++c)
    output[n][std::int64_t(c)][r][col].fill_(channels[c]);
}

TEST(DetectionHead, AssignsSmallestBoxIgnoresCrowdAndKeepsTinyBoxes) {
  const auto t = assignTargets(dhAssignmentTarget(), 4, 4, dhParams(3));
  EXPECT_EQ(t.classTarget.sizes().vec(), (std::vector<std::int64_t>{2, 3, 4, 4}));
  EXPECT_EQ(t.boxTarget.sizes().vec(), (std::vector<std::int64_t>{2, 4, 4, 4}));
  EXPECT_EQ(t.valid.sizes().vec(), (std::vector<std::int64_t>{2, 4, 4}));
  EXPECT_EQ(t.centreness.sizes().vec(), (std::vector<std::int64_t>{2, 4, 4}));
  EXPECT_EQ(dhAssignmentMap(t, 0), ".00. .11. .11. xx.2");
  EXPECT_EQ(dhAssignmentMap(t, 1), ".... .01. .11. ....");
  // The order of the boxes does not matter, only their areas: B before A gives the same.
  const auto swapped = assignTargets(
      targetFromBoxes({{dhBox(1, 8, 8, 24, 24), dhBox(0, 0, 0, 32, 24)}}), 4, 4, dhParams(3));
  EXPECT_EQ(dhAssignmentMap(swapped, 0), ".00. .11. .11. ....");
  // Equal areas: the first box keeps the locations. [8,8,24,24] of class 2, then the same box
  // of class 1: class 2 at all four.
  const auto tie = assignTargets(
      targetFromBoxes({{dhBox(2, 8, 8, 24, 24), dhBox(1, 8, 8, 24, 24)}}), 4, 4, dhParams(3));
  EXPECT_EQ(dhAssignmentMap(tie, 0), ".... .22. .22. ....");
}

TEST(DetectionHead, DistanceAndCentrenessTargets) {
  const auto t = assignTargets(dhAssignmentTarget(), 4, 4, dhParams(3));
  const auto box = [&](std::int64_t r, std::int64_t c) {
    std::vector<float> v;
    for (std::int64_t k = 0; k < 4; ++k)
      v.push_back(t.boxTarget[0][k][r][c].item<float>());
    return v;
  };
  // (0,1) of A [0,0,32,24]: the point (12,4), l = 12, t = 4, r = 20, b = 20; the box A itself;
  // centre-ness sqrt(12/20 x 4/20) = sqrt(0.12) = 0.3464102.
  EXPECT_EQ(box(0, 1), (std::vector<float>{0, 0, 32, 24}));
  EXPECT_NEAR(t.centreness[0][0][1].item<float>(), 0.3464102, 1e-6);
  // (2,1) of B [8,8,24,24]: the point (12,20), l = 4, t = 12, r = 12, b = 4: centre-ness
  // sqrt(4/12 x 4/12) = 1/3.
  EXPECT_EQ(box(2, 1), (std::vector<float>{8, 8, 24, 24}));
  EXPECT_NEAR(t.centreness[0][2][1].item<float>(), 1.0 / 3, 1e-6);
  // (3,3), D's fallback [22,22,26,26]: the point (28,28), l = t = 6, r = b = -2 clamped to
  // 0.01 x 8 = 0.08: the box [22,22,28.08,28.08], centre-ness sqrt((0.08/6)^2) = 0.0133333.
  const auto d = box(3, 3);
  EXPECT_FLOAT_EQ(d[0], 22);
  EXPECT_FLOAT_EQ(d[1], 22);
  EXPECT_NEAR(d[2], 28.08, 1e-5);
  EXPECT_NEAR(d[3], 28.08, 1e-5);
  EXPECT_NEAR(t.centreness[0][3][3].item<float>(), 0.0133333, 1e-6);
  // A negative has none.
  EXPECT_EQ(box(0, 0), (std::vector<float>{0, 0, 0, 0}));
  EXPECT_EQ(t.centreness[0][0][0].item<float>(), 0.f);
}

TEST(DetectionHead, GiouLossByHand) {
  // [0,0,2,2] against [1,1,3,3]: the intersection [1,1,2,2] = 1, the union 4 + 4 - 1 = 7, the
  // enclosing box [0,0,3,3] = 9: GIoU = 1/7 - (9 - 7)/9 = 1/7 - 2/9 = -5/63, the loss
  // 1 + 5/63 = 68/63 = 1.0793651.
  // Identical boxes: GIoU 1, the loss 0.
  // [0,0,1,1] against [2,0,3,1]: no intersection, the union 2, the enclosing [0,0,3,1] = 3:
  // GIoU = 0 - 1/3, the loss 4/3.
  const auto predicted =
      torch::tensor(std::vector<float>{0, 0, 2, 2, 5, 5, 9, 9, 0, 0, 1, 1}).view({3, 4});
  const auto target =
      torch::tensor(std::vector<float>{1, 1, 3, 3, 5, 5, 9, 9, 2, 0, 3, 1}).view({3, 4});
  const auto loss = generalizedIouLoss(predicted, target);
  ASSERT_EQ(loss.sizes().vec(), (std::vector<std::int64_t>{3}));
  EXPECT_NEAR(loss[0].item<float>(), 1.0793651, 1e-5);
  EXPECT_NEAR(loss[1].item<float>(), 0.0, 1e-5);
  EXPECT_NEAR(loss[2].item<float>(), 4.0 / 3, 1e-5);
}

TEST(DetectionHead, LossPartsOnOneLocation) {
  // Two classes on a 1x1 map of stride 8 (an 8x8 input): the point (4,4), the box [0,0,8,8] of
  // class 1 around it (inside, at its centre): the one positive. Class logits 1 and -0.5, raw
  // distances 0 (8 px each), centre-ness logit 0.
  auto output = torch::zeros({1, 7, 1, 1});
  dhLocation(output, 0, 0, 0, {1.0, -0.5, 0, 0, 0, 0, 0});
  const auto target = targetFromBoxes({{dhBox(1, 0, 0, 8, 8)}});
  const auto parts = detectionLoss(output, target, dhParams(2));
  // Focal, alpha 0.25, gamma 2:
  //   class 0 (a 0): p = sigmoid(1) = 0.7310586, BCE = -log(1 - p) = 1.3132617, p_t = 1 - p,
  //     (1 - p_t)^2 = p^2 = 0.5344466, alpha_t = 0.75: 0.75 x 0.5344466 x 1.3132617 = 0.5264012
  //   class 1 (a 1): p = sigmoid(-0.5) = 0.3775407, BCE = -log p = 0.9740770, p_t = p,
  //     (1 - p)^2 = 0.3874556, alpha_t = 0.25: 0.25 x 0.3874556 x 0.9740770 = 0.0943529
  //   summed, over 1 positive: 0.6207541.
  EXPECT_NEAR(parts.cls.item<float>(), 0.6207541, 1e-5);
  // Box: the prediction [4-8, 4-8, 4+8, 4+8] = [-4,-4,12,12] (256) holds the target [0,0,8,8]
  // (64): IoU 64/256 = 0.25, the enclosing box the prediction (no GIoU penalty): the loss 0.75,
  // weighted by the centre-ness target sqrt(4/4 x 4/4) = 1 over their sum 1: 0.75.
  EXPECT_NEAR(parts.box.item<float>(), 0.75, 1e-5);
  // Centre-ness: BCE of logit 0 against 1 = log 2 = 0.6931472, over 1 positive.
  EXPECT_NEAR(parts.ctr.item<float>(), 0.6931472, 1e-5);
  EXPECT_NEAR(parts.total.item<float>(), 0.6207541 + 0.75 + 0.6931472, 1e-5);
  // The focal loss per element, the same two numbers.
  const auto focal = sigmoidFocalLoss(torch::tensor(std::vector<float>{1.f, -0.5f}),
                                      torch::tensor(std::vector<float>{0.f, 1.f}), 0.25, 2.0);
  EXPECT_NEAR(focal[0].item<float>(), 0.5264012, 1e-6);
  EXPECT_NEAR(focal[1].item<float>(), 0.0943529, 1e-6);
}

TEST(DetectionHead, BatchWithoutBoxesHasFiniteLossAndGradient) {
  torch::manual_seed(0);
  const auto p = dhParams(2);
  // No rows at all, and padding rows only (class -1).
  const std::vector<torch::Tensor> targets{torch::zeros({2, 0, 6}), torch::full({2, 3, 6}, -1.0)};
  for (const auto& target : targets) {
    const auto output = torch::randn({2, 7, 4, 4}, torch::kDouble).requires_grad_();
    const auto parts = detectionLoss(output, target, p);
    EXPECT_TRUE(std::isfinite(parts.total.item<double>()));
    EXPECT_GT(parts.cls.item<double>(), 0);  // every location a negative, over max(1, 0) = 1
    EXPECT_EQ(parts.box.item<double>(), 0);
    EXPECT_EQ(parts.ctr.item<double>(), 0);
    parts.total.backward();
    ASSERT_TRUE(output.grad().defined());
    EXPECT_TRUE(torch::isfinite(output.grad()).all().item<bool>());
    EXPECT_GT(output.grad().abs().sum().item<double>(), 0);
  }
  // A crowd box over the one location of a 1x1 map: ignored, so no class loss at all.
  const auto crowd = targetFromBoxes({{dhBox(0, 0, 0, 8, 8, true)}});
  const auto parts = detectionLoss(torch::randn({1, 7, 1, 1}), crowd, p);
  EXPECT_EQ(parts.cls.item<float>(), 0.f);
  EXPECT_EQ(parts.total.item<float>(), 0.f);
}

TEST(DetectionHead, RefusesWhatDoesNotFit) {
  const auto p = dhParams(2);
  const auto target = targetFromBoxes({{dhBox(1, 0, 0, 8, 8)}});
  EXPECT_THROW(detectionLoss(torch::zeros({1, 6, 1, 1}), target, p), Error);  // 2 + 5 = 7
  EXPECT_THROW(detectionLoss(torch::zeros({2, 7, 1, 1}), target, p), Error);  // 2 outputs, 1
  EXPECT_THROW(assignTargets(torch::zeros({1, 2, 5}), 4, 4, p), Error);
  // Class 2 of a two-class detector.
  EXPECT_THROW(assignTargets(targetFromBoxes({{dhBox(2, 0, 0, 8, 8)}}), 1, 1, p), Error);
  EXPECT_THROW(decodeDetections(torch::zeros({1, 8, 2, 2}), p, 16, 16), Error);
}

TEST(DetectionHead, DecodesWithClassAwareSuppression) {
  // Two classes, a 4x4 map of stride 8 on a 32x32 image, in double (the decoder converts).
  // Everywhere class logits -20 and centre-ness logit -20 (scores ~1e-9, below 0.05), raw
  // distances 0 (8 px), except:
  //   (1,1), the point (12,12): class 0 logit 2, centre-ness 1, l = t = b = 8, r = 16 (raw
  //     log 2): the box [4,4,28,20], score sqrt(sigmoid(2) sigmoid(1)) =
  //     sqrt(0.8807971 x 0.7310586) = 0.8024427. (Its class 1: sqrt(2e-9 x 0.73) = 4e-5.)
  //   (1,2), the point (20,12): class 0 logit 0, centre-ness 0, l = 16, t = r = b = 8: the same
  //     box [4,4,28,20], score sqrt(0.5 x 0.5) = 0.5; IoU 1 with the first: suppressed.
  //   (2,2), the point (20,20): class 1 logit 1, centre-ness 1, l = t = 16, r = 8, b = 4 (raw
  //     log 0.5): [4,4,28,24], score sigmoid(1) = 0.7310586; IoU with the class-0 box
  //     (24 x 16) / (24 x 20) = 0.8 > 0.6, but another class: kept.
  //   (0,0), the point (4,4): class 1 logit 0, centre-ness 0, l = 16, t = r = b = 8:
  //     [-12,-4,12,12] clipped to [0,0,12,12], score 0.5; IoU with [4,4,28,24]: 64 /
  //     (144 + 480 - 64) = 0.11: kept.
  // The second image: nothing over the threshold.
  auto output = torch::full({2, 7, 4, 4}, -20.0, torch::kDouble);
  output.narrow(1, 2, 4).zero_();
  const double log2 = std::log(2.0), logHalf = std::log(0.5);
  //                          class 0, class 1, l, t, r, b, centre-ness
  dhLocation(output, 0, 1, 1, {2, -20, 0, 0, log2, 0, 1});
  dhLocation(output, 0, 1, 2, {0, -20, log2, 0, 0, 0, 0});
  dhLocation(output, 0, 2, 2, {-20, 1, log2, log2, 0, logHalf, 1});
  dhLocation(output, 0, 0, 0, {-20, 0, log2, 0, 0, 0, 0});
  auto p = dhParams(2);
  const auto expectBox = [](const ScoredBox& d, std::int64_t cls, std::vector<float> box,
                            double score) {
    EXPECT_EQ(d.box.cls, cls);
    EXPECT_NEAR(d.box.x0, box[0], 1e-4);
    EXPECT_NEAR(d.box.y0, box[1], 1e-4);
    EXPECT_NEAR(d.box.x1, box[2], 1e-4);
    EXPECT_NEAR(d.box.y1, box[3], 1e-4);
    EXPECT_NEAR(d.score, score, 1e-6);
  };
  auto decoded = decodeDetections(output, p, 32, 32);
  ASSERT_EQ(decoded.size(), 2u);
  ASSERT_EQ(decoded[0].size(), 3u);
  expectBox(decoded[0][0], 0, {4, 4, 28, 20}, 0.8024427);
  expectBox(decoded[0][1], 1, {4, 4, 28, 24}, 0.7310586);
  expectBox(decoded[0][2], 1, {0, 0, 12, 12}, 0.5);
  EXPECT_TRUE(decoded[1].empty());
  // The 2 best after suppression.
  p.maxDetections = 2;
  decoded = decodeDetections(output, p, 32, 32);
  ASSERT_EQ(decoded[0].size(), 2u);
  EXPECT_EQ(decoded[0][1].box.cls, 1);
  // Only the best score before suppression.
  p.maxDetections = 100;
  p.preNms = 1;
  decoded = decodeDetections(output, p, 32, 32);
  ASSERT_EQ(decoded[0].size(), 1u);
  expectBox(decoded[0][0], 0, {4, 4, 28, 20}, 0.8024427);
  // A threshold of 0.6 leaves out the two scores of 0.5; the class-0 duplicate (0.5) was
  // suppressed anyway.
  p.preNms = 1000;
  p.scoreThreshold = 0.6;
  decoded = decodeDetections(output, p, 32, 32);
  ASSERT_EQ(decoded[0].size(), 2u);
  // An image 10 px wide clips (1,1)'s box to [4,4,10,20] and (0,0)'s to [0,0,10,12].
  p.scoreThreshold = 0.05;
  decoded = decodeDetections(output, p, 10, 32);
  ASSERT_GE(decoded[0].size(), 1u);
  expectBox(decoded[0][0], 0, {4, 4, 10, 20}, 0.8024427);
}

TEST(DetectionHead, NonMaxSuppressionByHand) {
  // IoU threshold 0.5:
  //   0 class 0 [0,0,10,10] 0.9: kept first.
  //   1 class 0 [1,0,11,10] 0.8: IoU with 0 = 90 / (100 + 100 - 90) = 0.82: suppressed.
  //   2 class 1 [0,0,10,10] 0.85: the same box as 0 but another class: kept.
  //   3 class 0 [20,20,30,30] 0.9: the same score as 0, after it (the lower index first).
  //   4 class 0 [0,0,10,5] 0.7: IoU with 0 = 50 / 100 = 0.5, not above: kept.
  //   5 class 0 [20,20,30,30] 0.9: equal to 3 in score and box, after it: suppressed.
  const std::vector<ScoredBox> boxes{
      dhScored(0, 0, 0, 10, 10, 0.9f),  dhScored(0, 1, 0, 11, 10, 0.8f),
      dhScored(1, 0, 0, 10, 10, 0.85f), dhScored(0, 20, 20, 30, 30, 0.9f),
      dhScored(0, 0, 0, 10, 5, 0.7f),   dhScored(0, 20, 20, 30, 30, 0.9f)};
  EXPECT_EQ(nonMaxSuppression(boxes, 0.5), (std::vector<std::size_t>{0, 3, 2, 4}));
  // At 0.9 box 1 (0.82) stays too, after 2 (0.85).
  EXPECT_EQ(nonMaxSuppression(boxes, 0.9), (std::vector<std::size_t>{0, 3, 2, 1, 4}));
  EXPECT_TRUE(nonMaxSuppression({}, 0.5).empty());
}

TEST(DetectionHead, OutputShapeCheck) {
  std::int64_t stride = 0;
  EXPECT_FALSE(detectionOutputProblem({8, 4, 4}, 3, 32, 32, &stride).has_value());
  EXPECT_EQ(stride, 8);
  // 64 / 8 = 32 / 4 = 8: a non-square input.
  stride = 0;
  EXPECT_FALSE(detectionOutputProblem({6, 8, 4}, 1, 64, 32, &stride).has_value());
  EXPECT_EQ(stride, 8);
  EXPECT_FALSE(detectionOutputProblem({6, 32, 32}, 1, 32, 32, nullptr).has_value());
  EXPECT_EQ(detectionOutputProblem({12, 4, 4}, 3, 32, 32, &stride).value_or(""),
            "gives 12 channels; a detector of 3 classes needs 8 (3 class scores, 4 box "
            "distances, 1 centre-ness)");
  EXPECT_EQ(detectionOutputProblem({7, 4, 4}, 1, 32, 32, &stride).value_or(""),
            "gives 7 channels; a detector of 1 class needs 6 (1 class score, 4 box distances, 1 "
            "centre-ness)");
  EXPECT_EQ(detectionOutputProblem({8, 10, 10}, 3, 64, 64, &stride).value_or(""),
            "a 10x10 map does not divide the 64x64 input into equal strides");
  // 32 / 4 = 8 down but 32 / 8 = 4 across.
  EXPECT_EQ(detectionOutputProblem({8, 4, 8}, 3, 32, 32, &stride).value_or(""),
            "a 4x8 map does not divide the 32x32 input into equal strides");
  EXPECT_EQ(stride, 8);  // left as it was
  const auto flat = detectionOutputProblem({10}, 3, 32, 32, &stride);
  ASSERT_TRUE(flat.has_value());
  EXPECT_NE(flat->find("gives an output of 10;"), std::string::npos) << *flat;
}

TEST(DetectionHead, TargetTensorRoundTrip) {
  const std::vector<std::vector<target::Box>> boxes{
      {dhBox(0, 1, 2, 3, 4), dhBox(2, 5, 6, 7, 8, true), dhBox(1, 0, 0, 9, 9, true, true)},
      {},
      {dhBox(1, 10.5f, 11.25f, 20, 30, false, true)}};
  const auto t = targetFromBoxes(boxes);
  ASSERT_EQ(t.sizes().vec(), (std::vector<std::int64_t>{3, 3, 6}));
  EXPECT_EQ(t.scalar_type(), torch::kFloat);
  // Flags: crowd 1, difficult 2, both 3.
  EXPECT_EQ(t[0][0][5].item<float>(), 0.f);
  EXPECT_EQ(t[0][1][5].item<float>(), 1.f);
  EXPECT_EQ(t[0][2][5].item<float>(), 3.f);
  EXPECT_EQ(t[2][0][5].item<float>(), 2.f);
  EXPECT_EQ(t[2][0][2].item<float>(), 11.25f);
  // Padding: class -1.
  for (std::int64_t j = 0; j < 3; ++j)
    EXPECT_EQ(t[1][j][0].item<float>(), -1.f);
  EXPECT_EQ(t[2][1][0].item<float>(), -1.f);
  EXPECT_EQ(t[2][2][0].item<float>(), -1.f);
  EXPECT_EQ(boxesFromTarget(t), boxes);
  // No boxes anywhere: N x 0 x 6, and back.
  const std::vector<std::vector<target::Box>> none(2);
  const auto empty = targetFromBoxes(none);
  EXPECT_EQ(empty.sizes().vec(), (std::vector<std::int64_t>{2, 0, 6}));
  EXPECT_EQ(boxesFromTarget(empty), none);
  EXPECT_THROW(boxesFromTarget(torch::zeros({2, 6})), Error);
}

TEST(DetectionHead, TinyModelLearnsOneBox) {
  torch::manual_seed(0);
  // One 1x32x32 image: faint noise (every window differs) and a bright square [8,8,16,16], the
  // one box (class 0). At stride 8 its point (12,12), location (1,1), is the only one inside:
  // centre-ness 1, distances 4 each. A 16x16 window every 8 px (padding 4) gives a 4x4 map of
  // 1 + 5 channels.
  auto image = 0.1 * torch::rand({1, 1, 32, 32});
  image.narrow(2, 8, 8).narrow(3, 8, 8).add_(1.0);
  const auto target = targetFromBoxes({{dhBox(0, 8, 8, 16, 16)}});
  const auto p = dhParams(1);
  torch::nn::Conv2d conv(torch::nn::Conv2dOptions(1, 6, 16).stride(8).padding(4));
  torch::optim::Adam adam(conv->parameters(), torch::optim::AdamOptions(0.01));
  double first = 0, last = 0;
  for (int step = 0; step < 100; ++step) {
    adam.zero_grad();
    const auto loss = detectionLoss(conv->forward(image), target, p).total;
    last = loss.item<double>();
    if (step == 0) first = last;
    loss.backward();
    adam.step();
  }
  EXPECT_TRUE(std::isfinite(last));
  EXPECT_LT(last, first / 2) << "first " << first << ", last " << last;
}

}  // namespace
}  // namespace netsmith::task
