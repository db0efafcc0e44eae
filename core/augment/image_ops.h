// Image operations shared by several transform families (geometric, colour, policy).
#pragma once

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include "schema/param_schema.h"

namespace netsmith::augment {

inline constexpr double kPi = 3.14159265358979323846;

/// The "fill" parameter of the transforms that bring in pixels from outside the image.
schema::ParamSpec fillParam();

/// The centre of an image in pixel coordinates ((w - 1) / 2, (h - 1) / 2), so a rotation by 180
/// degrees maps pixel (r, c) exactly onto (h - 1 - r, w - 1 - c).
cv::Point2d imageCenter(const cv::Mat& image);

/// The forward 2x3 affine matrix that shears, scales and rotates about `center` and then
/// translates by `translate` pixels. Angles are in degrees; positive `angleDeg` turns the
/// image counter-clockwise as seen on screen.
///   warpWithFill(img, affineMatrix(imageCenter(img), 30, {0, 0}, 1, 0, 0), 0.0);
cv::Matx23d affineMatrix(cv::Point2d center, double angleDeg, cv::Point2d translate, double scale,
                         double shearXDeg, double shearYDeg);

/// Warps `image` in place with the forward matrix `forward`, keeping its size; pixels that come
/// from outside the image get `fill` (0 black .. 1 white) in every channel.
void warpWithFill(cv::Mat& image, const cv::Matx23d& forward, double fill,
                  int interpolation = cv::INTER_LINEAR);

/// Pads `image` by the given number of pixels on each side with the constant `fill`.
void padConstant(cv::Mat& image, int top, int bottom, int left, int right, double fill);

/// Luma (0.2989 R + 0.587 G + 0.114 B, as torchvision) as a one-channel image; a one-channel
/// image is returned as a copy.
cv::Mat luma(const cv::Mat& image);

/// image = clamp(factor * image + (1 - factor) * other, 0, 1); `other` has the image's size and
/// channel count.
void blendInPlace(cv::Mat& image, const cv::Mat& other, double factor);

/// Multiplies by `factor` and clamps to [0, 1] (torchvision adjust_brightness).
void adjustBrightness(cv::Mat& image, double factor);

/// Blends with the mean luma of the whole image (torchvision adjust_contrast).
void adjustContrast(cv::Mat& image, double factor);

/// Blends with the grey version of the image; one-channel images are left alone (torchvision
/// adjust_saturation).
void adjustSaturation(cv::Mat& image, double factor);

/// Clamps every value to [0, 1].
void clampUnit(cv::Mat& image);

}  // namespace netsmith::augment
