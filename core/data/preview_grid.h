#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <opencv2/core/mat.hpp>

#include "data/project_data.h"
#include "target/box.h"

namespace netsmith::data {

/// One row of an augmentation preview: a training sample and N random draws of the pipeline.
struct PreviewRow {
  std::int64_t sample = 0;  ///< position in the training set
  std::string caption;      ///< class name, labels or targets (SampleSet::describeTarget)
  cv::Mat original;         ///< CV_32F in [0, 1], as the model sees it without augmentation
  std::vector<cv::Mat> draws;
};

/// K training samples (spread over the classes) with `draws` augmented versions each. Draw j
/// uses epoch j of the pipeline's seeded RNG, so a seed reproduces the grid. A source with masks
/// shows each image in colour with its mask over it (moved by the same draws): every class but
/// the first (the background) tinted with its colour (data.colors, else a built-in palette),
/// ignored pixels white; the caption names the classes the original shows, largest first. A
/// source with boxes shows them drawn over the image (moved by the same draws; a box a crop cut
/// mostly away is gone), captioned with their classes.
std::vector<PreviewRow> makePreview(const ProjectData& data, int samples, int draws,
                                    std::uint64_t seed);

/// `image` (CV_32F, 1 or 3 channels, [0, 1]) as RGB with `mask` over it (see makePreview).
/// `colors`: "#rrggbb" per class (empty: the built-in palette).
cv::Mat overlayMask(const cv::Mat& image, const cv::Mat& mask,
                    const std::vector<std::string>& colors);
/// `image` (CV_32F, 1 or 3 channels, [0, 1]) as RGB with each box's outline in its class's
/// colour (data.colors, else the built-in palette from class 0).
cv::Mat overlayBoxes(const cv::Mat& image, const std::vector<target::Box>& boxes,
                     const std::vector<std::string>& colors);
/// The classes of the boxes with their counts: "Bag, Sneaker x2"; "no boxes".
std::string boxCaption(const std::vector<target::Box>& boxes,
                       const std::vector<std::string>& classes);
/// Class c's colour (RGB, 0..255): data.colors[c] when it is "#rrggbb", else the built-in
/// palette's colour number c - paletteStart (masks start it at class 1, boxes at 0).
cv::Vec3f classColor(std::size_t c, const std::vector<std::string>& colors,
                     std::size_t paletteStart);

/// The classes a mask holds, largest share first, the background (class 0) last: "Bag 21%, Sneaker
/// 9%, background 70%".
std::string maskCaption(const cv::Mat& mask, const std::vector<std::string>& classes);

/// A readable grid (8-bit BGR, for cv::imwrite): one row per sample, the original first, each
/// image scaled to `cell` pixels, class names under the originals, a header row.
/// The grid's background and caption colours (BGR): light grey and near black by default; the
/// studio passes its theme's.
struct PreviewColors {
  cv::Scalar background{245, 245, 245};
  cv::Scalar text{30, 30, 30};
};
cv::Mat renderPreviewGrid(const std::vector<PreviewRow>& rows, int cell = 96,
                          const PreviewColors& colors = {});

/// What a batch mix (MixUp / CutMix) of the augment list does to a pair of training images of
/// different classes: both originals, the mixed first image and its soft label.
struct MixPreview {
  std::string mix;               ///< "MixUp" or "CutMix"
  cv::Mat first, second, mixed;  ///< CV_32F in [0, 1], HxWxC
  std::string firstClass, secondClass;
  double firstWeight = 1.0;  ///< the mixed label: firstWeight x first + (1 - firstWeight) x second
};
/// One preview per batch mix of the pipeline (empty when it has none). `seed` picks the draw.
std::vector<MixPreview> makeMixPreview(const ProjectData& data, std::uint64_t seed);

}  // namespace netsmith::data
