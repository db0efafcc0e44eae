#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <opencv2/core/mat.hpp>

#include "augment/sample_rng.h"
#include "common/named_registry.h"
#include "schema/param_schema.h"
#include "target/pixel_target.h"

namespace netsmith::augment {

/// The pixel target (core/target) as the transforms take and move it.
using target::PixelTarget;

/// Moves the boxes of `target` by the affine map `forward` of pixel centres (cv::warpAffine's
/// matrix) into an image of `size`, with the visible-area rule above.
void moveBoxes(PixelTarget& target, const cv::Matx23d& forward, cv::Size size);
/// moveBoxes() with a map of edge coordinates (a pixel i spans [i, i + 1]): resizes and crops.
void moveBoxesOnEdges(PixelTarget& target, const cv::Matx23d& edgeMap, cv::Size size);

/// A per-sample transform. Images are CV_32FC1 or CV_32FC3 (RGB order), values in [0, 1]
/// (until Normalize runs), of any size; transforms whose def says `anyDepth` also get CV_8U
/// images (0..255) when they lead the pipeline. A transform may change the size (crops,
/// resizes) but never the channel count. It must draw randomness only from `rng`.
class Transform {
 public:
  virtual ~Transform() = default;
  virtual void apply(cv::Mat& image, SampleRng& rng) const = 0;
  /// apply() with a pixel target beside the image, drawing exactly what apply() draws. The
  /// default leaves the target alone (what every transform but the geometric ones does).
  virtual void applyWithTarget(cv::Mat& image, PixelTarget& /*target*/, SampleRng& rng) const {
    apply(image, rng);
  }

  /// Transforms that start by cutting out a region chosen from the image size alone
  /// (RandomResizedCrop) say so; for them apply() is regionOf(), the cut, then finishCut(), with
  /// the same draws, so a loader can decode only the region (data/jpeg_decode.h).
  virtual bool cutsRegion() const { return false; }
  virtual cv::Rect regionOf(cv::Size image, SampleRng&) const { return {{0, 0}, image}; }
  virtual void finishCut(cv::Mat&, SampleRng&) const {}
};

/// What a transform may depend on besides its parameters.
struct TransformContext {
  int channels = 1;  ///< model input channels (1 or 3)
  int height = 28;   ///< model input size
  int width = 28;
  std::vector<double> mean;  ///< resolved normalisation, one per channel (Normalize "auto")
  std::vector<double> std;
  /// The task's target lies on the pixels (task::TargetSpec::spatial: masks): transforms that
  /// move pixels without moving a target are refused by name.
  bool pixelTargets = false;
};

/// What a transform does to a target on the pixels (a mask).
enum class TargetEffect {
  None,   ///< leaves it alone: colour, noise, erasing, Normalize
  Moves,  ///< moves it with the image, same draws (flips, crops, resizes, rotation, affine)
  Breaks  ///< moves pixels but cannot move a target (policies with shears; batch mixes)
};

/// A parameter that does not fit the context, e.g. {"size", "32x32 is larger than ..."}.
struct TransformIssue {
  std::string param;
  std::string message;
};

/// Everything Netsmith knows about one transform type, declared in one place.
struct TransformDef {
  std::string name;   ///< "RandomCrop"
  std::string group;  ///< "Geometry", "Colour", "Noise", "Policy", "Batch", "Normalise"
  std::string help;
  schema::ParamSchema schema;  ///< besides the common "p" and "enabled"
  double defaultProbability = 1.0;
  /// Part of the validation/test pipeline too (Resize, CenterCrop, Normalize).
  bool deterministic = false;
  /// Produces an explicit output size, so images are not fitted to the model size before it.
  bool setsSize = false;
  /// Pure geometry that works on CV_8U images as on floats (crops, flips, linear resizes): at
  /// the start of a pipeline the loader runs it on the decoded bytes, before the conversion to
  /// floats, as torchvision does on PIL images (a 400x300 JPEG cut to 224x224 is converted at
  /// 224x224, not at 400x300).
  bool anyDepth = false;
  /// Works on whole batches of tensors (MixUp, CutMix): handled by the loader, `build` unused.
  bool batchLevel = false;
  TargetEffect targets = TargetEffect::None;
  /// Optional context checks (crop larger than the image...); empty when fine.
  std::function<std::vector<TransformIssue>(const schema::Params&, const TransformContext&)> check;
  std::function<std::unique_ptr<Transform>(const schema::Params&, const TransformContext&)> build;
};

/// The transform types the augment section may use (no global registry: pass it along).
class TransformRegistry : public NamedRegistry<TransformDef> {
 public:
  static TransformRegistry withBuiltins();
};

// One registration function per transform family file.
void registerGeometricTransforms(TransformRegistry& registry);  // geometric_transforms.cpp
void registerColorTransforms(TransformRegistry& registry);      // color_transforms.cpp
void registerNoiseTransforms(TransformRegistry& registry);      // noise_transforms.cpp
void registerPolicyTransforms(TransformRegistry& registry);     // policy_transforms.cpp
void registerBatchTransforms(TransformRegistry& registry);      // batch_mix.cpp (MixUp, CutMix)
void registerNormalizeTransform(TransformRegistry& registry);   // pipeline.cpp

/// Shorthand for geometric transforms defined by a function that draws its parameters once,
/// then moves the image and, when given, the pixel target the same way.
class GeometricTransform : public Transform {
 public:
  using Fn = std::function<void(cv::Mat&, PixelTarget*, SampleRng&)>;
  explicit GeometricTransform(Fn fn) : m_fn(std::move(fn)) {}
  void apply(cv::Mat& image, SampleRng& rng) const override { m_fn(image, nullptr, rng); }
  void applyWithTarget(cv::Mat& image, PixelTarget& target, SampleRng& rng) const override {
    m_fn(image, &target, rng);
  }

 private:
  Fn m_fn;
};

/// Shorthand for transforms defined by a function.
class FunctionTransform : public Transform {
 public:
  using Fn = std::function<void(cv::Mat&, SampleRng&)>;
  explicit FunctionTransform(Fn fn) : m_fn(std::move(fn)) {}
  void apply(cv::Mat& image, SampleRng& rng) const override { m_fn(image, rng); }

 private:
  Fn m_fn;
};

}  // namespace netsmith::augment
