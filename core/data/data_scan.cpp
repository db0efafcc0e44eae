#include "data/data_scan.h"
#include "data/source_formats.h"

#include <algorithm>
#include <array>

#include "augment/transform.h"
#include "common/error.h"
#include "data/dataset_stats.h"
#include "data/preview_grid.h"
#include "data/project_data.h"

namespace netsmith::data {

namespace {

/// Sample i's boxes in the pixels of its image, whose size is read from its header where the
/// format allows (a one-pixel region: JPEGs are not decoded).
std::vector<Box> boxesOf(const DatasetSource& source, std::int64_t i) {
  cv::Size size;
  (void)source.loadRegion(i, [&size](cv::Size s) {
    size = s;
    return cv::Rect(0, 0, std::min(1, s.width), std::min(1, s.height));
  });
  return source.loadBoxes(i, size.width, size.height);
}

/// Sample i's mask, refused as training refuses it (data/sample_processor.cpp) when its size is
/// not its image's: the scan counts as skipped what the loader would skip.
cv::Mat maskOf(const DatasetSource& source, std::int64_t i) {
  cv::Size size;
  (void)source.loadRegion(i, [&size](cv::Size s) {
    size = s;
    return cv::Rect(0, 0, std::min(1, s.width), std::min(1, s.height));
  });
  cv::Mat mask = source.loadMask(i);
  if (mask.size() != size)
    throw SampleError(source.describe(i) + ": the image is " + std::to_string(size.width) + "x" +
                      std::to_string(size.height) + " but its mask is " +
                      std::to_string(mask.cols) + "x" + std::to_string(mask.rows));
  return mask;
}

/// The co-occurrence of the most frequent labels (TargetStats::kCooccurrenceLabels) over the
/// training split: a second pass over the rows, after the positives are known.
void countCooccurrence(const SampleSet& train, TargetStats& t) {
  std::vector<std::size_t> order(t.positives.size());
  for (std::size_t a = 0; a < order.size(); ++a)
    order[a] = a;
  std::stable_sort(order.begin(), order.end(),
                   [&t](std::size_t a, std::size_t b) { return t.positives[a] > t.positives[b]; });
  if (order.size() > TargetStats::kCooccurrenceLabels)
    order.resize(TargetStats::kCooccurrenceLabels);
  std::sort(order.begin(), order.end());  // back in class order
  t.cooccurrenceLabels = order;
  const std::size_t k = order.size();
  t.cooccurrence.assign(k, std::vector<std::int64_t>(k, 0));
  // Each class's place among the shown ones (or none), so a row costs its labels.
  std::vector<std::int64_t> shownAt(t.positives.size(), -1);
  for (std::size_t a = 0; a < k; ++a)
    shownAt[order[a]] = std::int64_t(a);
  std::vector<std::size_t> present;
  for (const auto i : train.indices) {
    present.clear();
    for (const auto c : train.source->positiveLabels(i))
      if (std::size_t(c) < shownAt.size() && shownAt[std::size_t(c)] >= 0)
        present.push_back(std::size_t(shownAt[std::size_t(c)]));
    for (auto a : present)
      for (auto b : present)
        ++t.cooccurrence[a][b];
  }
}

/// The training split's targets into s.targets (its kind set): labels counted, values kept,
/// every mask decoded once (a mask that cannot be read is listed under on_error "skip", fatal
/// under "fail", as training would find it). False when `progress` says stop.
bool scanTargets(const SampleSet& train, ErrorPolicy policy, const ProgressFn& progress,
                 DataScanResult& s, std::vector<std::int64_t>& unreadable) {
  auto& t = s.targets;
  const auto& source = *train.source;
  const auto width = std::size_t(std::max<std::int64_t>(0, source.targetWidth()));
  if (t.kind == TargetKind::MultiHot) {
    t.positives.assign(width, 0);
    t.labelsPerImage.assign(width + 1, 0);
  } else if (t.kind == TargetKind::RealVector) {
    t.values.assign(width, {});
  } else if (t.kind == TargetKind::ClassMask) {
    t.classPixels.assign(s.classes.size(), 0);
  } else if (t.kind == TargetKind::Boxes) {
    t.boxesPerClass.assign(s.classes.size(), 0);
  }
  std::vector<float> row(width);
  for (std::int64_t k = 0; k < train.size(); ++k) {
    const auto i = train.indices[std::size_t(k)];
    if (t.kind == TargetKind::MultiHot) {
      const auto labels = source.positiveLabels(i);
      for (const auto a : labels)
        if (std::size_t(a) < width) ++t.positives[std::size_t(a)];
      ++t.labelsPerImage[std::min(labels.size(), width)];
    } else if (t.kind == TargetKind::RealVector) {
      source.targetRow(i, row.data());
      for (std::size_t a = 0; a < width; ++a)
        t.values[a].push_back(row[a]);
    } else if (t.kind == TargetKind::ClassMask && source.hasMasks()) {
      cv::Mat mask;
      try {
        mask = maskOf(source, i);
      } catch (const SampleError& e) {
        if (policy == ErrorPolicy::Fail) throw;
        s.skipped.push_back(skippedFor(source.describe(i), e.what()));
        unreadable.push_back(k);
        continue;
      }
      std::array<std::int64_t, 256> histogram{};
      for (int y = 0; y < mask.rows; ++y) {
        const uchar* m = mask.ptr<uchar>(y);
        for (int x = 0; x < mask.cols; ++x)
          ++histogram[m[x]];
      }
      for (std::size_t c = 0; c < t.classPixels.size() && c < 255; ++c)
        t.classPixels[c] += histogram[c];
      t.ignoredPixels += histogram[255];
    } else if (t.kind == TargetKind::Boxes && source.hasBoxes()) {
      std::vector<Box> boxes;
      try {
        boxes = boxesOf(source, i);
      } catch (const SampleError& e) {
        if (policy == ErrorPolicy::Fail) throw;
        s.skipped.push_back(skippedFor(source.describe(i), e.what()));
        unreadable.push_back(k);
        continue;
      }
      if (t.boxesPerImage.size() <= boxes.size()) t.boxesPerImage.resize(boxes.size() + 1, 0);
      ++t.boxesPerImage[boxes.size()];
      for (const auto& b : boxes) {
        if (b.cls >= 0 && std::size_t(b.cls) < t.boxesPerClass.size()) ++t.boxesPerClass[b.cls];
        t.boxClasses.push_back(std::int32_t(b.cls));
        t.boxWidths.push_back(b.x1 - b.x0);
        t.boxHeights.push_back(b.y1 - b.y0);
      }
    }
    if (progress && (k % 256 == 255 || k + 1 == train.size()) && !progress(k + 1, train.size()))
      return false;
  }
  if (t.kind == TargetKind::MultiHot) countCooccurrence(train, t);
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
        (void)maskOf(*set.source, i);
      else
        (void)boxesOf(*set.source, i);
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

}  // namespace

std::vector<BoxSizeSummary> boxSizeSummaries(const TargetStats& t, std::size_t classes) {
  std::vector<BoxSizeSummary> out(classes);
  std::vector<std::vector<float>> widths(classes), heights(classes), aspects(classes);
  for (std::size_t b = 0; b < t.boxClasses.size(); ++b) {
    const auto c = t.boxClasses[b];
    if (c < 0 || std::size_t(c) >= classes) continue;
    widths[std::size_t(c)].push_back(t.boxWidths[b]);
    heights[std::size_t(c)].push_back(t.boxHeights[b]);
    aspects[std::size_t(c)].push_back(t.boxHeights[b] > 0 ? t.boxWidths[b] / t.boxHeights[b] : 0.f);
  }
  const auto spread = [](std::vector<float>& v) {
    std::array<double, 3> r{};
    if (v.empty()) return r;
    std::sort(v.begin(), v.end());
    r = {v.front(), v[(v.size() - 1) / 2], v.back()};
    return r;
  };
  for (std::size_t c = 0; c < classes; ++c) {
    out[c].boxes = std::int64_t(widths[c].size());
    out[c].width = spread(widths[c]);
    out[c].height = spread(heights[c]);
    out[c].aspect = spread(aspects[c]);
  }
  return out;
}

DataScanResult scanProjectData(const project::Project& project, const std::string& baseDir,
                               const augment::TransformRegistry& transforms,
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
  auto pd = openProjectData(p, baseDir, transforms, userCacheDir(), step("computing mean/std"));
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
  // Targets that are not one class per sample: counted over the training split; every mask of
  // every split decoded once, the unreadable left out of the counts as training leaves them.
  s.targets.kind = sourceFormat(s.trainFormat).targets;
  s.targetNames = d.targets;
  if (s.targets.kind != TargetKind::ClassIndex) {
    std::vector<std::int64_t> badMasks;
    if (!scanTargets(d.train, policy, step("reading targets"), s, badMasks)) {
      s.cancelled = true;
      return s;
    }
    removePositions(d.train, badMasks);
    for (auto* set : {&d.validation, &d.test}) {
      if (!dropUnreadableMasks(*set, policy, step("reading masks"), s.skipped)) {
        s.cancelled = true;
        return s;
      }
    }
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
  if (s.targets.kind != TargetKind::ClassIndex) {
    // The first training images with their targets (masks drawn over their images).
    const int wanted = 4 * options.samplesPerClass;
    for (std::int64_t k = 0; k < d.train.size() && int(s.samples.size()) < wanted; ++k) {
      try {
        cv::Mat picture;
        if (d.train.source->hasBoxes()) {
          std::vector<Box> boxes;
          const cv::Mat image = pd->processor->preview(d.train, k, false, 0, 0, nullptr, &boxes);
          overlayBoxes(image, boxes, d.config.colors).convertTo(picture, CV_8U, 255.0);
          s.sampleCaptions.push_back(boxCaption(boxes, d.classes));
        } else if (d.train.source->hasMasks()) {
          cv::Mat mask;
          const cv::Mat image = pd->processor->preview(d.train, k, false, 0, 0, &mask);
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
    return s;
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
      s.sampleCaptions.push_back(d.classes.at(std::size_t(label)));
      ++taken[static_cast<std::size_t>(label)];
    } catch (const std::exception&) {
      // unreadable: already listed as skipped
    }
    if (std::all_of(taken.begin(), taken.end(), [perClass](int t) { return t >= perClass; })) break;
  }
  return s;
}

}  // namespace netsmith::data
