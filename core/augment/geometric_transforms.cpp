// Geometry family: Resize, CenterCrop, RandomCrop, RandomResizedCrop, HorizontalFlip,
// VerticalFlip, RandomRotation, RandomAffine (torchvision semantics, sizes as [height, width]).
// Letterbox. Each moves a pixel target (a mask, boxes) with the image under the same draws: a
// mask by nearest neighbour on the pixel centres the image's interpolation uses
// (INTER_NEAREST_EXACT for interpolating resizes: plain INTER_NEAREST floors and shifts a mask up
// to half a source pixel off the image; a "nearest" resize floors for both), new pixels the
// target's fill (the ignore index); boxes by the same map of the image's edges (moveBoxes).
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

/// Whether a target carries a mask to move (a target of boxes alone has none).
bool hasMask(const PixelTarget* target) {
  return target && !target->mask.empty();
}

/// Moves the boxes by `m`, a map of edge coordinates (a pixel i spans [i, i + 1]).
void moveBoxesByEdges(PixelTarget& target, const cv::Matx23d& m, cv::Size size) {
  if (target.boxes.empty()) return;
  std::vector<target::Box> kept;
  kept.reserve(target.boxes.size());
  for (auto box : target.boxes) {
    const std::array<cv::Point2d, 4> corners{
        cv::Point2d{box.x0, box.y0}, {box.x1, box.y0}, {box.x0, box.y1}, {box.x1, box.y1}};
    double x0 = 1e300, y0 = 1e300, x1 = -1e300, y1 = -1e300;
    for (const auto& c : corners) {
      const double x = m(0, 0) * c.x + m(0, 1) * c.y + m(0, 2);
      const double y = m(1, 0) * c.x + m(1, 1) * c.y + m(1, 2);
      x0 = std::min(x0, x), x1 = std::max(x1, x), y0 = std::min(y0, y), y1 = std::max(y1, y);
    }
    const double whole = (x1 - x0) * (y1 - y0);
    x0 = std::clamp(x0, 0.0, double(size.width)), x1 = std::clamp(x1, 0.0, double(size.width));
    y0 = std::clamp(y0, 0.0, double(size.height)), y1 = std::clamp(y1, 0.0, double(size.height));
    const double visible = (x1 - x0) * (y1 - y0);
    // A box shrunk below a pixel by a resize stays: it is still an object the model is
    // trained and scored on (only what a cut leaves outside the image goes).
    if (!(whole > 0) || !(visible > 0) || visible < target.minVisible * whole) continue;
    box.x0 = float(x0), box.y0 = float(y0), box.x1 = float(x1), box.y1 = float(y1);
    kept.push_back(box);
  }
  target.boxes = std::move(kept);
}

/// The boxes shifted by (dx, dy) into an image of `size` (crops and pads).
void shiftBoxes(PixelTarget* target, double dx, double dy, cv::Size size) {
  if (target) moveBoxesByEdges(*target, {1, 0, dx, 0, 1, dy}, size);
}

/// The boxes scaled from an image of `from` to one of `to` (resizes).
void scaleBoxes(PixelTarget* target, cv::Size from, cv::Size to) {
  if (target && from != to)
    moveBoxesByEdges(
        *target, {double(to.width) / from.width, 0, 0, 0, double(to.height) / from.height, 0}, to);
}

using schema::Params;
using schema::ParamSpec;

ParamSpec sizeSpec(const std::string& help) {
  return ParamSpec::intPair("size", "auto", help + "; \"auto\" uses the model input size")
      .atLeast(1)
      .orKeywords({"auto"})
      .inUnit("px");
}

/// The requested output size as cv::Size (width, height).
cv::Size targetSize(const Params& p, const TransformContext& ctx) {
  if (p.isAuto("size")) return {ctx.width, ctx.height};
  const auto hw = p.pair("size");
  return {static_cast<int>(hw[1]), static_cast<int>(hw[0])};
}

std::string sizeText(int height, int width) {
  return std::to_string(height) + "x" + std::to_string(width);
}

int interpolationFlag(const std::string& name) {
  if (name == "nearest") return cv::INTER_NEAREST;
  if (name == "bicubic") return cv::INTER_CUBIC;
  if (name == "area") return cv::INTER_AREA;
  return cv::INTER_LINEAR;
}

void resizeTo(cv::Mat& image, cv::Size size, int interpolation) {
  if (image.size() == size) return;
  cv::Mat out;
  cv::resize(image, out, size, 0, 0, interpolation);
  image = out;
  if (interpolation == cv::INTER_CUBIC) clampUnit(image);
}

/// Copies the region out, so later in-place transforms see a continuous image of their own.
void cropTo(cv::Mat& image, int top, int left, cv::Size size) {
  image = image(cv::Rect(left, top, size.width, size.height)).clone();
}

/// Warps the image with `forward` (its fill for new pixels) and the target, when given, the same
/// way by nearest neighbour (its fill).
void warpImageAndTarget(cv::Mat& image, PixelTarget* target, const cv::Matx23d& forward,
                        double fill) {
  warpWithFill(image, forward, fill);
  if (hasMask(target)) warpWithFill(target->mask, forward, target->fill, cv::INTER_NEAREST);
  if (target) moveBoxes(*target, forward, image.size());
}

/// torchvision center_crop: pads with `fill` (black) when the crop is larger than the image.
/// Returns where the image's old origin is in the result (x, y).
cv::Point centerCrop(cv::Mat& image, cv::Size size, double fill = 0.0) {
  const int padW = std::max(size.width - image.cols, 0);
  const int padH = std::max(size.height - image.rows, 0);
  padConstant(image, padH / 2, (padH + 1) / 2, padW / 2, (padW + 1) / 2, fill);
  const int top = static_cast<int>(std::nearbyint((image.rows - size.height) / 2.0));
  const int left = static_cast<int>(std::nearbyint((image.cols - size.width) / 2.0));
  cropTo(image, top, left, size);
  return {padW / 2 - left, padH / 2 - top};
}

TransformDef resizeDef() {
  TransformDef def;
  def.name = "Resize";
  def.group = "Geometry";
  def.help = "resizes to a fixed size, ignoring the aspect ratio";
  def.schema = {
      sizeSpec("output size [height, width]; one number for a square"),
      ParamSpec::choice("interpolation", "bilinear", {"bilinear", "nearest", "bicubic", "area"},
                        "how new pixels are computed"),
  };
  def.deterministic = true;
  def.setsSize = true;
  def.anyDepth = true;
  def.targets = TargetEffect::Moves;
  def.build = [](const Params& p, const TransformContext& ctx) -> std::unique_ptr<Transform> {
    const cv::Size size = targetSize(p, ctx);
    const int interpolation = interpolationFlag(p.text("interpolation"));
    return std::make_unique<GeometricTransform>([size, interpolation](
                                                    cv::Mat& img, PixelTarget* target, SampleRng&) {
      scaleBoxes(target, img.size(), size);
      resizeTo(img, size, interpolation);
      // The mask samples where the image does: a "nearest" image floors (INTER_NEAREST),
      // the interpolating ones sample pixel centres (INTER_NEAREST_EXACT).
      if (hasMask(target))
        resizeTo(target->mask, size,
                 interpolation == cv::INTER_NEAREST ? cv::INTER_NEAREST : cv::INTER_NEAREST_EXACT);
    });
  };
  return def;
}

TransformDef centerCropDef() {
  TransformDef def;
  def.name = "CenterCrop";
  def.group = "Geometry";
  def.help = "cuts the central region; pads with black where the image is smaller";
  def.schema = {sizeSpec("crop size [height, width]; one number for a square")};
  def.deterministic = true;
  def.setsSize = true;
  def.anyDepth = true;  // pads with 0, black at any depth
  def.targets = TargetEffect::Moves;
  def.build = [](const Params& p, const TransformContext& ctx) -> std::unique_ptr<Transform> {
    const cv::Size size = targetSize(p, ctx);
    return std::make_unique<GeometricTransform>(
        [size](cv::Mat& img, PixelTarget* target, SampleRng&) {
          const cv::Point origin = centerCrop(img, size);
          if (hasMask(target)) centerCrop(target->mask, size, target->fill);
          shiftBoxes(target, origin.x, origin.y, size);
        });
  };
  return def;
}

int borderMode(const std::string& paddingMode) {
  if (paddingMode == "reflect") return cv::BORDER_REFLECT_101;  // torchvision "reflect"
  if (paddingMode == "edge") return cv::BORDER_REPLICATE;
  return cv::BORDER_CONSTANT;
}

TransformDef randomCropDef() {
  TransformDef def;
  def.name = "RandomCrop";
  def.group = "Geometry";
  def.help = "pads the image, then cuts a region of the given size at a random place";
  def.schema = {
      sizeSpec("crop size [height, width]; one number for a square"),
      ParamSpec::intPair("padding", 4,
                         "pixels added [top and bottom, left and right] before cropping")
          .atLeast(0)
          .inUnit("px"),
      fillParam(),
      ParamSpec::choice("padding_mode", "constant", {"constant", "reflect", "edge"},
                        "constant: fill; reflect: mirror without the edge; edge: repeat the edge"),
      ParamSpec::boolean("pad_if_needed", false, "pad images smaller than the crop size"),
  };
  def.setsSize = true;
  def.targets = TargetEffect::Moves;
  def.check = [](const Params& p, const TransformContext& ctx) {
    std::vector<TransformIssue> issues;
    if (p.flag("pad_if_needed")) return issues;
    const cv::Size size = targetSize(p, ctx);
    const auto pad = p.pair("padding");
    if (size.height > ctx.height + 2 * pad[0] || size.width > ctx.width + 2 * pad[1]) {
      issues.push_back({"size", sizeText(size.height, size.width) + " is larger than the " +
                                    sizeText(ctx.height, ctx.width) +
                                    " input plus padding; lower size, add padding, or set "
                                    "pad_if_needed"});
    }
    return issues;
  };
  def.build = [](const Params& p, const TransformContext& ctx) -> std::unique_ptr<Transform> {
    const cv::Size size = targetSize(p, ctx);
    const auto pad = p.pair("padding");
    const int padH = static_cast<int>(pad[0]);
    const int padW = static_cast<int>(pad[1]);
    const double fill = p.real("fill");
    const int mode = borderMode(p.text("padding_mode"));
    const bool padIfNeeded = p.flag("pad_if_needed");
    return std::make_unique<GeometricTransform>(
        [=](cv::Mat& img, PixelTarget* target, SampleRng& rng) {
          // The target is padded the same way (reflect and edge mirror or repeat its classes;
          // a constant pad is its fill).
          const auto padBy = [&](int vertical, int horizontal) {
            cv::Mat out;
            cv::copyMakeBorder(img, out, vertical, vertical, horizontal, horizontal, mode,
                               cv::Scalar::all(fill));
            img = out;
            shiftBoxes(target, horizontal, vertical, img.size());
            if (!hasMask(target)) return;
            cv::Mat mask;  // a buffer of its own: `out` is the image's now
            cv::copyMakeBorder(target->mask, mask, vertical, vertical, horizontal, horizontal, mode,
                               cv::Scalar::all(target->fill));
            target->mask = mask;
          };
          if (padH > 0 || padW > 0) padBy(padH, padW);
          // As torchvision: a missing amount d is added on both sides.
          if (padIfNeeded && img.cols < size.width) padBy(0, size.width - img.cols);
          if (padIfNeeded && img.rows < size.height) padBy(size.height - img.rows, 0);
          // An image smaller than `check` assumed still gets a crop of the promised size.
          if (img.cols < size.width || img.rows < size.height) {
            const int dw = std::max(size.width - img.cols, 0);
            const int dh = std::max(size.height - img.rows, 0);
            padConstant(img, dh / 2, dh - dh / 2, dw / 2, dw - dw / 2, fill);
            if (hasMask(target))
              padConstant(target->mask, dh / 2, dh - dh / 2, dw / 2, dw - dw / 2, target->fill);
            shiftBoxes(target, dw / 2, dh / 2, img.size());
          }
          const auto top = static_cast<int>(rng.integer(0, img.rows - size.height));
          const auto left = static_cast<int>(rng.integer(0, img.cols - size.width));
          cropTo(img, top, left, size);
          if (hasMask(target)) cropTo(target->mask, top, left, size);
          shiftBoxes(target, -left, -top, size);
        });
  };
  return def;
}

/// torchvision RandomResizedCrop.get_params: the region (x, y, w, h) to cut.
cv::Rect resizedCropRegion(cv::Size image, std::array<double, 2> scale, std::array<double, 2> ratio,
                           SampleRng& rng) {
  const int height = image.height;
  const int width = image.width;
  const double area = static_cast<double>(height) * width;
  const double logLo = std::log(ratio[0]);
  const double logHi = std::log(ratio[1]);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double targetArea = area * rng.uniform(scale[0], scale[1]);
    const double aspect = std::exp(rng.uniform(logLo, logHi));
    const int w = static_cast<int>(std::lround(std::sqrt(targetArea * aspect)));
    const int h = static_cast<int>(std::lround(std::sqrt(targetArea / aspect)));
    if (w > 0 && h > 0 && w <= width && h <= height) {
      const auto top = static_cast<int>(rng.integer(0, height - h));
      const auto left = static_cast<int>(rng.integer(0, width - w));
      return {left, top, w, h};
    }
  }
  // Fallback: the largest central crop within the ratio range.
  const double inRatio = static_cast<double>(width) / height;
  int w = width;
  int h = height;
  if (inRatio < ratio[0]) {
    h = std::max(1, static_cast<int>(std::lround(w / ratio[0])));
  } else if (inRatio > ratio[1]) {
    w = std::max(1, static_cast<int>(std::lround(h * ratio[1])));
  }
  return {(width - w) / 2, (height - h) / 2, w, h};
}

/// RandomResizedCrop as a cut (the region, drawn from the image size alone) and what follows it
/// (the resize), so a loader can decode just the region: Transform::cutsRegion.
class ResizedCrop : public Transform {
 public:
  ResizedCrop(cv::Size size, std::array<double, 2> scale, std::array<double, 2> ratio)
      : m_size(size), m_scale(scale), m_ratio(ratio) {}
  void apply(cv::Mat& image, SampleRng& rng) const override { cutImage(image, rng); }
  void applyWithTarget(cv::Mat& image, PixelTarget& target, SampleRng& rng) const override {
    const cv::Rect region = cutImage(image, rng);
    if (hasMask(&target)) {
      cv::Mat mask = target.mask(region).clone();
      resizeTo(mask, m_size, cv::INTER_NEAREST_EXACT);
      target.mask = mask;
    }
    shiftBoxes(&target, -region.x, -region.y, region.size());
    scaleBoxes(&target, region.size(), m_size);
  }
  bool cutsRegion() const override { return true; }
  cv::Rect regionOf(cv::Size image, SampleRng& rng) const override {
    return resizedCropRegion(image, m_scale, m_ratio, rng);
  }
  void finishCut(cv::Mat& region, SampleRng&) const override {
    if (region.size() == m_size) {
      region = region.clone();  // an image of its own for the in-place steps after it
      return;
    }
    resizeTo(region, m_size, cv::INTER_LINEAR);
  }

 private:
  /// The cut and its resize on the image; the region cut.
  cv::Rect cutImage(cv::Mat& image, SampleRng& rng) const {
    const cv::Rect region = regionOf(image.size(), rng);
    cv::Mat cut = image(region);
    finishCut(cut, rng);
    image = cut;
    return region;
  }

  cv::Size m_size;
  std::array<double, 2> m_scale;
  std::array<double, 2> m_ratio;
};

TransformDef randomResizedCropDef() {
  TransformDef def;
  def.name = "RandomResizedCrop";
  def.group = "Geometry";
  def.help = "cuts a region of random area and aspect ratio and resizes it to the given size";
  def.schema = {
      sizeSpec("output size [height, width]; one number for a square"),
      ParamSpec::floatPair("scale", Json::array({0.08, 1.0}),
                           "range of the region's area, as a fraction of the image")
          .above(0)
          .atMost(1),
      ParamSpec::floatPair("ratio", Json::array({3.0 / 4.0, 4.0 / 3.0}),
                           "range of the region's aspect ratio (width / height)")
          .above(0),
  };
  def.setsSize = true;
  def.anyDepth = true;
  def.targets = TargetEffect::Moves;
  def.build = [](const Params& p, const TransformContext& ctx) -> std::unique_ptr<Transform> {
    const cv::Size size = targetSize(p, ctx);
    const auto scale = p.range("scale");
    const auto ratio = p.range("ratio");
    return std::make_unique<ResizedCrop>(size, scale, ratio);
  };
  return def;
}

TransformDef flipDef(const std::string& name, const std::string& help, int flipCode) {
  TransformDef def;
  def.name = name;
  def.group = "Geometry";
  def.help = help;
  def.defaultProbability = 0.5;
  def.anyDepth = true;
  def.targets = TargetEffect::Moves;
  def.build = [flipCode](const Params&, const TransformContext&) -> std::unique_ptr<Transform> {
    return std::make_unique<GeometricTransform>(
        [flipCode](cv::Mat& img, PixelTarget* target, SampleRng&) {
          cv::flip(img, img, flipCode);
          if (hasMask(target)) cv::flip(target->mask, target->mask, flipCode);
          // flipCode 1 mirrors x (x -> w - x on the edges), 0 mirrors y.
          if (target)
            moveBoxesByEdges(*target,
                             flipCode == 1 ? cv::Matx23d(-1, 0, img.cols, 0, 1, 0)
                                           : cv::Matx23d(1, 0, 0, 0, -1, img.rows),
                             img.size());
        });
  };
  return def;
}

TransformDef letterboxDef() {
  TransformDef def;
  def.name = "Letterbox";
  def.group = "Geometry";
  def.help =
      "resizes to fit inside the given size keeping the aspect ratio, then pads the rest "
      "evenly with the fill (as detectors' letterbox)";
  def.schema = {sizeSpec("output size [height, width]; one number for a square"), fillParam()};
  def.deterministic = true;
  def.setsSize = true;
  def.targets = TargetEffect::Moves;
  def.build = [](const Params& p, const TransformContext& ctx) -> std::unique_ptr<Transform> {
    const cv::Size size = targetSize(p, ctx);
    const double fill = p.real("fill");
    return std::make_unique<GeometricTransform>([size, fill](cv::Mat& img, PixelTarget* target,
                                                             SampleRng&) {
      const double scale = std::min(double(size.width) / img.cols, double(size.height) / img.rows);
      const cv::Size inner(std::clamp(int(std::lround(img.cols * scale)), 1, size.width),
                           std::clamp(int(std::lround(img.rows * scale)), 1, size.height));
      const int left = (size.width - inner.width) / 2;
      const int top = (size.height - inner.height) / 2;
      const int right = size.width - inner.width - left;
      const int bottom = size.height - inner.height - top;
      scaleBoxes(target, img.size(), inner);
      shiftBoxes(target, left, top, size);
      resizeTo(img, inner, cv::INTER_LINEAR);
      padConstant(img, top, bottom, left, right, fill);
      if (hasMask(target)) {
        resizeTo(target->mask, inner, cv::INTER_NEAREST_EXACT);
        padConstant(target->mask, top, bottom, left, right, target->fill);
      }
    });
  };
  return def;
}

TransformDef randomRotationDef() {
  TransformDef def;
  def.name = "RandomRotation";
  def.group = "Geometry";
  def.help = "rotates about the centre by an angle drawn from [-degrees, degrees]";
  def.schema = {
      ParamSpec::real("degrees", 15.0, "largest rotation either way")
          .atLeast(0)
          .atMost(180)
          .inUnit("deg"),
      fillParam(),
  };
  def.targets = TargetEffect::Moves;
  def.build = [](const Params& p, const TransformContext&) -> std::unique_ptr<Transform> {
    const double degrees = p.real("degrees");
    const double fill = p.real("fill");
    return std::make_unique<GeometricTransform>(
        [=](cv::Mat& img, PixelTarget* target, SampleRng& rng) {
          const double angle = rng.uniform(-degrees, degrees);
          warpImageAndTarget(img, target, affineMatrix(imageCenter(img), angle, {0, 0}, 1.0, 0, 0),
                             fill);
        });
  };
  return def;
}

TransformDef randomAffineDef() {
  TransformDef def;
  def.name = "RandomAffine";
  def.group = "Geometry";
  def.help = "random rotation, shift, zoom and horizontal shear about the centre";
  def.schema = {
      ParamSpec::real("degrees", 10.0, "largest rotation either way")
          .atLeast(0)
          .atMost(180)
          .inUnit("deg"),
      // A list, not a range: [0.2, 0] (horizontal shifts only) is a valid request.
      ParamSpec::floatList("translate", Json::array({0.1, 0.1}),
                           "largest shift [horizontal, vertical] as a fraction of width, height; "
                           "one number for both")
          .atLeast(0)
          .atMost(1),
      ParamSpec::floatPair("scale", Json::array({0.9, 1.1}), "range of the zoom factor").above(0),
      ParamSpec::real("shear", 0.0, "largest horizontal shear either way")
          .atLeast(0)
          .atMost(80)
          .inUnit("deg"),
      fillParam(),
  };
  def.check = [](const Params& p, const TransformContext&) {
    std::vector<TransformIssue> issues;
    const auto translate = p.list("translate");
    if (translate.size() > 2) {
      issues.push_back({"translate", "expects one number or [horizontal, vertical], got " +
                                         std::to_string(translate.size()) + " values"});
    }
    return issues;
  };
  def.targets = TargetEffect::Moves;
  def.build = [](const Params& p, const TransformContext&) -> std::unique_ptr<Transform> {
    const double degrees = p.real("degrees");
    const auto list = p.list("translate");
    const std::array<double, 2> translate{list.at(0), list.size() > 1 ? list[1] : list[0]};
    const auto scale = p.range("scale");
    const double shear = p.real("shear");
    const double fill = p.real("fill");
    return std::make_unique<GeometricTransform>(
        [=](cv::Mat& img, PixelTarget* target, SampleRng& rng) {
          const double angle = rng.uniform(-degrees, degrees);
          const double maxDx = translate[0] * img.cols;
          const double maxDy = translate[1] * img.rows;
          // Whole-pixel shifts, as torchvision.
          const double dx = std::nearbyint(rng.uniform(-maxDx, maxDx));
          const double dy = std::nearbyint(rng.uniform(-maxDy, maxDy));
          const double zoom = rng.uniform(scale[0], scale[1]);
          const double shearX = rng.uniform(-shear, shear);
          warpImageAndTarget(
              img, target, affineMatrix(imageCenter(img), angle, {dx, dy}, zoom, shearX, 0), fill);
        });
  };
  return def;
}

}  // namespace

void moveBoxes(PixelTarget& target, const cv::Matx23d& forward, cv::Size size) {
  // The same map on the edges: x_edge = x_centre + 0.5 on both sides.
  const cv::Matx23d& m = forward;
  moveBoxesByEdges(target,
                   {m(0, 0), m(0, 1), m(0, 2) + 0.5 - 0.5 * (m(0, 0) + m(0, 1)), m(1, 0), m(1, 1),
                    m(1, 2) + 0.5 - 0.5 * (m(1, 0) + m(1, 1))},
                   size);
}

void moveBoxesOnEdges(PixelTarget& target, const cv::Matx23d& edgeMap, cv::Size size) {
  moveBoxesByEdges(target, edgeMap, size);
}

void registerGeometricTransforms(TransformRegistry& registry) {
  registry.add(resizeDef());
  registry.add(centerCropDef());
  registry.add(randomCropDef());
  registry.add(randomResizedCropDef());
  registry.add(flipDef("HorizontalFlip", "mirrors left and right", 1));
  registry.add(flipDef("VerticalFlip", "mirrors top and bottom", 0));
  registry.add(letterboxDef());
  registry.add(randomRotationDef());
  registry.add(randomAffineDef());
}

}  // namespace netsmith::augment
