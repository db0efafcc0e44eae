// Noise family: GaussianBlur, GaussianNoise and RandomErasing (torchvision semantics).
#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include "augment/image_ops.h"
#include "augment/transform.h"

namespace netsmith::augment {

namespace {

using schema::Params;
using schema::ParamSpec;

TransformDef gaussianBlurDef() {
  TransformDef def;
  def.name = "GaussianBlur";
  def.group = "Noise";
  def.help = "blurs with a Gaussian kernel whose sigma is drawn from a range";
  def.schema = {
      ParamSpec::intPair("kernel_size", 3, "kernel size [height, width]; odd numbers")
          .atLeast(1)
          .inUnit("px"),
      ParamSpec::floatPair("sigma", Json::array({0.1, 2.0}), "range of the standard deviation")
          .above(0)
          .inUnit("px"),
  };
  def.check = [](const Params& p, const TransformContext&) {
    std::vector<TransformIssue> issues;
    const auto k = p.pair("kernel_size");
    if (k[0] % 2 == 0 || k[1] % 2 == 0) {
      issues.push_back(
          {"kernel_size", "must be odd, got " + std::to_string(k[0]) + "x" + std::to_string(k[1])});
    }
    return issues;
  };
  def.build = [](const Params& p, const TransformContext&) -> std::unique_ptr<Transform> {
    const auto k = p.pair("kernel_size");
    // `check` reports even sizes; should one get here anyway, use the next odd size.
    const cv::Size kernel(static_cast<int>(k[1] | 1), static_cast<int>(k[0] | 1));
    const auto sigma = p.range("sigma");
    return std::make_unique<FunctionTransform>([=](cv::Mat& img, SampleRng& rng) {
      const double s = rng.uniform(sigma[0], sigma[1]);
      cv::Mat out;
      cv::GaussianBlur(img, out, kernel, s, s, cv::BORDER_REFLECT_101);
      img = out;
    });
  };
  return def;
}

TransformDef gaussianNoiseDef() {
  TransformDef def;
  def.name = "GaussianNoise";
  def.group = "Noise";
  def.help = "adds independent normal noise to every pixel";
  def.schema = {
      ParamSpec::real("std", 0.1, "standard deviation of the noise").atLeast(0).atMost(1),
      ParamSpec::boolean("clip", true, "clip the result to [0, 1]"),
  };
  def.build = [](const Params& p, const TransformContext&) -> std::unique_ptr<Transform> {
    const double stddev = p.real("std");
    const bool clip = p.flag("clip");
    return std::make_unique<FunctionTransform>([=](cv::Mat& img, SampleRng& rng) {
      if (stddev <= 0) return;
      const int n = img.cols * img.channels();
      for (int r = 0; r < img.rows; ++r) {
        auto* row = img.ptr<float>(r);
        for (int i = 0; i < n; ++i)
          row[i] += static_cast<float>(rng.normal(0.0, stddev));
      }
      if (clip) clampUnit(img);
    });
  };
  return def;
}

/// torchvision RandomErasing.get_params: the box to erase, or an empty rect when none of ten
/// tries fits.
cv::Rect erasingBox(const cv::Mat& img, std::array<double, 2> scale, std::array<double, 2> ratio,
                    SampleRng& rng) {
  const double area = static_cast<double>(img.rows) * img.cols;
  const double logLo = std::log(ratio[0]);
  const double logHi = std::log(ratio[1]);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double eraseArea = area * rng.uniform(scale[0], scale[1]);
    const double aspect = std::exp(rng.uniform(logLo, logHi));
    const int h = static_cast<int>(std::lround(std::sqrt(eraseArea * aspect)));
    const int w = static_cast<int>(std::lround(std::sqrt(eraseArea / aspect)));
    if (!(h < img.rows && w < img.cols) || h < 1 || w < 1) continue;
    const auto top = static_cast<int>(rng.integer(0, img.rows - h));
    const auto left = static_cast<int>(rng.integer(0, img.cols - w));
    return {left, top, w, h};
  }
  return {};
}

TransformDef randomErasingDef() {
  TransformDef def;
  def.name = "RandomErasing";
  def.group = "Noise";
  def.help = "overwrites a random box with a constant or with noise";
  def.schema = {
      ParamSpec::floatPair("scale", Json::array({0.02, 0.33}),
                           "range of the box's area, as a fraction of the image")
          .above(0)
          .atMost(1),
      ParamSpec::floatPair("ratio", Json::array({0.3, 3.3}),
                           "range of the box's aspect ratio (height / width)")
          .above(0),
      ParamSpec::real("value", 0.0,
                      "value written into the box (0 black, 1 white); \"random\": per-pixel "
                      "normal noise with the data's mean and std")
          .atLeast(0)
          .atMost(1)
          .orKeywords({"random"}),
  };
  def.build = [](const Params& p, const TransformContext& ctx) -> std::unique_ptr<Transform> {
    const auto scale = p.range("scale");
    const auto ratio = p.range("ratio");
    const bool random = p.isKeyword("value", "random");
    const double value = random ? 0.0 : p.real("value");
    // Images are in [0, 1] here, so noise drawn with the data's statistics becomes about
    // N(0, 1) after Normalize, which is what torchvision's "random" gives.
    std::array<double, 3> mean{0.5, 0.5, 0.5};
    std::array<double, 3> stddev{0.25, 0.25, 0.25};
    for (std::size_t i = 0; i < 3; ++i) {
      if (!ctx.mean.empty()) mean[i] = ctx.mean[std::min(i, ctx.mean.size() - 1)];
      if (!ctx.std.empty()) stddev[i] = ctx.std[std::min(i, ctx.std.size() - 1)];
    }
    return std::make_unique<FunctionTransform>([=](cv::Mat& img, SampleRng& rng) {
      const cv::Rect box = erasingBox(img, scale, ratio, rng);
      if (box.empty()) return;
      cv::Mat region = img(box);
      if (!random) {
        region.setTo(cv::Scalar::all(value));
        return;
      }
      const int ch = img.channels();
      for (int r = 0; r < region.rows; ++r) {
        auto* row = region.ptr<float>(r);
        for (int i = 0; i < region.cols * ch; ++i) {
          const auto c = static_cast<std::size_t>(i % ch);
          row[i] = static_cast<float>(std::clamp(rng.normal(mean[c], stddev[c]), 0.0, 1.0));
        }
      }
    });
  };
  return def;
}

}  // namespace

void registerNoiseTransforms(TransformRegistry& registry) {
  registry.add(gaussianBlurDef());
  registry.add(gaussianNoiseDef());
  registry.add(randomErasingDef());
}

}  // namespace netsmith::augment
