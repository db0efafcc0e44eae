#pragma once

#include <cstdint>
#include <vector>

#include <opencv2/core/mat.hpp>

#include "augment/pipeline.h"
#include "data/data_config.h"
#include "data/data_module.h"
#include "data/image_geometry.h"
#include "target/box.h"

namespace netsmith::data {

/// The model's view of an image: channels and size, and how other sizes are fitted.
struct SampleFormat {
  int channels = 1;
  int height = 28;
  int width = 28;
  FitPolicy fit = FitPolicy::Resize;
};

/// Grey <-> RGB conversion of a decoded CV_8U image, then scaling to CV_32F in [0, 1].
cv::Mat toModelChannels(const cv::Mat& decoded, int channels);
/// Brings an image (any type) to height x width with the fit policy.
cv::Mat fitImage(const cv::Mat& image, int height, int width, FitPolicy fit);
/// fitImage() for a class mask: the same geometry, nearest neighbour.
cv::Mat fitMask(const cv::Mat& mask, int height, int width, FitPolicy fit);
/// fitImage()'s geometry for boxes in an image of `from` (a box the crop cuts mostly away is
/// dropped, as target::PixelTarget says).
void fitBoxes(std::vector<target::Box>& boxes, cv::Size from, int height, int width, FitPolicy fit);

/// Turns sample k of a set into the model's input: decode, channel conversion, fitting,
/// augmentation (training: seeded from (seed, epoch, k), so the result does not depend on
/// which thread runs it), final normalisation. Thread-safe.
class SampleProcessor {
 public:
  SampleProcessor(SampleFormat format, const augment::Pipeline* pipeline, std::vector<double> mean,
                  std::vector<double> std);

  /// Writes channels x height x width floats (CHW) to `out`. Throws SampleError.
  /// `maskOut` (a source with masks): also writes the sample's mask, height x width bytes (a
  /// class index per pixel, 255: ignore), moved by the same geometric draws as the image.
  /// `boxesOut` (a source with boxes): set to the sample's boxes in the output's pixels, moved
  /// with the image (target::PixelTarget says how a box cut by a crop is kept or dropped).
  void process(const SampleSet& set, std::int64_t k, bool training, std::uint64_t seed,
               std::int64_t epoch, float* out, std::uint8_t* maskOut = nullptr,
               std::vector<target::Box>* boxesOut = nullptr) const;
  /// The image as a person should see it (before normalisation), CV_32F in [0, 1], HxWxC.
  /// `mask` (a source with masks): set to the mask moved with it (CV_8UC1).
  /// `boxes` (a source with boxes): set to the boxes moved with it.
  cv::Mat preview(const SampleSet& set, std::int64_t k, bool training, std::uint64_t seed,
                  std::int64_t epoch, cv::Mat* mask = nullptr,
                  std::vector<target::Box>* boxes = nullptr) const;
  /// Decoded, channel-converted and fitted, without augmentation (for statistics).
  cv::Mat plain(const SampleSet& set, std::int64_t k) const;
  /// Where sample k's evaluation input (no augmentation draws) comes from in its image: the
  /// fit and the pipeline's evaluation steps, found by moving a box at the image's centre
  /// through them as its boxes move (the image's size read from its header; nothing decoded).
  ImageGeometry imageGeometry(const SampleSet& set, std::int64_t k) const;

  const SampleFormat& format() const { return m_format; }
  std::int64_t sampleFloats() const {
    return std::int64_t(m_format.channels) * m_format.height * m_format.width;
  }

 private:
  /// The sample after the pipeline and the final fit. `forDisplay`: as the pipeline shows it
  /// (no normalisation at all); otherwise the project's mean/std are left to the caller.
  /// `mask`: run the mask through with the image (no byte steps or region decoding then).
  /// `boxes`: the same for the sample's boxes.
  cv::Mat run(const SampleSet& set, std::int64_t k, bool training, std::uint64_t seed,
              std::int64_t epoch, bool forDisplay, cv::Mat* mask = nullptr,
              std::vector<target::Box>* boxes = nullptr) const;
  /// run()'s steps; run() names a sample whose steps ran out of memory.
  cv::Mat runSteps(const SampleSet& set, std::int64_t k, bool training, std::uint64_t seed,
                   std::int64_t epoch, bool forDisplay, cv::Mat* mask,
                   std::vector<target::Box>* boxes) const;
  /// Whether the project's mean/std apply after the pipeline.
  bool meanApplies() const;

  SampleFormat m_format;
  const augment::Pipeline* m_pipeline;  // may be null: no augmentation
  std::vector<double> m_mean;           // empty: no final normalisation
  std::vector<double> m_std;
};

}  // namespace netsmith::data
