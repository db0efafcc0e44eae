// Pixel targets (segmentation masks) through the augment pipeline: the geometric transforms
// move the mask with the image under the same draws, the others leave it alone, and the
// transforms that cannot move a mask are refused by name when the task's target lies on the
// pixels (task::TargetSpec::spatial).
//
// The check is independent of the transforms' code: the image is painted from the mask (each
// class a grey level of its own), so wherever the transformed mask says "class k" over a whole
// 5x5 neighbourhood (wider than an interpolation's footprint at up to 4x zoom), the transformed
// image must show class k's grey level, and where the mask brought in new pixels (its fill) the
// image shows its own fill.
#include <gtest/gtest.h>

#include <opencv2/core.hpp>

#include "augment/pipeline.h"
#include "augment/sample_rng.h"
#include "test_support.h"

using namespace netsmith;
using namespace netsmith::augment;

namespace {

constexpr int kSide = 40;
constexpr int kBlock = 8;  // 5 x 5 blocks, classes 0..24

double greyOf(int cls) {
  return (cls + 1) / 40.0;
}

/// A mask of 8x8 blocks (class = block index) and the image painted from it.
void paint(cv::Mat& image, cv::Mat& mask, int channels) {
  mask.create(kSide, kSide, CV_8UC1);
  cv::Mat grey(kSide, kSide, CV_32FC1);
  for (int r = 0; r < kSide; ++r)
    for (int c = 0; c < kSide; ++c) {
      const int cls = (r / kBlock) * (kSide / kBlock) + c / kBlock;
      mask.at<std::uint8_t>(r, c) = static_cast<std::uint8_t>(cls);
      grey.at<float>(r, c) = static_cast<float>(greyOf(cls));
    }
  if (channels == 1) {
    image = grey;
  } else {
    cv::merge(std::vector<cv::Mat>{grey, grey, grey}, image);
  }
}

Pipeline build(const std::string& json, bool pixelTargets = true) {
  Problems problems;
  TransformContext ctx;
  ctx.height = ctx.width = kSide;
  ctx.pixelTargets = pixelTargets;
  auto p = Pipeline::fromJson(Json::parse(json), TransformRegistry::withBuiltins(), ctx, problems);
  EXPECT_TRUE(problems.empty()) << formatProblems(problems);
  return p;
}

struct Agreement {
  int checked = 0;    ///< pixels inside a class region of the moved mask
  int filled = 0;     ///< pixels inside the mask's fill
  std::string first;  ///< the first disagreement
};

/// Compares the moved image with the moved mask (see the file comment), within `tolerance`.
Agreement agreement(const cv::Mat& image, const cv::Mat& mask, double imageFill,
                    double tolerance = 1e-4) {
  Agreement a;
  std::vector<cv::Mat> planes;
  cv::split(image, planes);
  for (int r = 2; r + 2 < mask.rows; ++r)
    for (int c = 2; c + 2 < mask.cols; ++c) {
      const int k = mask.at<std::uint8_t>(r, c);
      bool uniform = true;
      for (int dr = -2; dr <= 2 && uniform; ++dr)
        for (int dc = -2; dc <= 2 && uniform; ++dc)
          uniform = mask.at<std::uint8_t>(r + dr, c + dc) == k;
      if (!uniform) continue;
      const double want = k == 255 ? imageFill : greyOf(k);
      for (const auto& plane : planes) {
        const double got = plane.at<float>(r, c);
        if (std::abs(got - want) > tolerance && a.first.empty())
          a.first = "at (" + std::to_string(r) + ", " + std::to_string(c) + ") the mask says " +
                    std::to_string(k) + " but the image shows " + std::to_string(got) +
                    " (expected " + std::to_string(want) + ")";
      }
      ++(k == 255 ? a.filled : a.checked);
    }
  return a;
}

}  // namespace

TEST(PixelTarget, GeometricTransformsMoveTheMaskWithTheImageUnderTheSameDraws) {
  const std::vector<std::string> pipelines = {
      R"([{"transform": "RandomResizedCrop", "size": 32, "scale": [0.2, 1.0]}])",
      R"([{"transform": "RandomCrop", "size": 40, "padding": 6}])",
      R"([{"transform": "RandomCrop", "size": 36, "padding": 6, "padding_mode": "reflect"}])",
      R"([{"transform": "HorizontalFlip", "p": 1}, {"transform": "VerticalFlip", "p": 1}])",
      R"([{"transform": "RandomRotation", "degrees": 40}])",
      R"([{"transform": "RandomAffine", "degrees": 20, "translate": [0.2, 0.1],
           "scale": [0.7, 1.3], "shear": 15}])",
      R"([{"transform": "Resize", "size": [24, 56]}, {"transform": "CenterCrop", "size": 48}])",
      // Everything at once, with the chances drawn (compared below with a tolerance: one
      // interpolation after another spreads an edge past the 5x5 neighbourhood).
      R"([{"transform": "RandomResizedCrop", "size": 36, "scale": [0.3, 1.0]},
          {"transform": "HorizontalFlip"}, {"transform": "RandomRotation", "degrees": 30, "p": 0.7},
          {"transform": "RandomAffine", "degrees": 10, "translate": 0.1, "p": 0.5},
          {"transform": "RandomCrop", "size": 36, "padding": 3}])",
  };
  for (const auto& json : pipelines) {
    const Pipeline pipeline = build(json);
    // Less than half the step between two classes' grey levels for the chained pipeline.
    const double tolerance = &json == &pipelines.back() ? 0.01 : 1e-4;
    int checked = 0, filled = 0;
    for (int channels : {1, 3}) {
      for (std::uint64_t seed = 0; seed < 40; ++seed) {
        cv::Mat image, mask;
        paint(image, mask, channels);
        cv::Mat plain = image.clone();
        PixelTarget target{mask, 255};
        SampleRng rng(seed), sameRng(seed);
        pipeline.applyWithTarget(image, target, &rng);
        pipeline.apply(plain, &sameRng);
        // The image is what the pipeline gives without a target: the same draws.
        ASSERT_EQ(cv::norm(image, plain, cv::NORM_INF), 0.0) << json << " seed " << seed;
        ASSERT_EQ(target.mask.size(), image.size()) << json;
        ASSERT_EQ(target.mask.type(), CV_8UC1) << json;
        const auto a = agreement(image, target.mask, 0.0, tolerance);
        ASSERT_TRUE(a.first.empty()) << json << " seed " << seed << ": " << a.first;
        checked += a.checked;
        filled += a.filled;
      }
    }
    // Many pixels were compared (the check is not vacuous): over 100 a sample.
    EXPECT_GT(checked, 80 * 100) << json;
    if (json.find("Rotation") != std::string::npos) {
      EXPECT_GT(filled, 0) << json;
    }
  }
}

// Whole-pixel moves (shifts, flips, crops with padding, a centre crop that pads) copy pixels
// without blending, so here image and mask must agree at every pixel, exactly: a mask one
// pixel off the image fails. The mask holds a value of its own at nearly every pixel.
TEST(PixelTarget, WholePixelMovesKeepEveryPixelOfTheMaskOnItsImagePixel) {
  const std::vector<std::string> pipelines = {
      R"([{"transform": "RandomAffine", "degrees": 0, "translate": [0.3, 0.2], "scale": [1, 1]}])",
      R"([{"transform": "HorizontalFlip"}, {"transform": "VerticalFlip"}])",
      R"([{"transform": "RandomCrop", "size": 36, "padding": 5}])",
      R"([{"transform": "RandomCrop", "size": 40, "padding": [3, 7], "padding_mode": "edge"}])",
      R"([{"transform": "CenterCrop", "size": [30, 50]}])",
  };
  for (const auto& json : pipelines) {
    const Pipeline pipeline = build(json);
    int filled = 0;
    for (std::uint64_t seed = 0; seed < 30; ++seed) {
      cv::Mat mask(kSide, kSide, CV_8UC1), image(kSide, kSide, CV_32FC1);
      for (int r = 0; r < kSide; ++r)
        for (int c = 0; c < kSide; ++c) {
          const int v = (r * 7 + c * 3) % 250;
          mask.at<std::uint8_t>(r, c) = static_cast<std::uint8_t>(v);
          image.at<float>(r, c) = static_cast<float>((v + 1) / 300.0);
        }
      PixelTarget target{mask, 255};
      SampleRng rng(seed);
      pipeline.applyWithTarget(image, target, &rng);
      ASSERT_EQ(target.mask.size(), image.size()) << json;
      for (int r = 0; r < image.rows; ++r)
        for (int c = 0; c < image.cols; ++c) {
          const int k = target.mask.at<std::uint8_t>(r, c);
          const double want = k == 255 ? 0.0 : (k + 1) / 300.0;
          filled += k == 255;
          ASSERT_NEAR(image.at<float>(r, c), want, 1e-6)
              << json << " seed " << seed << " at (" << r << ", " << c << ") mask " << k;
        }
    }
    if (json.find("Affine") != std::string::npos ||
        json.find("\"padding\": 5") != std::string::npos) {
      EXPECT_GT(filled, 0) << json;  // the fill was compared too
    }
  }
}

TEST(PixelTarget, EvaluationStepsMoveTheMaskToo) {
  const Pipeline pipeline =
      build(R"([{"transform": "HorizontalFlip", "p": 1}, {"transform": "Resize", "size": 20}])");
  cv::Mat image, mask;
  paint(image, mask, 1);
  PixelTarget target{mask, 255};
  pipeline.applyWithTarget(image, target, nullptr);  // evaluation: Resize only
  ASSERT_EQ(target.mask.size(), cv::Size(20, 20));
  EXPECT_EQ(target.mask.at<std::uint8_t>(0, 0), 0);  // not flipped
  EXPECT_EQ(target.mask.at<std::uint8_t>(19, 19), 24);
  EXPECT_TRUE(agreement(image, target.mask, 0.0).first.empty());
}

// A resized mask takes, for each pixel, the class under its centre in the source (the rule
// torchvision's NEAREST_EXACT and PIL follow), computed here by hand: plain floor-based nearest
// neighbour would shift the mask up to half a source pixel off the bilinearly resized image.
// (40 -> 24 and 40 -> 64 put no pixel centre exactly on a source pixel's edge.)
TEST(PixelTarget, AResizedMaskTakesTheClassUnderEachPixelCentre) {
  const Pipeline pipeline = build(R"([{"transform": "Resize", "size": [24, 64]}])");
  cv::Mat image, mask;
  paint(image, mask, 1);
  // Classes that change at every pixel, so any shift shows.
  for (int r = 0; r < kSide; ++r)
    for (int c = 0; c < kSide; ++c)
      mask.at<std::uint8_t>(r, c) = static_cast<std::uint8_t>(r * 3 + c % 7);
  const cv::Mat source = mask.clone();
  PixelTarget target{mask, 255};
  pipeline.applyWithTarget(image, target, nullptr);
  ASSERT_EQ(target.mask.size(), cv::Size(64, 24));
  for (int r = 0; r < 24; ++r)
    for (int c = 0; c < 64; ++c) {
      const int sr = static_cast<int>(std::floor((r + 0.5) * kSide / 24.0));
      const int sc = static_cast<int>(std::floor((c + 0.5) * kSide / 64.0));
      ASSERT_EQ(target.mask.at<std::uint8_t>(r, c), source.at<std::uint8_t>(sr, sc))
          << "at (" << r << ", " << c << ")";
    }
}

TEST(PixelTarget, PhotometricTransformsLeaveTheMaskAlone) {
  const Pipeline pipeline = build(R"([
      {"transform": "ColorJitter", "brightness": 0.4, "contrast": 0.4},
      {"transform": "GaussianBlur", "kernel_size": 5},
      {"transform": "GaussianNoise", "std": 0.05},
      {"transform": "RandomErasing", "p": 1},
      {"transform": "Normalize", "mean": [0.5], "std": [0.25]}])");
  for (std::uint64_t seed = 0; seed < 10; ++seed) {
    cv::Mat image, mask;
    paint(image, mask, 1);
    const cv::Mat before = mask.clone();
    cv::Mat plain = image.clone();
    PixelTarget target{mask, 255};
    SampleRng rng(seed), sameRng(seed);
    pipeline.applyWithTarget(image, target, &rng);
    pipeline.apply(plain, &sameRng);
    EXPECT_EQ(cv::norm(image, plain, cv::NORM_INF), 0.0) << seed;
    EXPECT_EQ(cv::norm(target.mask, before, cv::NORM_INF), 0.0) << seed;
  }
}

// CutMix moves the mask (the loader pastes its box; mask_targets_test.cpp).
TEST(PixelTarget, TransformsThatCannotMoveAMaskAreRefusedByName) {
  for (const std::string name : {"RandAugment", "TrivialAugmentWide", "MixUp"}) {
    const std::string json =
        R"([{"transform": "HorizontalFlip"}, {"transform": ")" + name + R"("}])";
    Problems problems;
    TransformContext ctx;
    ctx.pixelTargets = true;
    Pipeline::fromJson(Json::parse(json), TransformRegistry::withBuiltins(), ctx, problems);
    const std::string text = formatProblems(problems);
    EXPECT_NE(text.find("augment[1].transform: " + name +
                        " moves or mixes pixels but cannot move a mask or boxes with them"),
              std::string::npos)
        << text;
    // Without a pixel target (classification) they are fine.
    ctx.pixelTargets = false;
    problems.clear();
    Pipeline::fromJson(Json::parse(json), TransformRegistry::withBuiltins(), ctx, problems);
    EXPECT_TRUE(problems.empty()) << formatProblems(problems);
  }
}

TEST(PixelTarget, AMaskThatDoesNotFitTheImageIsNamed) {
  const Pipeline pipeline = build(R"([{"transform": "HorizontalFlip"}])");
  cv::Mat image, mask;
  paint(image, mask, 1);
  PixelTarget wrongSize{mask(cv::Rect(0, 0, 20, 20)).clone(), 255};
  SampleRng rng(1);
  const auto sizeError =
      testutil::errorOf([&] { pipeline.applyWithTarget(image, wrongSize, &rng); });
  EXPECT_NE(sizeError.find("image's size (40x40), got 20x20"), std::string::npos) << sizeError;
  cv::Mat wide;
  mask.convertTo(wide, CV_32S);
  PixelTarget wrongType{wide, 255};
  const auto typeError =
      testutil::errorOf([&] { pipeline.applyWithTarget(image, wrongType, &rng); });
  EXPECT_NE(typeError.find("got 40x40 of another type"), std::string::npos) << typeError;
}
