#include "data/data_scan.h"
#include "data/source_formats.h"

#include <algorithm>
#include <array>
#include <optional>

#include "augment/transform.h"
#include "common/error.h"
#include "data/dataset_stats.h"
#include "data/preview_grid.h"
#include "data/project_data.h"

namespace netsmith::data {

namespace {

/// The training split's targets through the task's statistics: every target read once (one
/// that cannot be read is listed under on_error "skip" and its sample left out, fatal under
/// "fail", as training would find it). False when `progress` says stop.
bool countTargets(SampleSet& train, TargetStatistics& statistics, const DataModule& d,
                  ErrorPolicy policy, const ProgressFn& progress,
                  std::vector<SkippedItem>& skipped) {
  const auto& source = *train.source;
  statistics.begin(source, d.classes, d.targets);
  std::vector<std::int64_t> unreadable;
  for (std::int64_t k = 0; k < train.size(); ++k) {
    const auto i = train.indices[std::size_t(k)];
    try {
      statistics.add(source, i);
    } catch (const SampleError& e) {
      if (policy == ErrorPolicy::Fail) throw;
      skipped.push_back(skippedFor(source.describe(i), e.what()));
      unreadable.push_back(k);
    }
    if (progress && (k % 256 == 255 || k + 1 == train.size()) && !progress(k + 1, train.size()))
      return false;
  }
  removePositions(train, unreadable);
  return true;
}

/// Decodes every mask or box list of `set` (a source with masks or boxes; nothing otherwise)
/// and removes the samples whose target cannot be read, listed in `skipped` (fatal under
/// on_error "fail").
bool dropUnreadableMasks(SampleSet& set, ErrorPolicy policy, const ProgressFn& progress,
                         std::vector<SkippedItem>& skipped) {
  if (set.empty() || !(set.source->hasMasks() || set.source->hasBoxes())) return true;
  std::vector<std::int64_t> unreadable;
  for (std::int64_t k = 0; k < set.size(); ++k) {
    const auto i = set.indices[std::size_t(k)];
    try {
      if (set.source->hasMasks())
        (void)readMask(*set.source, i);
      else
        (void)readBoxes(*set.source, i);
    } catch (const SampleError& e) {
      if (policy == ErrorPolicy::Fail) throw;
      skipped.push_back(skippedFor(set.source->describe(i), e.what()));
      unreadable.push_back(k);
    }
    if (progress && (k % 256 == 255 || k + 1 == set.size()) && !progress(k + 1, set.size()))
      return false;
  }
  removePositions(set, unreadable);
  return true;
}

/// A progress callback that reports `phase` through `options.progress` (none without one).
ProgressFn phaseProgress(const DataScanOptions& options, const std::string& phase) {
  if (!options.progress) return {};
  return [&options, phase](std::int64_t done, std::int64_t total) {
    return options.progress(phase, done, total);
  };
}

/// Decodes every image of every split once, leaving the unreadable ones out (listed in
/// `skipped`); the training split's mean/std, or nullopt when `options.progress` cancels.
std::optional<ChannelStats> readEveryImage(DataModule& d, const SampleProcessor& plain,
                                           ErrorPolicy policy, const DataScanOptions& options,
                                           std::vector<SkippedItem>& skipped) {
  // One phase over the splits, one after the other.
  const std::int64_t all = d.train.size() + d.validation.size() + d.test.size();
  std::int64_t offset = 0;
  const auto reading = [&options, &offset, all]() -> ProgressFn {
    if (!options.progress) return {};
    return [&options, &offset, all](std::int64_t done, std::int64_t) {
      return options.progress("reading images", offset + done, all);
    };
  };
  std::vector<std::int64_t> unreadable;
  auto stats = computeChannelStats(d.train, plain, policy, reading(), &skipped, &unreadable);
  if (!stats) return std::nullopt;
  offset = d.train.size();
  removePositions(d.train, unreadable);
  for (auto* set : {&d.validation, &d.test}) {
    if (set->empty()) continue;
    const std::int64_t size = set->size();
    if (!dropUnreadable(*set, plain, policy, reading(), &skipped)) return std::nullopt;
    offset += size;
  }
  return stats;
}

/// Counts the training targets with the task's statistics and decodes every mask or box list
/// of every split once (into `s`). False when `options.progress` cancels.
bool readEveryTarget(DataModule& d, ErrorPolicy policy, const DataScanOptions& options,
                     DataScanResult& s) {
  s.oneClassPerSample = targetTraits(sourceFormat(s.trainFormat).targets).oneClassPerSample;
  s.targetNames = d.targets;
  auto statistics = options.targetStatistics ? options.targetStatistics() : nullptr;
  if (statistics && !countTargets(d.train, *statistics, d, policy,
                                  phaseProgress(options, "reading targets"), s.skipped))
    return false;
  for (auto* set : {&d.train, &d.validation, &d.test}) {
    if (s.oneClassPerSample || (set == &d.train && statistics)) continue;
    if (!dropUnreadableMasks(*set, policy, phaseProgress(options, "reading masks"), s.skipped))
      return false;
  }
  if (statistics) s.targetSummary = statistics->summary();
  return true;
}

/// Records the readable samples per split and class, the training split's mean/std and the
/// normalisation training uses.
void recordCounts(const ProjectData& pd, const ChannelStats& stats, DataScanResult& s) {
  const auto& d = pd.data;
  s.train = d.train.size();
  s.validation = d.validation.size();
  s.test = d.test.size();
  s.trainCounts = classCounts(d.train, d.numClasses());
  s.validationCounts = classCounts(d.validation, d.numClasses());
  s.testCounts = classCounts(d.test, d.numClasses());
  s.mean = stats.mean;
  s.std = stats.std;
  const auto& n = pd.normalization;
  s.normalizationMode = n.computed ? "auto" : (n.mean.empty() ? "none" : "explicit");
  s.normalizationMean = n.mean;
  s.normalizationStd = n.std;
}

/// The first training images with their targets (masks or boxes drawn over their images), for
/// a source without one class per sample.
void pickTargetSamples(const ProjectData& pd, const SampleProcessor& plain,
                       const DataScanOptions& options, DataScanResult& s) {
  const auto& d = pd.data;
  const int wanted = 4 * options.samplesPerClass;
  for (std::int64_t k = 0; k < d.train.size() && int(s.samples.size()) < wanted; ++k) {
    try {
      cv::Mat picture;
      if (d.train.source->hasBoxes()) {
        std::vector<target::Box> boxes;
        const cv::Mat image = pd.processor->preview(d.train, k, false, 0, 0, nullptr, &boxes);
        overlayBoxes(image, boxes, d.config.colors).convertTo(picture, CV_8U, 255.0);
        s.sampleCaptions.push_back(boxCaption(boxes, d.classes));
      } else if (d.train.source->hasMasks()) {
        cv::Mat mask;
        const cv::Mat image = pd.processor->preview(d.train, k, false, 0, 0, &mask);
        overlayMask(image, mask, d.config.colors).convertTo(picture, CV_8U, 255.0);
        s.sampleCaptions.push_back(maskCaption(mask, d.classes));
      } else {
        picture = plain.plain(d.train, k);
        s.sampleCaptions.push_back(d.train.describeTarget(k));
      }
      s.samples.push_back(picture);
      s.sampleLabels.push_back(-1);
    } catch (const std::exception&) {
      // unreadable: already listed as skipped
    }
  }
}

/// A few training images of every class, as the model sees them.
void pickClassSamples(const DataModule& d, const SampleProcessor& plain,
                      const DataScanOptions& options, DataScanResult& s) {
  const auto perClass = options.samplesPerClass;
  std::vector<int> taken(static_cast<std::size_t>(d.numClasses()), 0);
  for (std::int64_t k = 0; perClass > 0 && k < d.train.size(); ++k) {
    const auto label = d.train.source->label(d.train.indices[static_cast<std::size_t>(k)]);
    if (label < 0 || label >= d.numClasses() || taken[static_cast<std::size_t>(label)] >= perClass)
      continue;
    try {
      s.samples.push_back(plain.plain(d.train, k));
      s.sampleLabels.push_back(label);
      s.sampleCaptions.push_back(d.classes.at(std::size_t(label)));
      ++taken[static_cast<std::size_t>(label)];
    } catch (const std::exception&) {
      // unreadable: already listed as skipped
    }
    if (std::all_of(taken.begin(), taken.end(), [perClass](int t) { return t >= perClass; })) break;
  }
}

}  // namespace

DataScanResult scanProjectData(const project::Project& project, const DataConfig& config,
                               const augment::TransformRegistry& transforms,
                               const DataScanOptions& options) {
  DataScanResult s;
  auto p = project;
  p.augment = Json::array();  // the data as it is, not augmented
  auto pd = openProjectData(p, config, transforms, userCacheDir(),
                            phaseProgress(options, "computing mean/std"));
  if (!pd) {
    s.cancelled = true;
    return s;
  }
  auto& d = pd->data;
  s.classes = d.classes;
  s.subsets = d.subsets;
  s.trainFormat = d.config.train.format;
  s.skipped = d.skippedAtScan();
  // Every image of every split decoded once: the unreadable ones are listed and left out of
  // the counts (training would skip them); mean/std come out of the training split.
  const SampleProcessor plain(pd->format, nullptr, {}, {});
  const ErrorPolicy policy = d.config.onError;
  const auto stats = readEveryImage(d, plain, policy, options, s.skipped);
  if (!stats) {
    s.cancelled = true;
    return s;
  }
  // The training targets counted by the task's statistics (when it gives them); every mask or
  // box list of every split decoded once, the unreadable left out of the counts as training
  // leaves them.
  if (!readEveryTarget(d, policy, options, s)) {
    s.cancelled = true;
    return s;
  }
  recordCounts(*pd, *stats, s);
  const bool files = sourceFormat(s.trainFormat).imageFiles;
  if (options.imageSizes == DataScanOptions::Sizes::All ||
      (options.imageSizes == DataScanOptions::Sizes::OfFiles && files)) {
    s.imageSizes = imageSizeHistogram(d.train, phaseProgress(options, "reading sizes"), nullptr);
    if (!s.imageSizes) {
      s.cancelled = true;
      return s;
    }
  }
  if (!s.oneClassPerSample)
    pickTargetSamples(*pd, plain, options, s);
  else
    pickClassSamples(d, plain, options, s);
  return s;
}

DataScanResult scanProjectData(const project::Project& project, const std::string& baseDir,
                               const augment::TransformRegistry& transforms,
                               const DataScanOptions& options) {
  Problems problems;
  const auto config = parseDataConfig(project.data, baseDir, problems);
  if (!problems.empty()) throw Error(formatProblems(problems));
  return scanProjectData(project, config, transforms, options);
}

}  // namespace netsmith::data
