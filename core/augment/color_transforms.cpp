// Colour family: ColorJitter (brightness, contrast, saturation, hue) and RandomGrayscale, with
// torchvision's formulas on float RGB images.
#include <algorithm>
#include <array>
#include <cmath>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include "augment/image_ops.h"
#include "augment/transform.h"

namespace netsmith::augment {

namespace {

using schema::Params;
using schema::ParamSpec;

/// Turns the hue of an RGB image by `shift` of the hue circle (torchvision adjust_hue).
void adjustHue(cv::Mat& image, double shift) {
  if (image.channels() != 3) return;
  cv::Mat hsv;
  cv::cvtColor(image, hsv, cv::COLOR_RGB2HSV);  // float: H in [0, 360), S and V in [0, 1]
  const auto degrees = static_cast<float>(shift * 360.0);
  for (int r = 0; r < hsv.rows; ++r) {
    auto* row = hsv.ptr<cv::Vec3f>(r);
    for (int c = 0; c < hsv.cols; ++c) {
      float h = std::fmod(row[c][0] + degrees, 360.0f);
      if (h < 0) h += 360.0f;
      row[c][0] = h;
    }
  }
  cv::cvtColor(hsv, image, cv::COLOR_HSV2RGB);
  clampUnit(image);
}

TransformDef colorJitterDef() {
  TransformDef def;
  def.name = "ColorJitter";
  def.group = "Colour";
  def.help = "randomly changes brightness, contrast, saturation and hue, in random order";
  def.schema = {
      ParamSpec::real("brightness", 0.2, "factor drawn from [max(0, 1 - x), 1 + x]").atLeast(0),
      ParamSpec::real("contrast", 0.2, "factor drawn from [max(0, 1 - x), 1 + x]").atLeast(0),
      ParamSpec::real("saturation", 0.2,
                      "factor drawn from [max(0, 1 - x), 1 + x]; colour images only")
          .atLeast(0),
      ParamSpec::real("hue", 0.0,
                      "shift drawn from [-x, x], as a fraction of the hue circle; colour images "
                      "only")
          .atLeast(0)
          .atMost(0.5),
  };
  def.build = [](const Params& p, const TransformContext&) -> std::unique_ptr<Transform> {
    // A zero strength skips that part altogether, so an all-zero ColorJitter is exactly the
    // identity (a hue round trip through HSV would not be).
    const std::array<double, 4> strength{p.real("brightness"), p.real("contrast"),
                                         p.real("saturation"), p.real("hue")};
    return std::make_unique<FunctionTransform>([strength](cv::Mat& img, SampleRng& rng) {
      // As torchvision: a random order first, then the factors.
      std::array<std::size_t, 4> order{0, 1, 2, 3};
      for (std::size_t i = 3; i > 0; --i) {
        std::swap(order[i],
                  order[static_cast<std::size_t>(rng.integer(0, static_cast<std::int64_t>(i)))]);
      }
      std::array<double, 4> factor{1.0, 1.0, 1.0, 0.0};
      for (std::size_t k = 0; k < 3; ++k) {
        if (strength[k] > 0)
          factor[k] = rng.uniform(std::max(0.0, 1.0 - strength[k]), 1.0 + strength[k]);
      }
      if (strength[3] > 0) factor[3] = rng.uniform(-strength[3], strength[3]);
      for (const std::size_t step : order) {
        if (strength[step] <= 0) continue;
        switch (step) {
          case 0:
            adjustBrightness(img, factor[0]);
            break;
          case 1:
            adjustContrast(img, factor[1]);
            break;
          case 2:
            adjustSaturation(img, factor[2]);
            break;
          default:
            adjustHue(img, factor[3]);
            break;
        }
      }
    });
  };
  return def;
}

TransformDef randomGrayscaleDef() {
  TransformDef def;
  def.name = "RandomGrayscale";
  def.group = "Colour";
  def.help = "turns colour images grey, keeping three (equal) channels";
  def.defaultProbability = 0.1;
  def.build = [](const Params&, const TransformContext&) -> std::unique_ptr<Transform> {
    return std::make_unique<FunctionTransform>([](cv::Mat& img, SampleRng&) {
      if (img.channels() != 3) return;
      const cv::Mat grey = luma(img);
      cv::merge(std::vector<cv::Mat>{grey, grey, grey}, img);
    });
  };
  return def;
}

}  // namespace

void registerColorTransforms(TransformRegistry& registry) {
  registry.add(colorJitterDef());
  registry.add(randomGrayscaleDef());
}

}  // namespace netsmith::augment
