// Boxes through the augment pipeline (target::PixelTarget): every geometric transform moves an
// object's box with the image under the same draws, and a box a crop cuts mostly away is
// dropped (less than PixelTarget::minVisible of it left inside).
//
// The check is independent of the box code: the object is also drawn in a mask (class 1 on 0),
// which the same steps move by the mask's own, separately tested code (pixel_target_test.cpp).
// For whole-pixel moves (flips, crops, pads, shifts) the moved box must be the tight box of the
// moved mask's object pixels exactly; for resizes within the mask's nearest-neighbour rounding
// (a source pixel's width); for a rotation it must hold the object's pixels.
#include <gtest/gtest.h>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include "augment/batch_mix.h"
#include "augment/pipeline.h"
#include "augment/sample_rng.h"
#include "test_support.h"

using namespace netsmith;
using namespace netsmith::augment;

namespace {

struct BoxCase {
  cv::Mat image, mask;
  target::Box box;
};

/// A `w` x `h` scene with one object, the pixels [x0, x1) x [y0, y1).
BoxCase boxScene(int w, int h, int x0, int y0, int x1, int y1) {
  BoxCase c;
  c.image = cv::Mat(h, w, CV_32FC1, cv::Scalar(0.1));
  c.mask = cv::Mat(h, w, CV_8UC1, cv::Scalar(0));
  c.image(cv::Rect(x0, y0, x1 - x0, y1 - y0)).setTo(0.9);
  c.mask(cv::Rect(x0, y0, x1 - x0, y1 - y0)).setTo(1);
  c.box = {3, float(x0), float(y0), float(x1), float(y1), false, false};
  return c;
}

/// The tight box (edges) of the mask's class-1 pixels; empty when none.
std::optional<cv::Rect> objectPixels(const cv::Mat& mask) {
  cv::Mat object = mask == 1;
  if (cv::countNonZero(object) == 0) return std::nullopt;
  return cv::boundingRect(object);
}

Pipeline boxPipeline(const std::string& json, int side = 40) {
  Problems problems;
  TransformContext ctx;
  ctx.height = ctx.width = side;
  ctx.pixelTargets = true;
  auto p = Pipeline::fromJson(Json::parse(json), TransformRegistry::withBuiltins(), ctx, problems);
  EXPECT_TRUE(problems.empty()) << formatProblems(problems);
  return p;
}

/// Runs `json` on a scene with its mask and box; the moved box (if kept) and the mask.
struct Moved {
  std::vector<target::Box> boxes;
  cv::Mat mask, image;
};
Moved moveScene(const std::string& json, const BoxCase& scene, std::uint64_t seed, int side = 40) {
  const auto pipeline = boxPipeline(json, side);
  PixelTarget target;
  target.mask = scene.mask.clone();
  target.boxes = {scene.box};
  cv::Mat image = scene.image.clone();
  SampleRng rng(seed);
  pipeline.applyWithTarget(image, target, &rng);
  return {target.boxes, target.mask, image};
}

}  // namespace

TEST(BoxTargets, WholePixelMovesGiveTheTightBoxOfTheMovedObject) {
  // Flips, pads and crops, a shift: every box edge lands on a pixel edge of the moved mask.
  const std::vector<std::string> steps = {
      R"([{"transform": "HorizontalFlip", "p": 1}])",
      R"([{"transform": "VerticalFlip", "p": 1}])",
      R"([{"transform": "CenterCrop", "size": 30}])",
      R"([{"transform": "CenterCrop", "size": [48, 44]}])",
      R"([{"transform": "RandomCrop", "size": 32, "padding": 4}])",
      R"([{"transform": "RandomCrop", "size": 36, "padding": [2, 6], "padding_mode": "edge"}])",
      R"([{"transform": "Letterbox", "size": [40, 40]}])",
      R"([{"transform": "HorizontalFlip", "p": 1}, {"transform": "RandomCrop", "size": 30,
          "padding": 0}, {"transform": "VerticalFlip", "p": 1}])",
  };
  const BoxCase scene = boxScene(40, 40, 9, 14, 27, 31);
  int compared = 0;
  for (const auto& json : steps)
    for (std::uint64_t seed = 0; seed < 12; ++seed) {
      SCOPED_TRACE(json + " seed " + std::to_string(seed));
      const auto moved = moveScene(json, scene, seed);
      const auto object = objectPixels(moved.mask);
      ASSERT_TRUE(object.has_value());
      // The crops keep at least a quarter of this object's area (it is in the middle), and
      // whatever is kept is exactly the object's visible pixels.
      ASSERT_EQ(moved.boxes.size(), 1u);
      const auto& b = moved.boxes[0];
      EXPECT_EQ(b.cls, 3);
      EXPECT_FLOAT_EQ(b.x0, float(object->x));
      EXPECT_FLOAT_EQ(b.y0, float(object->y));
      EXPECT_FLOAT_EQ(b.x1, float(object->x + object->width));
      EXPECT_FLOAT_EQ(b.y1, float(object->y + object->height));
      ++compared;
    }
  EXPECT_EQ(compared, 96);
}

TEST(BoxTargets, ResizesAndResizedCropsScaleTheBoxWithTheImage) {
  // A resize samples the mask at pixel centres, so its object's edges round to whole output
  // pixels: the box (exact scaling) is within one output pixel of them.
  const BoxCase scene = boxScene(40, 40, 8, 12, 28, 30);
  const std::vector<std::string> steps = {
      R"([{"transform": "Resize", "size": [20, 30]}])",
      R"([{"transform": "Resize", "size": [64, 50]}])",
      R"([{"transform": "RandomResizedCrop", "size": 32, "scale": [0.6, 1.0]}])",
      R"([{"transform": "Letterbox", "size": [30, 60]}])",
  };
  for (const auto& json : steps)
    for (std::uint64_t seed = 0; seed < 10; ++seed) {
      SCOPED_TRACE(json + " seed " + std::to_string(seed));
      const auto moved = moveScene(json, scene, seed);
      const auto object = objectPixels(moved.mask);
      if (moved.boxes.empty()) {
        // Dropped only when the cut left under a quarter of the object.
        ASSERT_TRUE(json.find("RandomResizedCrop") != std::string::npos);
        continue;
      }
      ASSERT_TRUE(object.has_value());
      const auto& b = moved.boxes[0];
      EXPECT_NEAR(b.x0, object->x, 1.0);
      EXPECT_NEAR(b.y0, object->y, 1.0);
      EXPECT_NEAR(b.x1, object->x + object->width, 1.0);
      EXPECT_NEAR(b.y1, object->y + object->height, 1.0);
      EXPECT_EQ(moved.image.size(), moved.mask.size());
    }
  // The letterbox of a 40x40 scene into 30 x 60 (height x width): scaled by 0.75 to 30x30 and
  // put in the middle, 15 pixels from the left: x = 8 x 0.75 + 15 = 21, y = 12 x 0.75 = 9.
  const auto moved = moveScene(R"([{"transform": "Letterbox", "size": [30, 60]}])", scene, 0);
  ASSERT_EQ(moved.boxes.size(), 1u);
  EXPECT_FLOAT_EQ(moved.boxes[0].x0, 21.f);
  EXPECT_FLOAT_EQ(moved.boxes[0].y0, 9.f);
  EXPECT_FLOAT_EQ(moved.boxes[0].x1, 36.f);
  EXPECT_FLOAT_EQ(moved.boxes[0].y1, 22.5f);
  EXPECT_EQ(moved.image.cols, 60);
  EXPECT_EQ(moved.image.rows, 30);
}

TEST(BoxTargets, ACropKeepsTheVisiblePartAndDropsABoxMostlyCutAway) {
  // CenterCrop 30 of a 40-pixel scene cuts 5 pixels off each side.
  // An object at x [0, 10): 5 of its 10 columns stay (50% >= 25%): kept, cut to [0, 5).
  auto moved =
      moveScene(R"([{"transform": "CenterCrop", "size": 30}])", boxScene(40, 40, 0, 10, 10, 20), 0);
  ASSERT_EQ(moved.boxes.size(), 1u);
  EXPECT_FLOAT_EQ(moved.boxes[0].x0, 0.f);
  EXPECT_FLOAT_EQ(moved.boxes[0].x1, 5.f);
  EXPECT_FLOAT_EQ(moved.boxes[0].y0, 5.f);
  EXPECT_FLOAT_EQ(moved.boxes[0].y1, 15.f);
  // An object at x [0, 6): 1 of its 6 columns stays (17% < 25%): dropped, though a pixel
  // column of it is still in the image.
  moved =
      moveScene(R"([{"transform": "CenterCrop", "size": 30}])", boxScene(40, 40, 0, 10, 6, 20), 0);
  EXPECT_TRUE(moved.boxes.empty());
  EXPECT_TRUE(objectPixels(moved.mask).has_value());
  // Entirely outside: dropped.
  moved =
      moveScene(R"([{"transform": "CenterCrop", "size": 30}])", boxScene(40, 40, 0, 0, 4, 4), 0);
  EXPECT_TRUE(moved.boxes.empty());
}

TEST(BoxTargets, ARotationsBoxHoldsTheTurnedObject) {
  const BoxCase scene = boxScene(40, 40, 12, 10, 26, 30);
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    SCOPED_TRACE(seed);
    const auto moved = moveScene(
        R"([{"transform": "RandomAffine", "degrees": 40, "translate": 0.1, "scale": [0.8, 1.2]}])",
        scene, seed);
    ASSERT_EQ(moved.boxes.size(), 1u);
    const auto object = objectPixels(moved.mask);
    ASSERT_TRUE(object.has_value());
    const auto& b = moved.boxes[0];
    // The corners' bounds hold every pixel of the turned object (nearest neighbour may put a
    // pixel half a pixel out).
    EXPECT_LE(b.x0, object->x + 0.5);
    EXPECT_LE(b.y0, object->y + 0.5);
    EXPECT_GE(b.x1, object->x + object->width - 0.5);
    EXPECT_GE(b.y1, object->y + object->height - 0.5);
    // ... and is not much wider than them (the corners' bounds of a turned rectangle are its
    // pixels' bounds up to a pixel).
    EXPECT_LE(object->x - b.x0, 1.5);
    EXPECT_LE(b.x1 - (object->x + object->width), 1.5);
  }
}

TEST(BoxTargets, PhotometricStepsLeaveTheBoxesAloneAndShearingPoliciesAreRefused) {
  const BoxCase scene = boxScene(40, 40, 5, 6, 20, 25);
  const auto moved = moveScene(
      R"([{"transform": "ColorJitter", "brightness": 0.5}, {"transform": "GaussianBlur"},
          {"transform": "RandomErasing", "p": 1}])",
      scene, 3);
  ASSERT_EQ(moved.boxes.size(), 1u);
  EXPECT_EQ(moved.boxes[0], scene.box);
  Problems problems;
  TransformContext ctx;
  ctx.pixelTargets = true;
  Pipeline::fromJson(Json::parse(R"([{"transform": "TrivialAugmentWide"}])"),
                     TransformRegistry::withBuiltins(), ctx, problems);
  ASSERT_EQ(problems.size(), 1u);
}

// Mosaic: four images of the batch at half size in the quadrants, their boxes moved with them.
// Image k is dark with one square of brightness (k + 1) / 4 whose box has class k, so each
// moved box says which image it came from, and the picture under it must be that image's
// square (an exact 2x bilinear downscale of a square on even pixels keeps its value).
TEST(BoxTargets, MosaicPutsFourImagesAndTheirBoxesInTheQuadrants) {
  const int n = 4, side = 16;
  auto images = torch::zeros({n, 1, side, side});
  std::vector<std::vector<target::Box>> boxes(n);
  for (int k = 0; k < n; ++k) {
    const int x = 2 + 2 * k, y = 4 + 2 * (k % 2);
    images[k][0].narrow(0, y, 4).narrow(1, x, 4).fill_(float(k + 1) / 4);
    boxes[std::size_t(k)].push_back(
        {k, float(x), float(y), float(x + 4), float(y + 4), false, false});
  }
  SampleRng rng(7);
  augment::applyMosaic(images, boxes, 1.0, rng);
  for (int i = 0; i < n; ++i) {
    SCOPED_TRACE(i);
    // Four quadrants, one box each (every source image has one).
    ASSERT_EQ(boxes[std::size_t(i)].size(), 4u);
    // The first quadrant is the image itself.
    EXPECT_EQ(boxes[std::size_t(i)][0].cls, i);
    int perQuadrant[4] = {0, 0, 0, 0};
    for (const auto& b : boxes[std::size_t(i)]) {
      EXPECT_FLOAT_EQ(b.x1 - b.x0, 2.f);
      EXPECT_FLOAT_EQ(b.y1 - b.y0, 2.f);
      const int q = (b.y0 >= side / 2 ? 2 : 0) + (b.x0 >= side / 2 ? 1 : 0);
      ++perQuadrant[q];
      const auto under =
          images[i][0].narrow(0, std::int64_t(b.y0), 2).narrow(1, std::int64_t(b.x0), 2);
      EXPECT_NEAR(under.min().item<float>(), float(b.cls + 1) / 4, 1e-6);
      EXPECT_NEAR(under.max().item<float>(), float(b.cls + 1) / 4, 1e-6);
    }
    for (int q = 0; q < 4; ++q)
      EXPECT_EQ(perQuadrant[q], 1);
    // Nothing bright outside the boxes.
    EXPECT_NEAR(
        images[i].sum().item<float>(),
        [&] {
          float s = 0;
          for (const auto& b : boxes[std::size_t(i)])
            s += 4 * float(b.cls + 1) / 4;
          return s;
        }(),
        1e-4);
  }
  // Mosaic is refused where the batch has no boxes to move.
  auto plain = torch::zeros({2, 1, 8, 8});
  torch::Tensor none;
  augment::BatchMix mosaic;
  mosaic.kind = augment::BatchMix::Kind::Mosaic;
  EXPECT_THROW(augment::applyBatchMix(plain, none, {mosaic}, rng), Error);
}
