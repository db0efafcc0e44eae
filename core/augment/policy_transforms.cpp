// Policy family: RandAugment and TrivialAugmentWide with torchvision's operations and magnitude
// ranges, on float images (Solarize thresholds and Posterize as torchvision does for floats).
#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include "augment/image_ops.h"
#include "augment/transform.h"

namespace netsmith::augment {

namespace {

using schema::Params;
using schema::ParamSpec;

enum class PolicyOp {
  Identity,
  ShearX,
  ShearY,
  TranslateX,
  TranslateY,
  Rotate,
  Brightness,
  Color,
  Contrast,
  Sharpness,
  Posterize,
  Solarize,
  AutoContrast,
  Equalize,
};

// torchvision's order, which decides what each random index means.
constexpr std::array<PolicyOp, 14> kOps = {
    PolicyOp::Identity,     PolicyOp::ShearX,    PolicyOp::ShearY,     PolicyOp::TranslateX,
    PolicyOp::TranslateY,   PolicyOp::Rotate,    PolicyOp::Brightness, PolicyOp::Color,
    PolicyOp::Contrast,     PolicyOp::Sharpness, PolicyOp::Posterize,  PolicyOp::Solarize,
    PolicyOp::AutoContrast, PolicyOp::Equalize,
};

/// Which augmentation space: RandAugment's or TrivialAugmentWide's (wider ranges).
enum class Space { RandAugment, Wide };

bool hasMagnitude(PolicyOp op) {
  return op != PolicyOp::Identity && op != PolicyOp::AutoContrast && op != PolicyOp::Equalize;
}

bool isSigned(PolicyOp op) {
  return hasMagnitude(op) && op != PolicyOp::Posterize && op != PolicyOp::Solarize;
}

/// torchvision's _augmentation_space(num_bins, image_size)[op][bin].
double opMagnitude(PolicyOp op, int bin, int bins, cv::Size size, Space space) {
  const bool wide = space == Space::Wide;
  const double t = bins > 1 ? static_cast<double>(bin) / (bins - 1) : 0.0;
  switch (op) {
    case PolicyOp::ShearX:
    case PolicyOp::ShearY:
      return t * (wide ? 0.99 : 0.3);
    case PolicyOp::TranslateX:
      return t * (wide ? 32.0 : 150.0 / 331.0 * size.width);
    case PolicyOp::TranslateY:
      return t * (wide ? 32.0 : 150.0 / 331.0 * size.height);
    case PolicyOp::Rotate:
      return t * (wide ? 135.0 : 30.0);
    case PolicyOp::Brightness:
    case PolicyOp::Color:
    case PolicyOp::Contrast:
    case PolicyOp::Sharpness:
      return t * (wide ? 0.99 : 0.9);
    case PolicyOp::Posterize:
      // 8 - round(bin / ((bins - 1) / 4)) bits (/ 6 for the wide space); nearbyint rounds half
      // to even like torch.round.
      return 8.0 - std::nearbyint(bins > 1 ? bin / ((bins - 1) / (wide ? 6.0 : 4.0)) : 0.0);
    case PolicyOp::Solarize:
      return 1.0 - t;  // threshold from 1 down to 0
    case PolicyOp::Identity:
    case PolicyOp::AutoContrast:
    case PolicyOp::Equalize:
      return 0.0;
  }
  return 0.0;
}

/// torchvision adjust_sharpness: blends with a 3x3 smoothed copy whose border is the original.
void adjustSharpness(cv::Mat& image, double factor) {
  if (image.rows <= 2 || image.cols <= 2) return;
  cv::Mat kernel = cv::Mat::ones(3, 3, CV_32F);
  kernel.at<float>(1, 1) = 5.0f;
  kernel /= 13.0;
  cv::Mat smoothed;
  cv::filter2D(image, smoothed, -1, kernel, cv::Point(-1, -1), 0, cv::BORDER_REFLECT_101);
  cv::Mat degenerate = image.clone();
  const cv::Rect inner(1, 1, image.cols - 2, image.rows - 2);
  smoothed(inner).copyTo(degenerate(inner));
  blendInPlace(image, degenerate, factor);
}

/// torchvision posterize for float images: keeps `bits` bits per value.
void posterize(cv::Mat& image, int bits) {
  const float levels = static_cast<float>(1 << bits);
  const int n = image.cols * image.channels();
  for (int r = 0; r < image.rows; ++r) {
    auto* row = image.ptr<float>(r);
    for (int i = 0; i < n; ++i) {
      row[i] = std::clamp(std::floor(row[i] * levels), 0.0f, levels - 1.0f) / levels;
    }
  }
}

/// Inverts every value at or above `threshold`.
void solarize(cv::Mat& image, double threshold) {
  const int n = image.cols * image.channels();
  const auto th = static_cast<float>(threshold);
  for (int r = 0; r < image.rows; ++r) {
    auto* row = image.ptr<float>(r);
    for (int i = 0; i < n; ++i) {
      if (row[i] >= th) row[i] = 1.0f - row[i];
    }
  }
}

/// Stretches each channel to [0, 1]; flat channels are left alone.
void autoContrast(cv::Mat& image) {
  std::vector<cv::Mat> channels;
  cv::split(image, channels);
  for (auto& ch : channels) {
    double lo = 0, hi = 0;
    cv::minMaxLoc(ch, &lo, &hi);
    if (hi > lo) ch.convertTo(ch, -1, 1.0 / (hi - lo), -lo / (hi - lo));
  }
  cv::merge(channels, image);
  clampUnit(image);
}

/// Histogram equalisation per channel on the image quantised to 8 bits (torchvision / PIL).
void equalize(cv::Mat& image) {
  std::vector<cv::Mat> channels;
  cv::split(image, channels);
  for (auto& ch : channels) {
    cv::Mat bytes(ch.size(), CV_8U);
    std::array<double, 256> hist{};
    for (int r = 0; r < ch.rows; ++r) {
      const auto* in = ch.ptr<float>(r);
      auto* out = bytes.ptr<std::uint8_t>(r);
      for (int c = 0; c < ch.cols; ++c) {
        out[c] = static_cast<std::uint8_t>(std::clamp(std::floor(in[c] * 256.0f), 0.0f, 255.0f));
        hist[out[c]] += 1;
      }
    }
    // step = (sum of the non-empty bins but the last) / 255, floored.
    int last = 255;
    while (last > 0 && hist[static_cast<std::size_t>(last)] == 0)
      --last;
    double nonLast = 0;
    for (int i = 0; i < last; ++i)
      nonLast += hist[static_cast<std::size_t>(i)];
    const double step = std::floor(nonLast / 255.0);
    if (step == 0) {
      bytes.convertTo(ch, CV_32F, 1.0 / 255.0);
      continue;
    }
    std::array<float, 256> lut{};
    double cumulative = 0;
    for (std::size_t i = 0; i < 256; ++i) {
      // lut[i] uses the cumulative count before bin i.
      lut[i] = static_cast<float>(
          std::clamp(std::floor((cumulative + std::floor(step / 2)) / step), 0.0, 255.0) / 255.0);
      cumulative += hist[i];
    }
    for (int r = 0; r < ch.rows; ++r) {
      const auto* in = bytes.ptr<std::uint8_t>(r);
      auto* out = ch.ptr<float>(r);
      for (int c = 0; c < ch.cols; ++c)
        out[c] = lut[in[c]];
    }
  }
  cv::merge(channels, image);
}

double shearDegrees(double magnitude) {
  return std::atan(magnitude) * 180.0 / kPi;
}

/// torchvision _apply_op on a float image.
void applyOp(cv::Mat& image, PolicyOp op, double magnitude, double fill) {
  // Shears and shifts act about the top-left corner of the pixel grid (torchvision center=[0, 0]).
  const cv::Point2d corner(-0.5, -0.5);
  switch (op) {
    case PolicyOp::Identity:
      return;
    case PolicyOp::ShearX:
      warpWithFill(image, affineMatrix(corner, 0, {0, 0}, 1, shearDegrees(magnitude), 0), fill);
      return;
    case PolicyOp::ShearY:
      warpWithFill(image, affineMatrix(corner, 0, {0, 0}, 1, 0, shearDegrees(magnitude)), fill);
      return;
    case PolicyOp::TranslateX:
      warpWithFill(image, affineMatrix(corner, 0, {std::trunc(magnitude), 0}, 1, 0, 0), fill);
      return;
    case PolicyOp::TranslateY:
      warpWithFill(image, affineMatrix(corner, 0, {0, std::trunc(magnitude)}, 1, 0, 0), fill);
      return;
    case PolicyOp::Rotate:
      warpWithFill(image, affineMatrix(imageCenter(image), magnitude, {0, 0}, 1, 0, 0), fill);
      return;
    case PolicyOp::Brightness:
      adjustBrightness(image, 1.0 + magnitude);
      return;
    case PolicyOp::Color:
      adjustSaturation(image, 1.0 + magnitude);
      return;
    case PolicyOp::Contrast:
      adjustContrast(image, 1.0 + magnitude);
      return;
    case PolicyOp::Sharpness:
      adjustSharpness(image, 1.0 + magnitude);
      return;
    case PolicyOp::Posterize:
      posterize(image, static_cast<int>(magnitude));
      return;
    case PolicyOp::Solarize:
      solarize(image, magnitude);
      return;
    case PolicyOp::AutoContrast:
      autoContrast(image);
      return;
    case PolicyOp::Equalize:
      equalize(image);
      return;
  }
}

PolicyOp randomOp(SampleRng& rng) {
  return kOps[static_cast<std::size_t>(rng.integer(0, static_cast<std::int64_t>(kOps.size()) - 1))];
}

/// Applies `op` with the magnitude of `bin`, negated half of the time for signed ops.
void applyAtBin(cv::Mat& image, PolicyOp op, int bin, int bins, Space space, double fill,
                SampleRng& rng) {
  double magnitude = opMagnitude(op, bin, bins, image.size(), space);
  if (isSigned(op) && rng.integer(0, 1) == 1) magnitude = -magnitude;
  applyOp(image, op, magnitude, fill);
}

ParamSpec binsSpec() {
  return ParamSpec::integer("num_magnitude_bins", 31, "number of magnitude steps")
      .atLeast(2)
      .atMost(1000);
}

TransformDef randAugmentDef() {
  TransformDef def;
  def.name = "RandAugment";
  def.group = "Policy";
  def.targets = TargetEffect::Breaks;  // shears and shifts without a target
  def.help = "applies num_ops operations chosen at random, all at one magnitude";
  def.schema = {
      ParamSpec::integer("num_ops", 2, "operations applied in sequence").atLeast(0).atMost(10),
      ParamSpec::integer("magnitude", 9, "strength, a bin index below num_magnitude_bins")
          .atLeast(0)
          .atMost(30),
      binsSpec(),
      fillParam(),
  };
  def.check = [](const Params& p, const TransformContext&) {
    std::vector<TransformIssue> issues;
    const auto bins = p.integer("num_magnitude_bins");
    if (p.integer("magnitude") >= bins) {
      issues.push_back({"magnitude", "must be below num_magnitude_bins (" + std::to_string(bins) +
                                         "), got " + std::to_string(p.integer("magnitude"))});
    }
    return issues;
  };
  def.build = [](const Params& p, const TransformContext&) -> std::unique_ptr<Transform> {
    const auto numOps = static_cast<int>(p.integer("num_ops"));
    const auto bins = static_cast<int>(p.integer("num_magnitude_bins"));
    const int bin = std::min(static_cast<int>(p.integer("magnitude")), bins - 1);
    const double fill = p.real("fill");
    return std::make_unique<FunctionTransform>([=](cv::Mat& img, SampleRng& rng) {
      for (int i = 0; i < numOps; ++i) {
        applyAtBin(img, randomOp(rng), bin, bins, Space::RandAugment, fill, rng);
      }
    });
  };
  return def;
}

TransformDef trivialAugmentDef() {
  TransformDef def;
  def.name = "TrivialAugmentWide";
  def.group = "Policy";
  def.targets = TargetEffect::Breaks;  // shears and shifts without a target
  def.help = "applies one operation chosen at random, at a random magnitude";
  def.schema = {binsSpec(), fillParam()};
  def.build = [](const Params& p, const TransformContext&) -> std::unique_ptr<Transform> {
    const auto bins = static_cast<int>(p.integer("num_magnitude_bins"));
    const double fill = p.real("fill");
    return std::make_unique<FunctionTransform>([=](cv::Mat& img, SampleRng& rng) {
      const PolicyOp op = randomOp(rng);
      const int bin = hasMagnitude(op) ? static_cast<int>(rng.integer(0, bins - 1)) : 0;
      applyAtBin(img, op, bin, bins, Space::Wide, fill, rng);
    });
  };
  return def;
}

}  // namespace

void registerPolicyTransforms(TransformRegistry& registry) {
  registry.add(randAugmentDef());
  registry.add(trivialAugmentDef());
}

}  // namespace netsmith::augment
