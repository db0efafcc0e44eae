#pragma once

// Scanning a project's data, the one job behind the studio's Data page and `netsmith-cli
// data-stats`: the data opened as training opens it (without augmentation), every image of
// every split decoded once under the project's on_error (the unreadable ones listed and left
// out of the counts, as training leaves them out), the training split's mean and standard
// deviation, and, when asked, image sizes and a few samples of each class. No LibTorch here.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <opencv2/core/mat.hpp>

#include "data/data_module.h"
#include "data/target_summary.h"
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
  /// What the project's task counts of its training targets (TaskDef::statistics; the
  /// built-in tasks give none for data of one class per sample).
  TargetStatisticsFactory targetStatistics;
};

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
  /// Samples of one class each: counted per class above.
  bool oneClassPerSample = true;
  /// The task's statistics of the training targets (DataScanOptions::targetStatistics; none
  /// when it gave none).
  std::optional<TargetSummary> targetSummary;
  std::vector<std::string> targetNames;  ///< a regression's target names
  SourceFormat trainFormat = SourceFormat::Idx;
};

/// Scans `project`'s data as `config` gives it (its data section as read). Throws
/// netsmith::Error naming the source or sample that cannot be read (every sample under
/// on_error "fail"). `transforms`: the program's (the data's normalisation is one).
DataScanResult scanProjectData(const project::Project& project, const DataConfig& config,
                               const augment::TransformRegistry& transforms,
                               const DataScanOptions& options);

/// The same for a project no one resolved (a test's): its data section read here.
DataScanResult scanProjectData(const project::Project& project, const std::string& baseDir,
                               const augment::TransformRegistry& transforms,
                               const DataScanOptions& options);

}  // namespace netsmith::data
