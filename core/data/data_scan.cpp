#include "data/data_scan.h"
#include "data/source_formats.h"

#include <algorithm>

#include "augment/transform.h"
#include "common/error.h"
#include "data/dataset_stats.h"
#include "data/project_data.h"

namespace netsmith::data {

DataScanResult scanProjectData(const project::Project& project, const std::string& baseDir,
                               const DataScanOptions& options) {
  DataScanResult s;
  const auto step = [&options](const std::string& phase) -> ProgressFn {
    if (!options.progress) return {};
    return [&options, phase](std::int64_t done, std::int64_t total) {
      return options.progress(phase, done, total);
    };
  };
  auto p = project;
  p.augment = Json::array();  // the data as it is, not augmented
  auto pd = openProjectData(p, baseDir, augment::TransformRegistry::withBuiltins(), userCacheDir(),
                            step("computing mean/std"));
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
  const auto stats =
      computeChannelStats(d.train, plain, policy, reading(), &s.skipped, &unreadable);
  if (!stats) {
    s.cancelled = true;
    return s;
  }
  offset = d.train.size();
  removePositions(d.train, unreadable);
  for (auto* set : {&d.validation, &d.test}) {
    if (set->empty()) continue;
    const std::int64_t size = set->size();
    if (!dropUnreadable(*set, plain, policy, reading(), &s.skipped)) {
      s.cancelled = true;
      return s;
    }
    offset += size;
  }
  s.train = d.train.size();
  s.validation = d.validation.size();
  s.test = d.test.size();
  s.trainCounts = classCounts(d.train, d.numClasses());
  s.validationCounts = classCounts(d.validation, d.numClasses());
  s.testCounts = classCounts(d.test, d.numClasses());
  s.mean = stats->mean;
  s.std = stats->std;
  const auto& n = pd->normalization;
  s.normalizationMode = n.computed ? "auto" : (n.mean.empty() ? "none" : "explicit");
  s.normalizationMean = n.mean;
  s.normalizationStd = n.std;
  const bool files = sourceFormat(s.trainFormat).imageFiles;
  if (options.imageSizes == DataScanOptions::Sizes::All ||
      (options.imageSizes == DataScanOptions::Sizes::OfFiles && files)) {
    s.imageSizes = imageSizeHistogram(d.train, step("reading sizes"), nullptr);
    if (!s.imageSizes) {
      s.cancelled = true;
      return s;
    }
  }
  // A few training images of every class, as the model sees them.
  const auto perClass = options.samplesPerClass;
  std::vector<int> taken(static_cast<std::size_t>(d.numClasses()), 0);
  for (std::int64_t k = 0; perClass > 0 && k < d.train.size(); ++k) {
    const auto label = d.train.source->label(d.train.indices[static_cast<std::size_t>(k)]);
    if (label < 0 || label >= d.numClasses() || taken[static_cast<std::size_t>(label)] >= perClass)
      continue;
    try {
      s.samples.push_back(plain.plain(d.train, k));
      s.sampleLabels.push_back(label);
      ++taken[static_cast<std::size_t>(label)];
    } catch (const std::exception&) {
      // unreadable: already listed as skipped
    }
    if (std::all_of(taken.begin(), taken.end(), [perClass](int t) { return t >= perClass; })) break;
  }
  return s;
}

}  // namespace netsmith::data
