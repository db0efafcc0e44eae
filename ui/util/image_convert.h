#pragma once

// OpenCV images as QImages, for the pages that show samples (Data, Augment, Evaluation).
#include <QImage>
#include <opencv2/core/mat.hpp>

namespace netsmith::ui {

/// A copy of `image` as a QImage: 8-bit, or float in [0, 1]; one channel is grey, three are RGB
/// (or BGR, as OpenCV draws, when `bgr`).
QImage toQImage(const cv::Mat& image, bool bgr = false);

}  // namespace netsmith::ui
