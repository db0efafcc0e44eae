#pragma once

// Scanning a project's data, the one job behind the studio's Data page and `netsmith-cli
// data-stats`: the data opened as training opens it (without augmentation), every image of
// every split decoded once under the project's on_error (the unreadable ones listed and left
// out of the counts, as training leaves them out), the training split's mean and standard
// deviation, and, when asked, image sizes and a few samples of each class. No LibTorch here.
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <opencv2/core/mat.hpp>

#include "data/data_module.h"
#include "project/project.h"

namespace netsmith::augment {
class TransformRegistry;
}

namespace netsmith::data {

struct DataScanOptions {
  /// The "WxH" histogram of the training split: never, for sources of image files (folders
  /// and manifests, whose sizes vary), or for every source.
  enum class Sizes { No, OfFiles, All } imageSizes = Sizes::No;
  /// Training images per class, as the model sees them (a source without one class per
  /// sample: 4 x this many of its first images, with their targets in the caption).
  int samplesPerClass = 0;
  /// (what is being done, done, total) now and then; return false to cancel.
  std::function<bool(const std::string& phase, std::int64_t done, std::int64_t total)> progress;
};

/// What the training split's targets hold, for a source whose samples are not one class each.
struct TargetStats {
  TargetKind kind = TargetKind::ClassIndex;
  /// Multi-label: images per label; images with 0, 1, 2, ... labels; and the co-occurrence
  /// of the kCooccurrenceLabels most frequent labels only (what is shown: a matrix of every
  /// label is labels squared, 800 MB for 10,000): cooccurrenceLabels their class indices in
  /// class order, cooccurrence[a][b] the images with both cooccurrenceLabels[a] and [b] (the
  /// diagonal: their positives).
  std::vector<std::int64_t> positives;
  static constexpr std::size_t kCooccurrenceLabels = 60;
  std::vector<std::size_t> cooccurrenceLabels;
  std::vector<std::vector<std::int64_t>> cooccurrence;
  std::vector<std::int64_t> labelsPerImage;
  /// Regression: each target's value for every training sample, [target][sample].
  std::vector<std::vector<float>> values;
  /// Segmentation: training pixels of each class in the masks (at their files' size), and
  /// the ignored ones (255).
  std::vector<std::int64_t> classPixels;
  std::int64_t ignoredPixels = 0;
  /// Detection: training boxes per class; [n]: images with n boxes (images without any at
  /// [0]); every box's class, width and height in its image's pixels, in file order.
  std::vector<std::int64_t> boxesPerClass;
  std::vector<std::int64_t> boxesPerImage;
  std::vector<std::int32_t> boxClasses;
  std::vector<float> boxWidths, boxHeights;
};

/// A class's box sizes in the training split (TargetStats' boxes): widths and heights in their
/// images' pixels, aspect ratio = width / height; min, median (the lower middle of an even
/// count) and max. All 0 for a class without a box.
struct BoxSizeSummary {
  std::int64_t boxes = 0;
  std::array<double, 3> width{}, height{}, aspect{};  ///< min, median, max
};
/// One summary per class (boxes of a class outside 0 .. classes - 1 are left out).
std::vector<BoxSizeSummary> boxSizeSummaries(const TargetStats& targets, std::size_t classes);

struct DataScanResult {
  bool cancelled = false;  ///< the progress callback said stop; the rest is partial
  std::vector<std::string> classes;
  std::vector<std::string> subsets;                  ///< the subsets the data's limits took
  std::int64_t train = 0, validation = 0, test = 0;  ///< readable samples
  std::vector<std::int64_t> trainCounts, validationCounts, testCounts;  ///< per class
  std::vector<SkippedItem> skipped;
  std::vector<double> mean, std;  ///< of the training split, pixels in [0, 1]
  /// The normalisation training uses: "none", "explicit" or "auto" (computed on train).
  std::string normalizationMode;
  std::vector<double> normalizationMean, normalizationStd;
  std::optional<std::map<std::string, std::int64_t>> imageSizes;
  std::vector<cv::Mat> samples;            ///< 8-bit grey or RGB
  std::vector<std::int64_t> sampleLabels;  ///< -1 for a source without one class per sample
  /// Each sample's target as a person reads it ("Bag"; "Bag, Sandal"; "sin 0.42"; a mask's
  /// classes). A mask's sample is the image in colour with its mask over it.
  std::vector<std::string> sampleCaptions;
  TargetStats targets;
  std::vector<std::string> targetNames;  ///< a regression's target names
  SourceFormat trainFormat = SourceFormat::Idx;
};

/// Throws netsmith::Error naming the source or sample that cannot be read (every sample under
/// on_error "fail"). `transforms`: the program's (the data's normalisation is one).
DataScanResult scanProjectData(const project::Project& project, const std::string& baseDir,
                               const augment::TransformRegistry& transforms,
                               const DataScanOptions& options);

}  // namespace netsmith::data
