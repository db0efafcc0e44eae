#pragma once

// Where a sample's model input came from in its own image, and what a detection source's own
// annotation files call its images and classes: what results written for a user (`eval
// --predictions` for detection) need to be scored against the user's own files.
#include <cstdint>
#include <string>
#include <vector>

#include <opencv2/core/mat.hpp>

#include "target/box.h"

namespace netsmith::data {

/// The evaluation's geometry of one sample: a point of the image maps to the model's input as
/// x_model = sx * x_image + tx, y_model = sy * y_image + ty (fitting and the evaluation
/// pipeline's resizes, crops and letterboxing are all of this form); width and height are the
/// image's own. The identity for an image already at the model's size.
struct ImageGeometry {
  double sx = 1, tx = 0, sy = 1, ty = 0;
  int width = 0, height = 0;
};

/// A box in the model input's pixels back in the image's, clipped to it (`g` without a scale:
/// the box as it is).
target::Box boxInImage(target::Box box, const ImageGeometry& g);
/// A class mask (CV_8UC1) at the model input's size back in the image's pixels, nearest
/// neighbour; 0 where the model saw nothing of the image.
cv::Mat maskInImage(const cv::Mat& mask, const ImageGeometry& g);

/// Implemented by the detection sources (data/box_sources.cpp): COCO keeps its file's image and
/// category ids and file names; YOLO and VOC, whose files carry no ids, number images by their
/// place in the source (files sorted by name, from 1), classes from 1, and name an image by its
/// file name in the images folder.
class AnnotationIds {
 public:
  virtual ~AnnotationIds() = default;
  /// The image id of the source's sample `i`.
  virtual std::int64_t imageId(std::int64_t i) const = 0;
  /// Its file name as the annotations give it.
  virtual std::string imageFile(std::int64_t i) const = 0;
  /// The category id of each class, in class order (-1: a class the annotations have no
  /// category for).
  virtual std::vector<std::int64_t> categoryIds() const = 0;
};

}  // namespace netsmith::data
