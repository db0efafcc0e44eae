#pragma once

#include <memory>
#include <string>
#include <vector>

#include <opencv2/core/mat.hpp>

#include "augment/transform.h"
#include "common/error.h"
#include "common/json.h"

namespace netsmith::augment {

/// A batch-level mix (MixUp / CutMix) from the augment list.
struct BatchMix {
  enum class Kind { MixUp, CutMix, Mosaic };
  Kind kind = Kind::MixUp;
  double alpha = 1.0;
  double probability = 1.0;
};

/// The `augment` section, built: per-sample steps in order, plus batch mixes.
///   Problems problems;
///   auto pipeline = Pipeline::fromJson(project.augment, registry, context, problems);
///   pipeline.apply(image, &rng);      // training: every enabled step, each with its probability
///   pipeline.apply(image, nullptr);   // validation/test: deterministic steps only
class Pipeline {
 public:
  /// Entries look like {"transform": "RandomCrop", "size": 28, "padding": 4, "p": 1.0,
  /// "enabled": true}. Problems name `augment[i].param`.
  static Pipeline fromJson(const Json& augment, const TransformRegistry& registry,
                           const TransformContext& context, Problems& problems);

  /// Runs the steps on a CV_32F image. `rng` null: evaluation (deterministic steps only, always
  /// applied). `stopBeforeNormalize`: for previews a person looks at.
  /// `from`: the index of the first step to run (after applyLeading()).
  void apply(cv::Mat& image, SampleRng* rng, bool stopBeforeNormalize = false,
             std::size_t from = 0) const;
  /// apply() with a pixel target (a mask, boxes or both) beside the image: the geometric steps
  /// move it under the same draws (the image comes out as apply() gives it for the same `rng`
  /// state), the others leave it alone. Made with TransformContext::pixelTargets, so no step
  /// breaks it. Throws netsmith::Error when a mask is given and is not CV_8UC1 at the image's
  /// size.
  void applyWithTarget(cv::Mat& image, PixelTarget& target, SampleRng* rng,
                       bool stopBeforeNormalize = false) const;
  /// Runs the steps at the start of the pipeline that work on any depth (TransformDef::anyDepth)
  /// on `image` as it is (CV_8U from a decoder), drawing from `rng` exactly as apply() would;
  /// returns the index of the first step left for apply().
  std::size_t applyLeading(cv::Mat& image, SampleRng* rng) const;

  /// For a loader that can decode part of an image: whether the first step that runs (in
  /// training with `rng`, in evaluation without) cuts a region (Transform::cutsRegion).
  bool startsWithCut(bool training) const;
  /// That step's chance and region for an image of `size`, drawn as apply() would draw them.
  struct LeadingCut {
    bool fired = false;  ///< false: the step does not run, the whole image is wanted
    cv::Rect region;
  };
  LeadingCut drawLeadingCut(cv::Size size, SampleRng* rng) const;
  /// applyLeading() on the region decoded for `cut`: finishes the cutting step (its resize),
  /// then runs the byte steps after it; returns the index of the first step left for apply().
  std::size_t applyLeading(cv::Mat& region, SampleRng* rng, const LeadingCut& cut) const;

  /// Whether a step of the (training or evaluation) pipeline sets the image size itself.
  bool setsSize(bool training) const;
  bool hasNormalize() const;
  const std::vector<BatchMix>& batchMixes() const { return m_mixes; }
  /// "RandomCrop, HorizontalFlip(p=0.5), Normalize"
  std::string describe() const;

 private:
  struct Step {
    std::string name;
    double probability = 1.0;
    bool deterministic = false;
    bool setsSize = false;
    bool isNormalize = false;
    bool anyDepth = false;
    std::shared_ptr<const Transform> transform;
  };
  /// The index of the first step that runs (evaluation: the first deterministic one).
  std::size_t firstRunning(bool training) const;
  std::size_t applyLeadingFrom(cv::Mat& image, SampleRng* rng, std::size_t start) const;

  std::vector<Step> m_steps;
  std::vector<BatchMix> m_mixes;
};

}  // namespace netsmith::augment
