#pragma once

// A sample's target that lies on its image's pixels (a class mask, object boxes; room for
// keypoints), below both data, which reads it, and augment, which moves it with the image.
#include <vector>

#include <opencv2/core/mat.hpp>

#include "target/box.h"

namespace netsmith::target {

/// A target that lies on the image's pixels (a per-pixel class mask, or object boxes), carried
/// through the pipeline beside the image: geometric transforms (TransformDef::targets == Moves)
/// move it with the image under the same draws; the others (colour, noise, erasing,
/// Normalize) leave it alone. The mask moves by nearest neighbour, new pixels set to `fill`
/// (the ignore index). A box moves as its four corners do (its new box the corners' bounds, so
/// a rotation widens it), then is clipped to the image; a box of which less than
/// `minVisible` of its moved area stays inside the image is dropped (a crop that cuts an object
/// mostly away leaves no box for it; in evaluation too, where a deterministic crop cuts). A box
/// a resize makes smaller than a pixel stays. Reflect and edge padding (RandomCrop) mirror or
/// repeat pixels of objects near the edge without boxes for the copies.
struct PixelTarget {
  /// CV_8UC1, one class index per pixel, the image's size; empty when the target is boxes
  /// alone. Changed in place (flips) or replaced, as the image is: pass a mask of the sample's
  /// own, not a cached one.
  cv::Mat mask;
  double fill = 255;
  /// The objects' boxes in the image's pixels (edges: a box of the whole image is 0, 0, w, h).
  std::vector<Box> boxes;
  double minVisible = 0.25;
};

}  // namespace netsmith::target
