#include "data/dataset_stats.h"

#include <cmath>
#include <filesystem>
#include <functional>
#include <opencv2/core.hpp>
#include <sstream>

#include "common/file_util.h"
#include "common/json.h"

namespace netsmith::data {

std::optional<ChannelStats> computeChannelStats(const SampleSet& set,
                                                const SampleProcessor& processor,
                                                ErrorPolicy policy, const ProgressFn& progress,
                                                std::vector<SkippedItem>* skipped,
                                                std::vector<std::int64_t>* unreadable) {
  const int c = processor.format().channels;
  std::vector<double> sum(static_cast<std::size_t>(c), 0.0),
      sumSq(static_cast<std::size_t>(c), 0.0);
  std::int64_t pixels = 0, used = 0;
  const std::int64_t n = set.size();
  for (std::int64_t k = 0; k < n; ++k) {
    if (progress && (k % 256 == 0) && !progress(k, n)) return std::nullopt;
    cv::Mat img;
    try {
      img = processor.plain(set, k);
    } catch (const SampleError& e) {
      if (policy == ErrorPolicy::Fail) throw;
      if (skipped) skipped->push_back(skippedFor(set.describe(k), e.what()));
      if (unreadable) unreadable->push_back(k);
      continue;
    }
    std::vector<cv::Mat> planes;
    cv::split(img, planes);
    for (int ch = 0; ch < c; ++ch) {
      const auto& p = planes[static_cast<std::size_t>(ch)];
      sum[static_cast<std::size_t>(ch)] += cv::sum(p)[0];
      sumSq[static_cast<std::size_t>(ch)] += p.dot(p);
    }
    pixels += std::int64_t(img.rows) * img.cols;
    ++used;
  }
  if (progress && !progress(n, n)) return std::nullopt;
  ChannelStats s;
  s.samples = used;
  for (int ch = 0; ch < c; ++ch) {
    const double mean = pixels ? sum[static_cast<std::size_t>(ch)] / double(pixels) : 0.0;
    const double var =
        pixels ? std::max(0.0, sumSq[static_cast<std::size_t>(ch)] / double(pixels) - mean * mean)
               : 0.0;
    s.mean.push_back(mean);
    s.std.push_back(std::sqrt(var));
  }
  return s;
}

void removePositions(SampleSet& set, const std::vector<std::int64_t>& positions) {
  if (positions.empty()) return;
  std::vector<bool> drop(set.indices.size(), false);
  for (auto k : positions)
    if (k >= 0 && k < set.size()) drop[static_cast<std::size_t>(k)] = true;
  std::vector<std::int64_t> kept;
  kept.reserve(set.indices.size());
  for (std::size_t k = 0; k < set.indices.size(); ++k)
    if (!drop[k]) kept.push_back(set.indices[k]);
  set.indices = std::move(kept);
}

bool dropUnreadable(SampleSet& set, const SampleProcessor& processor, ErrorPolicy policy,
                    const ProgressFn& progress, std::vector<SkippedItem>* skipped) {
  std::vector<std::int64_t> unreadable;
  std::vector<SkippedItem> found;
  const std::int64_t n = set.size();
  for (std::int64_t k = 0; k < n; ++k) {
    if (progress && (k % 256 == 0) && !progress(k, n)) return false;
    try {
      processor.plain(set, k);
    } catch (const SampleError& e) {
      if (policy == ErrorPolicy::Fail) throw;
      found.push_back(skippedFor(set.describe(k), e.what()));
      unreadable.push_back(k);
    }
  }
  if (progress && !progress(n, n)) return false;
  removePositions(set, unreadable);
  if (skipped) skipped->insert(skipped->end(), found.begin(), found.end());
  return true;
}

std::optional<std::map<std::string, std::int64_t>> imageSizeHistogram(
    const SampleSet& set, const ProgressFn& progress, std::vector<SkippedItem>* skipped) {
  std::map<std::string, std::int64_t> out;
  const std::int64_t n = set.size();
  for (std::int64_t k = 0; k < n; ++k) {
    if (progress && (k % 64 == 0) && !progress(k, n)) return std::nullopt;
    try {
      const cv::Mat img = set.source->load(set.indices[static_cast<std::size_t>(k)]);
      ++out[std::to_string(img.cols) + "x" + std::to_string(img.rows) + "x" +
            std::to_string(img.channels())];
    } catch (const SampleError& e) {
      if (skipped) skipped->push_back(skippedFor(set.describe(k), e.what()));
    }
  }
  return out;
}

namespace {

// Identifies the data the statistics were computed on: sources, sizes and times of the files,
// the split and the model format. Any change gives a new key.
std::string statsKey(const DataModule& data, const SampleFormat& f) {
  std::ostringstream os;
  const auto& s = data.config.train;
  os << sourceFormatName(s.format) << '|' << s.images << '|' << s.labels << '|' << s.root << '|'
     << s.manifest;
  for (const auto& file : s.files)
    os << '|' << file;
  for (const auto& p : {s.images, s.labels, s.root, s.manifest}) {
    std::error_code ec;
    if (p.empty()) continue;
    const auto size =
        std::filesystem::is_regular_file(p, ec) ? std::filesystem::file_size(p, ec) : 0;
    const auto time = std::filesystem::last_write_time(p, ec).time_since_epoch().count();
    os << '|' << size << '@' << time;
  }
  os << '|' << s.limit << '|' << data.config.split.fraction << '|' << data.config.split.seed << '|'
     << data.config.split.stratified << '|' << data.train.size() << '|' << f.channels << 'x'
     << f.height << 'x' << f.width << '|' << int(f.fit);
  char hex[32];
  std::snprintf(hex, sizeof hex, "%016zx", std::hash<std::string>()(os.str()));
  return hex;
}

}  // namespace

std::optional<Normalization> resolveNormalization(const DataModule& data,
                                                  const SampleFormat& format,
                                                  const std::string& cacheDir,
                                                  const ProgressFn& progress) {
  Normalization n;
  using Mode = DataConfig::Normalization;
  if (data.config.normalization == Mode::None) return n;
  if (data.config.normalization == Mode::Explicit) {
    n.mean = data.config.mean;
    n.std = data.config.std;
    const auto c = static_cast<std::size_t>(format.channels);
    if ((n.mean.size() != 1 && n.mean.size() != c) || (n.std.size() != 1 && n.std.size() != c)) {
      throw Error("data.normalize: mean and std need 1 or " + std::to_string(c) +
                  " values (one per channel)");
    }
    return n;
  }
  n.computed = true;
  const std::string cacheFile =
      cacheDir.empty()
          ? std::string()
          : (std::filesystem::path(cacheDir) / ("stats-" + statsKey(data, format) + ".json"))
                .string();
  if (!cacheFile.empty()) {
    try {
      const Json j = Json::parse(readTextFile(cacheFile));
      n.mean = j.at("mean").get<std::vector<double>>();
      n.std = j.at("std").get<std::vector<double>>();
      if (n.mean.size() == static_cast<std::size_t>(format.channels)) {
        n.fromCache = true;
        return n;
      }
    } catch (const std::exception&) {
      // No cache yet, or an unreadable one: compute again.
    }
  }
  const SampleProcessor plain(format, nullptr, {}, {});
  const auto stats = computeChannelStats(data.train, plain, data.config.onError, progress);
  if (!stats) return std::nullopt;
  n.mean = stats->mean;
  n.std = stats->std;
  for (auto& s : n.std)
    s = std::max(s, 1e-6);
  if (!cacheFile.empty()) {
    try {
      std::filesystem::create_directories(cacheDir);
      writeFileAtomically(
          cacheFile,
          Json{{"mean", n.mean}, {"std", n.std}, {"samples", stats->samples}}.dump(2) + "\n");
    } catch (const std::exception&) {
      // A cache that cannot be written only costs time next run.
    }
  }
  return n;
}

}  // namespace netsmith::data
