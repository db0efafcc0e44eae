#pragma once

// Detection figures by the COCO rules (pycocotools' COCOeval, bbox), written from its
// definition: per image and class, detections (best score first, at most maxDetections per
// image and class) are matched greedily to the truth at each IoU threshold 0.50, 0.55, ...,
// 0.95: a detection takes the unmatched truth box of the highest IoU at least the threshold
// (on equal IoU the later box), truth boxes that are ignored (crowd, VOC difficult, or outside
// the area range) only when no other is left, a crowd box any number of detections, its IoU
// the intersection over the detection's area. A detection matched to an ignored box, or
// unmatched and outside the area range, counts neither way. Per class, area range and
// threshold, precision is made monotone (each point the best precision at any higher recall)
// and read at the 101 recalls 0, 0.01, ..., 1 (the first point at or past each; 0 past the
// last). AP is the mean of those 101 values; mAP the mean over the thresholds and the classes
// that have truth boxes (not ignored) in the range. Areas are the boxes' (w x h, pixels):
// small below 32², medium to 96², large above. No LibTorch here.
#include <cstdint>
#include <vector>

#include "target/box.h"

namespace netsmith::task {

struct ScoredBox {
  target::Box box;  ///< box.cls: the class
  float score = 0;
};

struct CocoMapOptions {
  int maxDetections = 100;  ///< per image and class, the best scores
};

struct CocoMap {
  double map = 0;                                    ///< mAP@[.5:.95], area all
  double map50 = 0;                                  ///< IoU 0.50
  double map75 = 0;                                  ///< IoU 0.75
  double mapSmall = 0, mapMedium = 0, mapLarge = 0;  ///< mAP@[.5:.95] per area range (-1: none)
  double recall = 0;  ///< mean over thresholds and classes of the recall (AR@maxDetections)
  /// Per class: AP@[.5:.95], AP@.5, recall (mean over thresholds); -1 where the class has no
  /// truth box (not ignored).
  std::vector<double> ap, ap50, classRecall;
  /// Per class at IoU 0.50, area all: the monotone precision at the 101 recalls (-1: no truth).
  std::vector<std::vector<double>> precision50;
};

/// `truth[i]` and `detections[i]`: image i's boxes. Classes are 0 .. classes - 1; a box of
/// another class is ignored.
CocoMap cocoMap(const std::vector<std::vector<target::Box>>& truth,
                const std::vector<std::vector<ScoredBox>>& detections, std::int64_t classes,
                const CocoMapOptions& options = {});

/// IoU of two boxes; with `crowd` (b a crowd box) the intersection over a's area.
double boxIou(const target::Box& a, const target::Box& b, bool crowd = false);

/// One image's detections of class `cls` matched to its true boxes as cocoMap matches them at
/// IoU `threshold` (area range all): each detection, in the order given (best first), takes the
/// unmatched true box of its class with the highest IoU >= threshold, ignored boxes (crowd,
/// difficult) only when no other is left, a crowd box any number of times.
struct ImageMatch {
  std::vector<int> truthOf;     ///< per detection: the true box it matched, -1 (or another class)
  std::vector<bool> onIgnored;  ///< per detection: matched a crowd or difficult box (neither way)
  int missed = 0;               ///< true boxes of the class, not ignored, left unmatched
  int positives = 0;            ///< true boxes of the class, not ignored
};
ImageMatch matchImage(const std::vector<target::Box>& truth,
                      const std::vector<target::Box>& detections, std::int64_t cls,
                      double threshold = 0.5);

/// One image's errors at a score, matching with matchImage at IoU 0.5 for every class: a
/// detection from `score` that matches is found (on a crowd or difficult box: neither); one
/// that does not is a wrong class when it overlaps a true box of another class at IoU >= 0.5,
/// a poor box when it overlaps one of its own class at IoU >= 0.1 (badly placed, or a second
/// box on a found object), and false otherwise; a true box (not ignored) no detection found is
/// missed. What the Evaluation page orders its images by.
/// The score from which the Evaluation page first counts a detection, and at which a detection
/// sample's own score (its errors, SampleView::score) is taken.
inline constexpr float kErrorsScore = 0.5f;
struct DetectionErrors {
  int found = 0, missed = 0, falses = 0, wrongClass = 0, poorBox = 0;
  int total() const { return missed + falses + wrongClass + poorBox; }
};
DetectionErrors detectionErrors(const std::vector<target::Box>& truth,
                                const std::vector<target::Box>& detections,
                                const std::vector<float>& scores, float score);

}  // namespace netsmith::task
