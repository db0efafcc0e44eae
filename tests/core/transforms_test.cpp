#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include "augment/transform.h"
#include "common/error.h"

using namespace netsmith;
using namespace netsmith::augment;

namespace {

TransformContext context(int channels = 3, int height = 28, int width = 28) {
  TransformContext ctx;
  ctx.channels = channels;
  ctx.height = height;
  ctx.width = width;
  ctx.mean.assign(static_cast<std::size_t>(channels), 0.5);
  ctx.std.assign(static_cast<std::size_t>(channels), 0.25);
  return ctx;
}

/// Uniform noise in [lo, hi), repeatable.
cv::Mat noiseImage(int rows, int cols, int channels, std::uint64_t seed, float lo = 0.0f,
                   float hi = 1.0f) {
  cv::Mat m(rows, cols, CV_32FC(channels));
  SampleRng rng(seed);
  for (int r = 0; r < rows; ++r) {
    auto* row = m.ptr<float>(r);
    for (int i = 0; i < cols * channels; ++i)
      row[i] = static_cast<float>(rng.uniform(lo, hi));
  }
  return m;
}

/// Every value distinct, so a pixel's origin can be recognised.
cv::Mat rampImage(int rows, int cols, int channels) {
  cv::Mat m(rows, cols, CV_32FC(channels));
  const float n = static_cast<float>(rows * cols * channels + 1);
  for (int r = 0; r < rows; ++r) {
    auto* row = m.ptr<float>(r);
    for (int i = 0; i < cols * channels; ++i)
      row[i] = static_cast<float>(r * cols * channels + i + 1) / n;
  }
  return m;
}

cv::Mat constantImage(int rows, int cols, int channels, float value) {
  return cv::Mat(rows, cols, CV_32FC(channels), cv::Scalar::all(value));
}

float px(const cv::Mat& m, int r, int c, int ch = 0) {
  return m.ptr<float>(r)[c * m.channels() + ch];
}

double maxDiff(const cv::Mat& a, const cv::Mat& b) {
  if (a.size() != b.size() || a.type() != b.type()) return 1e9;
  return cv::norm(a, b, cv::NORM_INF);
}

bool identical(const cv::Mat& a, const cv::Mat& b) {
  return maxDiff(a, b) == 0.0;
}

/// All values as one column (over every channel).
cv::Mat values(const cv::Mat& m) {
  const cv::Mat c = m.isContinuous() ? m : m.clone();
  return c.reshape(1, static_cast<int>(c.total() * c.channels()));
}

double stddevOf(const cv::Mat& m) {
  cv::Scalar mean, sd;
  cv::meanStdDev(values(m), mean, sd);
  return sd[0];
}

double meanOf(const cv::Mat& m) {
  return cv::mean(values(m))[0];
}

class TransformTest : public ::testing::Test {
 protected:
  const TransformRegistry registry = TransformRegistry::withBuiltins();

  schema::Params resolve(const std::string& name, const Json& params) const {
    const TransformDef* def = registry.find(name);
    if (!def) throw Error("no transform " + name);
    Problems problems;
    auto p = schema::resolveParams(def->schema, params, "augment[0]", "", problems);
    if (!problems.empty()) throw Error(formatProblems(problems));
    return p;
  }

  std::vector<TransformIssue> issues(const std::string& name, const Json& params,
                                     const TransformContext& ctx = context()) const {
    const TransformDef* def = registry.find(name);
    const auto p = resolve(name, params);
    return def->check ? def->check(p, ctx) : std::vector<TransformIssue>{};
  }

  std::unique_ptr<Transform> make(const std::string& name, const Json& params = Json::object(),
                                  const TransformContext& ctx = context()) const {
    const auto found = issues(name, params, ctx);
    if (!found.empty()) throw Error(name + ": " + found[0].param + " " + found[0].message);
    return registry.find(name)->build(resolve(name, params), ctx);
  }

  static cv::Mat run(const Transform& t, const cv::Mat& image, std::uint64_t seed = 1) {
    cv::Mat out = image.clone();
    SampleRng rng(seed);
    t.apply(out, rng);
    return out;
  }
};

const std::vector<std::string> kFamilyTransforms = {
    "Resize",       "CenterCrop",     "RandomCrop",    "RandomResizedCrop", "HorizontalFlip",
    "VerticalFlip", "RandomRotation", "RandomAffine",  "ColorJitter",       "RandomGrayscale",
    "GaussianBlur", "GaussianNoise",  "RandomErasing", "RandAugment",       "TrivialAugmentWide"};

}  // namespace

// --- Registry ---------------------------------------------------------------------------------

TEST_F(TransformTest, RegistryDeclaresEveryTransformWithItsFlags) {
  for (const auto& name : kFamilyTransforms) {
    const TransformDef* def = registry.find(name);
    ASSERT_NE(def, nullptr) << name;
    EXPECT_FALSE(def->batchLevel) << name;
    ASSERT_TRUE(def->build) << name;
    for (const auto& spec : def->schema) {
      EXPECT_NE(spec.name, "p") << name;
      EXPECT_NE(spec.name, "enabled") << name;
    }
    Problems problems;
    schema::resolveParams(def->schema, Json::object(), "augment[0]", "", problems);
    EXPECT_TRUE(problems.empty()) << name << ": " << formatProblems(problems);
    const bool half = name == "HorizontalFlip" || name == "VerticalFlip";
    const double expectedP = half ? 0.5 : name == "RandomGrayscale" ? 0.1 : 1.0;
    EXPECT_DOUBLE_EQ(def->defaultProbability, expectedP) << name;
    const bool sizing = name == "Resize" || name == "CenterCrop" || name == "RandomCrop" ||
                        name == "RandomResizedCrop";
    EXPECT_EQ(def->setsSize, sizing) << name;
    EXPECT_EQ(def->deterministic, name == "Resize" || name == "CenterCrop") << name;
  }
  EXPECT_EQ(registry.find("RandomCrop")->group, "Geometry");
  EXPECT_EQ(registry.find("ColorJitter")->group, "Colour");
  EXPECT_EQ(registry.find("GaussianBlur")->group, "Noise");
  EXPECT_EQ(registry.find("RandAugment")->group, "Policy");
}

TEST_F(TransformTest, EveryTransformKeepsTypeAndChannelsAndIsRepeatablePerSeed) {
  for (const int channels : {1, 3}) {
    const TransformContext ctx = context(channels, 12, 10);
    const cv::Mat image = noiseImage(14, 16, channels, 7);
    for (const auto& name : kFamilyTransforms) {
      const auto t = make(name, Json::object(), ctx);
      for (std::uint64_t seed = 0; seed < 4; ++seed) {
        const cv::Mat a = run(*t, image, seed);
        const cv::Mat b = run(*t, image, seed);
        EXPECT_TRUE(identical(a, b)) << name << " seed " << seed;
        EXPECT_EQ(a.type(), CV_32FC(channels)) << name;
        double lo = 0, hi = 0;
        cv::minMaxLoc(a.reshape(1, static_cast<int>(a.total())), &lo, &hi);
        EXPECT_GE(lo, 0.0) << name;
        EXPECT_LE(hi, 1.0) << name;
        if (registry.find(name)->setsSize) {
          EXPECT_EQ(a.size(), cv::Size(10, 12)) << name << ": \"auto\" is the model input size";
        } else {
          EXPECT_EQ(a.size(), image.size()) << name;
        }
      }
    }
  }
}

// --- Geometry ---------------------------------------------------------------------------------

TEST_F(TransformTest, ResizeGivesTheRequestedSizeWithEveryInterpolation) {
  const cv::Mat image = noiseImage(10, 14, 3, 1);
  for (const char* mode : {"bilinear", "nearest", "bicubic", "area"}) {
    const auto t = make("Resize", {{"size", {7, 9}}, {"interpolation", mode}});
    const cv::Mat out = run(*t, image);
    EXPECT_EQ(out.rows, 7) << mode;
    EXPECT_EQ(out.cols, 9) << mode;
    EXPECT_EQ(out.type(), CV_32FC3) << mode;
    EXPECT_NEAR(meanOf(out), meanOf(image), 0.06) << mode;
    const cv::Mat flat = run(*t, constantImage(10, 14, 3, 0.25f));
    EXPECT_LT(maxDiff(flat, constantImage(7, 9, 3, 0.25f)), 1e-5) << mode;
  }
  const cv::Mat square = run(*make("Resize", {{"size", 5}}), image);
  EXPECT_EQ(square.size(), cv::Size(5, 5));
  const cv::Mat upscaled =
      run(*make("Resize", {{"size", {20, 28}}, {"interpolation", "nearest"}}), image);
  EXPECT_FLOAT_EQ(px(upscaled, 0, 0, 2), px(image, 0, 0, 2));
  EXPECT_FLOAT_EQ(px(upscaled, 19, 27, 1), px(image, 9, 13, 1));
}

TEST_F(TransformTest, CenterCropCutsTheMiddleAndPadsWithBlack) {
  const cv::Mat image = rampImage(10, 12, 3);
  const cv::Mat out = run(*make("CenterCrop", {{"size", {4, 6}}}), image);
  EXPECT_TRUE(identical(out, image(cv::Rect(3, 3, 6, 4))));
  const cv::Mat big = run(*make("CenterCrop", {{"size", {12, 12}}}), image);
  ASSERT_EQ(big.size(), cv::Size(12, 12));
  EXPECT_FLOAT_EQ(px(big, 0, 5), 0.0f);
  EXPECT_FLOAT_EQ(px(big, 11, 5), 0.0f);
  EXPECT_TRUE(identical(big(cv::Rect(0, 1, 12, 10)), image));
  const cv::Mat autoSize = run(*make("CenterCrop", Json::object(), context(3, 6, 8)), image);
  EXPECT_TRUE(identical(autoSize, image(cv::Rect(2, 2, 8, 6))));
}

TEST_F(TransformTest, RandomCropTakesAWindowOfTheImage) {
  const cv::Mat image = rampImage(8, 9, 1);
  std::set<std::pair<int, int>> offsets;
  for (std::uint64_t seed = 0; seed < 30; ++seed) {
    const cv::Mat out = run(*make("RandomCrop", {{"size", {5, 4}}, {"padding", 0}}), image, seed);
    ASSERT_EQ(out.size(), cv::Size(4, 5));
    bool found = false;
    for (int top = 0; top <= 3 && !found; ++top) {
      for (int left = 0; left <= 5 && !found; ++left) {
        if (identical(out, image(cv::Rect(left, top, 4, 5)))) {
          found = true;
          offsets.insert({top, left});
        }
      }
    }
    EXPECT_TRUE(found) << "seed " << seed;
  }
  EXPECT_GT(offsets.size(), 5u) << "the window should move";
}

TEST_F(TransformTest, RandomCropPadsWithFillReflectOrEdge) {
  const cv::Mat grey = constantImage(8, 8, 3, 0.5f);
  // Output as large as the padded image: exactly the image in a white frame.
  const cv::Mat framed =
      run(*make("RandomCrop", {{"size", 12}, {"padding", 2}, {"fill", 1.0}}), grey);
  cv::Mat expected;
  cv::copyMakeBorder(grey, expected, 2, 2, 2, 2, cv::BORDER_CONSTANT, cv::Scalar::all(1.0));
  EXPECT_TRUE(identical(framed, expected));
  // Model-size crops of a padded image show fill pixels for most offsets.
  int withFill = 0;
  for (std::uint64_t seed = 0; seed < 10; ++seed) {
    const cv::Mat out =
        run(*make("RandomCrop", {{"padding", 4}, {"fill", 1.0}}, context(3, 8, 8)), grey, seed);
    ASSERT_EQ(out.size(), cv::Size(8, 8));
    cv::Mat isFill = out.reshape(1, static_cast<int>(out.total() * 3)) == 1.0f;
    cv::Mat isImage = out.reshape(1, static_cast<int>(out.total() * 3)) == 0.5f;
    EXPECT_EQ(cv::countNonZero(isFill) + cv::countNonZero(isImage), 8 * 8 * 3);
    if (cv::countNonZero(isFill) > 0) ++withFill;
  }
  EXPECT_GE(withFill, 5);

  const cv::Mat ramp = rampImage(6, 6, 1);
  const cv::Mat edge =
      run(*make("RandomCrop", {{"size", 10}, {"padding", 2}, {"padding_mode", "edge"}}), ramp);
  EXPECT_FLOAT_EQ(px(edge, 0, 0), px(ramp, 0, 0));
  EXPECT_FLOAT_EQ(px(edge, 9, 9), px(ramp, 5, 5));
  const cv::Mat reflect =
      run(*make("RandomCrop", {{"size", 10}, {"padding", 2}, {"padding_mode", "reflect"}}), ramp);
  EXPECT_FLOAT_EQ(px(reflect, 2, 0), px(ramp, 0, 2));  // mirrored without repeating the edge
  EXPECT_FLOAT_EQ(px(reflect, 2, 1), px(ramp, 0, 1));
}

TEST_F(TransformTest, RandomCropPadIfNeededAndSmallImages) {
  const cv::Mat small = constantImage(4, 5, 1, 0.5f);
  const auto t =
      make("RandomCrop", {{"size", 7}, {"padding", 0}, {"pad_if_needed", true}}, context(1, 7, 7));
  const cv::Mat out = run(*t, small);
  EXPECT_EQ(out.size(), cv::Size(7, 7));
  EXPECT_EQ(cv::countNonZero(out == 0.5f), 4 * 5);
  // Even without pad_if_needed, an image smaller than expected still gives the promised size.
  const auto strict = make("RandomCrop", {{"size", 6}, {"padding", 0}}, context(1, 8, 8));
  EXPECT_EQ(run(*strict, small).size(), cv::Size(6, 6));
}

TEST_F(TransformTest, CheckReportsACropLargerThanTheInput) {
  const auto found = issues("RandomCrop", {{"size", 32}, {"padding", 0}}, context(1, 28, 28));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].param, "size");
  EXPECT_EQ(found[0].message,
            "32x32 is larger than the 28x28 input plus padding; lower size, add padding, or set "
            "pad_if_needed");
  EXPECT_TRUE(issues("RandomCrop", {{"size", 32}, {"padding", 2}}, context(1, 28, 28)).empty());
  EXPECT_TRUE(issues("RandomCrop", {{"size", 32}, {"padding", 0}, {"pad_if_needed", true}},
                     context(1, 28, 28))
                  .empty());
  EXPECT_TRUE(issues("RandomCrop", {{"padding", 0}}, context(1, 28, 28)).empty());
  EXPECT_THROW(make("RandomCrop", {{"size", 32}, {"padding", 0}}, context(1, 28, 28)), Error);
}

TEST_F(TransformTest, RandomResizedCropGivesTheRequestedSize) {
  const cv::Mat image = noiseImage(12, 20, 3, 3);
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    const cv::Mat out = run(*make("RandomResizedCrop", {{"size", {7, 5}}}), image, seed);
    EXPECT_EQ(out.size(), cv::Size(5, 7)) << seed;
    const cv::Mat flat =
        run(*make("RandomResizedCrop", {{"size", {7, 5}}}), constantImage(12, 20, 3, 0.75f), seed);
    EXPECT_LT(maxDiff(flat, constantImage(7, 5, 3, 0.75f)), 1e-5) << "content is the image's";
  }
  // The whole area at the image's own ratio and size: nothing changes.
  const cv::Mat square = noiseImage(9, 9, 1, 4);
  const cv::Mat whole =
      run(*make("RandomResizedCrop", {{"size", 9}, {"scale", {1.0, 1.0}}, {"ratio", {1.0, 1.0}}}),
          square);
  EXPECT_TRUE(identical(whole, square));
  // Impossible ratios fall back to a central crop.
  const cv::Mat fallback = run(
      *make("RandomResizedCrop", {{"size", {3, 9}}, {"scale", {1.0, 1.0}}, {"ratio", {3.0, 3.0}}}),
      square);
  EXPECT_TRUE(identical(fallback, square(cv::Rect(0, 3, 9, 3))));
}

TEST_F(TransformTest, FlipsMirrorThePixels) {
  const cv::Mat image = rampImage(5, 7, 3);
  const cv::Mat h = run(*make("HorizontalFlip"), image);
  const cv::Mat v = run(*make("VerticalFlip"), image);
  for (int r = 0; r < 5; ++r) {
    for (int c = 0; c < 7; ++c) {
      for (int ch = 0; ch < 3; ++ch) {
        EXPECT_EQ(px(h, r, c, ch), px(image, r, 6 - c, ch));
        EXPECT_EQ(px(v, r, c, ch), px(image, 4 - r, c, ch));
      }
    }
  }
}

TEST_F(TransformTest, RandomRotationTurnsAboutTheCentre) {
  const cv::Mat image = noiseImage(11, 13, 3, 5);
  EXPECT_TRUE(identical(run(*make("RandomRotation", {{"degrees", 0}}), image), image));
  const cv::Mat white = constantImage(21, 21, 1, 1.0f);
  std::set<double> sums;
  for (std::uint64_t seed = 0; seed < 8; ++seed) {
    const cv::Mat out = run(*make("RandomRotation", {{"degrees", 45}, {"fill", 0.0}}), white, seed);
    EXPECT_NEAR(px(out, 10, 10), 1.0f, 1e-5) << "the centre stays";
    EXPECT_LT(px(out, 0, 0), 1.0f) << "a corner turns out of the image and gets the fill";
    sums.insert(cv::sum(out)[0]);
  }
  EXPECT_EQ(sums.size(), 8u) << "the angle is random";
  const cv::Mat black = constantImage(21, 21, 1, 0.0f);
  const cv::Mat out = run(*make("RandomRotation", {{"degrees", 45}, {"fill", 1.0}}), black);
  EXPECT_GT(px(out, 0, 20), 0.0f);
}

TEST_F(TransformTest, RandomAffineShiftsScalesAndShears) {
  const cv::Mat image = noiseImage(8, 16, 3, 6);
  const Json none = {{"degrees", 0}, {"translate", {0, 0}}, {"scale", {1, 1}}, {"shear", 0}};
  EXPECT_TRUE(identical(run(*make("RandomAffine", none), image), image));

  // A horizontal shift only: whole pixels, the vacated columns filled.
  Json shift = none;
  shift["translate"] = {0.25, 0};
  shift["fill"] = 1.0;
  std::set<int> shifts;
  for (std::uint64_t seed = 0; seed < 12; ++seed) {
    const cv::Mat out = run(*make("RandomAffine", shift), image, seed);
    int matched = -100;
    for (int dx = -4; dx <= 4; ++dx) {
      const int w = 16 - std::abs(dx);
      const cv::Rect src(std::max(-dx, 0), 0, w, 8);
      const cv::Rect dst(std::max(dx, 0), 0, w, 8);
      if (maxDiff(out(dst), image(src)) < 1e-6) matched = dx;
    }
    ASSERT_NE(matched, -100) << "seed " << seed << " is not a whole-pixel shift";
    if (matched > 0) {
      EXPECT_FLOAT_EQ(px(out, 3, 0, 1), 1.0f);
    } else if (matched < 0) {
      EXPECT_FLOAT_EQ(px(out, 3, 15, 1), 1.0f);
    }
    shifts.insert(matched);
  }
  EXPECT_GT(shifts.size(), 3u);

  // Shrinking shows the fill around a constant image; zooming in never does.
  const cv::Mat grey = constantImage(16, 16, 1, 0.5f);
  Json shrink = none;
  shrink["scale"] = {0.5, 0.5};
  const cv::Mat small = run(*make("RandomAffine", shrink), grey);
  EXPECT_NEAR(px(small, 0, 0), 0.0f, 1e-6);
  EXPECT_NEAR(px(small, 8, 8), 0.5f, 1e-6);
  Json zoom = none;
  zoom["scale"] = {2, 2};
  EXPECT_LT(maxDiff(run(*make("RandomAffine", zoom), grey), grey), 1e-6);
  Json shear = none;
  shear["shear"] = 40;
  const cv::Mat odd = constantImage(15, 15, 1, 0.5f);
  int sheared = 0;
  for (std::uint64_t seed = 0; seed < 4; ++seed) {
    const cv::Mat out = run(*make("RandomAffine", shear), odd, seed);
    EXPECT_LT(maxDiff(out.row(7), odd.row(7)), 1e-6) << "the centre row does not move";
    if (px(out, 0, 0) < 0.4f || px(out, 0, 14) < 0.4f) ++sheared;
  }
  EXPECT_EQ(sheared, 4);
}

TEST_F(TransformTest, RandomAffineTranslateTakesOneOrTwoFractions) {
  EXPECT_TRUE(issues("RandomAffine", {{"translate", 0.2}}).empty());
  EXPECT_TRUE(issues("RandomAffine", {{"translate", {0.2, 0}}}).empty());
  const auto found = issues("RandomAffine", {{"translate", {0.1, 0.2, 0.3}}});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].param, "translate");
  EXPECT_THROW(resolve("RandomAffine", {{"translate", 1.5}}), Error);
}

// --- Colour -----------------------------------------------------------------------------------

TEST_F(TransformTest, ColorJitterWithZeroStrengthIsTheIdentity) {
  const Json zero = {{"brightness", 0}, {"contrast", 0}, {"saturation", 0}, {"hue", 0}};
  for (const int channels : {1, 3}) {
    const cv::Mat image = noiseImage(9, 9, channels, 8);
    for (std::uint64_t seed = 0; seed < 5; ++seed) {
      EXPECT_TRUE(identical(run(*make("ColorJitter", zero), image, seed), image));
    }
  }
}

TEST_F(TransformTest, ColorJitterBrightnessScalesTheImage) {
  const cv::Mat image = noiseImage(9, 9, 3, 9, 0.05f, 0.6f);  // no clipping at factor <= 1.5
  const Json params = {{"brightness", 0.5}, {"contrast", 0}, {"saturation", 0}, {"hue", 0}};
  std::set<double> factors;
  for (std::uint64_t seed = 0; seed < 6; ++seed) {
    const cv::Mat out = run(*make("ColorJitter", params), image, seed);
    cv::Mat ratio;
    cv::divide(out, image, ratio);
    double lo = 0, hi = 0;
    cv::minMaxLoc(ratio.reshape(1, 81 * 3), &lo, &hi);
    EXPECT_NEAR(lo, hi, 1e-5) << "one factor for every pixel";
    EXPECT_GE(lo, 0.5 - 1e-6);
    EXPECT_LE(hi, 1.5 + 1e-6);
    factors.insert(lo);
  }
  EXPECT_EQ(factors.size(), 6u);
}

TEST_F(TransformTest, ColorJitterContrastKeepsTheMeanAndScalesTheSpread) {
  const cv::Mat image = noiseImage(16, 16, 1, 10, 0.3f, 0.7f);
  const Json params = {{"brightness", 0}, {"contrast", 0.5}, {"saturation", 0}, {"hue", 0}};
  for (std::uint64_t seed = 0; seed < 5; ++seed) {
    const cv::Mat out = run(*make("ColorJitter", params), image, seed);
    EXPECT_NEAR(meanOf(out), meanOf(image), 1e-5);
    const double factor = stddevOf(out) / stddevOf(image);
    EXPECT_GE(factor, 0.5 - 1e-4);
    EXPECT_LE(factor, 1.5 + 1e-4);
  }
}

TEST_F(TransformTest, ColorJitterSaturationAndHueActOnColourOnly) {
  const Json colour = {{"brightness", 0}, {"contrast", 0}, {"saturation", 1.0}, {"hue", 0.5}};
  // Grey stays grey: a hue shift leaves it alone, and saturation blends it with its own luma
  // (torchvision's weights sum to 0.9999, hence the tolerance).
  const cv::Mat grey1 = noiseImage(8, 8, 1, 11);
  cv::Mat grey3;
  cv::merge(std::vector<cv::Mat>{grey1, grey1, grey1}, grey3);
  const Json hueOnly = {{"brightness", 0}, {"contrast", 0}, {"saturation", 0}, {"hue", 0.5}};
  for (std::uint64_t seed = 0; seed < 5; ++seed) {
    EXPECT_LT(maxDiff(run(*make("ColorJitter", hueOnly), grey3, seed), grey3), 1e-6);
    EXPECT_LT(maxDiff(run(*make("ColorJitter", colour), grey3, seed), grey3), 2e-4);
    EXPECT_TRUE(identical(run(*make("ColorJitter", colour, context(1)), grey1, seed), grey1));
  }
  // A hue shift of pure red keeps it fully saturated and bright but changes the colour.
  const cv::Mat red(4, 4, CV_32FC3, cv::Scalar(1, 0, 0));
  int changed = 0;
  for (std::uint64_t seed = 0; seed < 6; ++seed) {
    const cv::Mat out = run(*make("ColorJitter", hueOnly), red, seed);
    const cv::Vec3f p = out.at<cv::Vec3f>(1, 1);
    const float hi = std::max({p[0], p[1], p[2]});
    const float lo = std::min({p[0], p[1], p[2]});
    EXPECT_NEAR(hi, 1.0f, 1e-5);
    EXPECT_NEAR(lo, 0.0f, 1e-5);
    if (maxDiff(out, red) > 0.05) ++changed;
  }
  EXPECT_GE(changed, 4);
}

TEST_F(TransformTest, RandomGrayscaleGivesEqualChannels) {
  const cv::Mat image = noiseImage(6, 7, 3, 12);
  const cv::Mat out = run(*make("RandomGrayscale"), image);
  ASSERT_EQ(out.type(), CV_32FC3);
  for (int r = 0; r < 6; ++r) {
    for (int c = 0; c < 7; ++c) {
      EXPECT_EQ(px(out, r, c, 0), px(out, r, c, 1));
      EXPECT_EQ(px(out, r, c, 0), px(out, r, c, 2));
      const float luma =
          0.2989f * px(image, r, c, 0) + 0.587f * px(image, r, c, 1) + 0.114f * px(image, r, c, 2);
      EXPECT_NEAR(px(out, r, c, 0), luma, 1e-5);
    }
  }
  const cv::Mat one = noiseImage(6, 7, 1, 13);
  EXPECT_TRUE(identical(run(*make("RandomGrayscale"), one), one));
}

// --- Noise ------------------------------------------------------------------------------------

TEST_F(TransformTest, GaussianBlurSmoothsNoiseAndKeepsTheMean) {
  const cv::Mat image = noiseImage(32, 32, 3, 14);
  for (std::uint64_t seed = 0; seed < 3; ++seed) {
    const cv::Mat out =
        run(*make("GaussianBlur", {{"kernel_size", 5}, {"sigma", {1.0, 2.0}}}), image, seed);
    EXPECT_LT(stddevOf(out), 0.5 * stddevOf(image));
    EXPECT_NEAR(meanOf(out), meanOf(image), 0.01);
  }
  EXPECT_TRUE(identical(run(*make("GaussianBlur", {{"kernel_size", 1}}), image), image));
  const cv::Mat wide = run(*make("GaussianBlur", {{"kernel_size", {1, 7}}, {"sigma", 3}}), image);
  EXPECT_LT(stddevOf(wide), 0.7 * stddevOf(image));
}

TEST_F(TransformTest, CheckReportsAnEvenBlurKernel) {
  const auto found = issues("GaussianBlur", {{"kernel_size", 4}});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].param, "kernel_size");
  EXPECT_EQ(found[0].message, "must be odd, got 4x4");
  EXPECT_EQ(issues("GaussianBlur", {{"kernel_size", {3, 6}}})[0].message, "must be odd, got 3x6");
  EXPECT_TRUE(issues("GaussianBlur", {{"kernel_size", {3, 5}}}).empty());
}

TEST_F(TransformTest, GaussianNoiseAddsNoiseOfTheRequestedStd) {
  const cv::Mat image = noiseImage(16, 16, 3, 15);
  EXPECT_TRUE(identical(run(*make("GaussianNoise", {{"std", 0}}), image), image));
  const cv::Mat grey = constantImage(64, 64, 3, 0.5f);
  const cv::Mat out = run(*make("GaussianNoise", {{"std", 0.1}, {"clip", false}}), grey);
  EXPECT_NEAR(stddevOf(out), 0.1, 0.01);
  EXPECT_NEAR(meanOf(out), 0.5, 0.01);
  const cv::Mat loud = run(*make("GaussianNoise", {{"std", 0.5}, {"clip", true}}), grey);
  double lo = 0, hi = 0;
  cv::minMaxLoc(loud.reshape(1, static_cast<int>(loud.total() * 3)), &lo, &hi);
  EXPECT_EQ(lo, 0.0);
  EXPECT_EQ(hi, 1.0);
  const cv::Mat other = run(*make("GaussianNoise", {{"std", 0.1}, {"clip", false}}), grey, 2);
  EXPECT_FALSE(identical(out, other));
}

TEST_F(TransformTest, RandomErasingErasesABoxOfTheRequestedArea) {
  const cv::Mat grey = constantImage(40, 40, 3, 0.5f);
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    const cv::Mat out = run(*make("RandomErasing", {{"value", 1.0}}), grey, seed);
    cv::Mat erased;
    cv::extractChannel(out, erased, 0);
    erased = erased == 1.0f;
    const int count = cv::countNonZero(erased);
    const cv::Rect box = cv::boundingRect(erased);
    EXPECT_EQ(box.area(), count) << "one solid box, seed " << seed;
    const double fraction = count / 1600.0;
    // Rounding the box sides to whole pixels moves the area by at most one row and one column.
    EXPECT_GE(fraction, 0.02 - (box.width + box.height + 1) / 1600.0) << seed;
    EXPECT_LE(fraction, 0.33 + (box.width + box.height + 1) / 1600.0) << seed;
    EXPECT_EQ(cv::countNonZero(out.reshape(1, 4800) == 0.5f) + 3 * count, 4800);
  }
  // No box fits: nothing happens.
  const cv::Mat small = noiseImage(10, 10, 1, 16);
  EXPECT_TRUE(identical(
      run(*make("RandomErasing", {{"scale", {0.99, 1.0}}, {"ratio", {1, 1}}}), small), small));
}

TEST_F(TransformTest, RandomErasingRandomWritesNoise) {
  const cv::Mat grey = constantImage(40, 40, 3, 0.5f);
  const cv::Mat out =
      run(*make("RandomErasing", {{"value", "random"}, {"scale", {0.2, 0.3}}}), grey);
  cv::Mat changed;
  cv::extractChannel(out, changed, 1);
  changed = changed != 0.5f;
  const cv::Rect box = cv::boundingRect(changed);
  ASSERT_GT(box.area(), 0.15 * 1600);
  EXPECT_GT(stddevOf(out(box)), 0.1);
  EXPECT_NEAR(meanOf(out(box)), 0.5, 0.05) << "noise with the data's mean";
}

// --- Policies ---------------------------------------------------------------------------------

TEST_F(TransformTest, PoliciesKeepTheImageShapeAndFollowTheSeed) {
  for (const char* name : {"RandAugment", "TrivialAugmentWide"}) {
    for (const int channels : {1, 3}) {
      const cv::Mat image = noiseImage(16, 12, channels, 17);
      const auto t = make(name, Json::object(), context(channels));
      std::set<std::vector<float>> distinct;
      int changed = 0;
      for (std::uint64_t seed = 0; seed < 40; ++seed) {
        const cv::Mat out = run(*t, image, seed);
        ASSERT_EQ(out.size(), image.size()) << name;
        ASSERT_EQ(out.type(), image.type()) << name;
        EXPECT_TRUE(identical(out, run(*t, image, seed))) << name;
        const cv::Mat flat = out.reshape(1, 1);
        distinct.insert(std::vector<float>(flat.begin<float>(), flat.end<float>()));
        if (!identical(out, image)) ++changed;
      }
      EXPECT_GT(distinct.size(), 20u) << name << ": different seeds, different operations";
      EXPECT_GT(changed, 25) << name;
    }
  }
}

TEST_F(TransformTest, RandAugmentMagnitudeMustBeBelowTheBins) {
  const auto found = issues("RandAugment", {{"magnitude", 10}, {"num_magnitude_bins", 10}});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].param, "magnitude");
  EXPECT_TRUE(issues("RandAugment", {{"magnitude", 30}}).empty());
  // No operations: nothing changes.
  const cv::Mat image = noiseImage(8, 8, 3, 18);
  EXPECT_TRUE(identical(run(*make("RandAugment", {{"num_ops", 0}}), image), image));
}

TEST_F(TransformTest, RandAugmentStrengthGrowsWithMagnitude) {
  const cv::Mat image = noiseImage(16, 16, 3, 19, 0.2f, 0.8f);
  double weak = 0, strong = 0;
  for (std::uint64_t seed = 0; seed < 60; ++seed) {
    weak += cv::norm(run(*make("RandAugment", {{"num_ops", 1}, {"magnitude", 1}}), image, seed),
                     image, cv::NORM_L1);
    strong += cv::norm(run(*make("RandAugment", {{"num_ops", 1}, {"magnitude", 30}}), image, seed),
                       image, cv::NORM_L1);
  }
  EXPECT_GT(strong, 1.5 * weak);
}
