#include "augment/image_ops.h"

#include <cmath>

#include <opencv2/imgproc.hpp>

namespace netsmith::augment {

namespace {
double radians(double degrees) {
  return degrees * kPi / 180.0;
}
}  // namespace

cv::Point2d imageCenter(const cv::Mat& image) {
  return {(image.cols - 1) * 0.5, (image.rows - 1) * 0.5};
}

cv::Matx23d affineMatrix(cv::Point2d center, double angleDeg, cv::Point2d translate, double scale,
                         double shearXDeg, double shearYDeg) {
  const double a = radians(angleDeg);
  // With y pointing down, [[cos, sin], [-sin, cos]] turns counter-clockwise on screen (the same
  // convention as cv::getRotationMatrix2D and torchvision).
  const cv::Matx22d rotate(std::cos(a), std::sin(a), -std::sin(a), std::cos(a));
  const cv::Matx22d shearX(1, std::tan(radians(shearXDeg)), 0, 1);
  const cv::Matx22d shearY(1, 0, std::tan(radians(shearYDeg)), 1);
  const cv::Matx22d m = rotate * shearY * shearX * scale;
  // p' = m (p - c) + c + t
  const cv::Vec2d c(center.x, center.y);
  const cv::Vec2d offset = c + cv::Vec2d(translate.x, translate.y) - m * c;
  return {m(0, 0), m(0, 1), offset[0], m(1, 0), m(1, 1), offset[1]};
}

void warpWithFill(cv::Mat& image, const cv::Matx23d& forward, double fill, int interpolation) {
  if (forward == cv::Matx23d(1, 0, 0, 0, 1, 0)) return;
  cv::Mat out;
  cv::warpAffine(image, out, cv::Mat(forward), image.size(), interpolation, cv::BORDER_CONSTANT,
                 cv::Scalar::all(fill));
  image = out;
  if (interpolation == cv::INTER_CUBIC) clampUnit(image);
}

void padConstant(cv::Mat& image, int top, int bottom, int left, int right, double fill) {
  if (top <= 0 && bottom <= 0 && left <= 0 && right <= 0) return;
  cv::Mat out;
  cv::copyMakeBorder(image, out, std::max(top, 0), std::max(bottom, 0), std::max(left, 0),
                     std::max(right, 0), cv::BORDER_CONSTANT, cv::Scalar::all(fill));
  image = out;
}

cv::Mat luma(const cv::Mat& image) {
  if (image.channels() != 3) return image.clone();
  cv::Mat grey;
  cv::transform(image, grey, cv::Matx13f(0.2989f, 0.587f, 0.114f));
  return grey;
}

void clampUnit(cv::Mat& image) {
  if (image.depth() != CV_32F) return;  // 8-bit images saturate by themselves
  cv::threshold(image, image, 1.0, 1.0, cv::THRESH_TRUNC);
  cv::threshold(image, image, 0.0, 0.0, cv::THRESH_TOZERO);
}

void blendInPlace(cv::Mat& image, const cv::Mat& other, double factor) {
  cv::addWeighted(image, factor, other, 1.0 - factor, 0.0, image);
  clampUnit(image);
}

namespace {

float clampToUnit(float v) {
  return v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v);
}

/// Calls `f(value)` for every float of a CV_32F image, in place, row by row (one pass).
template <typename F>
void mapFloats(cv::Mat& image, F f) {
  const int n = image.cols * image.channels();
  for (int r = 0; r < image.rows; ++r) {
    auto* row = image.ptr<float>(r);
    for (int i = 0; i < n; ++i)
      row[i] = f(row[i]);
  }
}

}  // namespace

// The colour adjustments below run in one pass over float images (the loader's hot path: a
// ColorJitter used to take twelve passes of OpenCV calls per image); other depths keep the
// general OpenCV route. The formulas are torchvision's, clamped to [0, 1] as before.
void adjustBrightness(cv::Mat& image, double factor) {
  if (image.depth() == CV_32F) {
    const auto f = static_cast<float>(factor);
    mapFloats(image, [f](float v) { return clampToUnit(v * f); });
    return;
  }
  image.convertTo(image, -1, factor, 0.0);
  clampUnit(image);
}

void adjustContrast(cv::Mat& image, double factor) {
  // The mean of the luma is the luma of the channel means (linear): no grey image needed.
  double mean = 0.0;
  if (image.channels() == 3) {
    const cv::Scalar m = cv::mean(image);
    mean = 0.2989 * m[0] + 0.587 * m[1] + 0.114 * m[2];
  } else {
    mean = cv::mean(luma(image))[0];
  }
  if (image.depth() == CV_32F) {
    const auto f = static_cast<float>(factor);
    const auto shift = static_cast<float>((1.0 - factor) * mean);
    mapFloats(image, [f, shift](float v) { return clampToUnit(v * f + shift); });
    return;
  }
  image.convertTo(image, -1, factor, (1.0 - factor) * mean);
  clampUnit(image);
}

void adjustSaturation(cv::Mat& image, double factor) {
  if (image.channels() != 3) return;
  if (image.type() == CV_32FC3) {
    // x' = f x + (1 - f) luma(x) for each channel: one 3x3 colour matrix (OpenCV's vectorised
    // cv::transform), then the clamp.
    const auto f = static_cast<float>(factor);
    const float g = 1.0f - f;
    const cv::Matx33f m(f + g * 0.2989f, g * 0.587f, g * 0.114f,  //
                        g * 0.2989f, f + g * 0.587f, g * 0.114f,  //
                        g * 0.2989f, g * 0.587f, f + g * 0.114f);
    cv::transform(image, image, m);
    mapFloats(image, clampToUnit);
    return;
  }
  const cv::Mat grey = luma(image);
  cv::Mat grey3;
  cv::merge(std::vector<cv::Mat>{grey, grey, grey}, grey3);
  blendInPlace(image, grey3, factor);
}

schema::ParamSpec fillParam() {
  return schema::ParamSpec::real("fill", 0.0,
                                 "value of pixels from outside the image (0 black, 1 white)")
      .atLeast(0)
      .atMost(1);
}

}  // namespace netsmith::augment
