#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "data/data_module.h"
#include "data/sample_processor.h"

namespace netsmith::data {

/// Called with (done, total) now and then; return false to cancel.
using ProgressFn = std::function<bool(std::int64_t done, std::int64_t total)>;

/// Per-channel mean and standard deviation of model-ready pixels in [0, 1].
struct ChannelStats {
  std::vector<double> mean;
  std::vector<double> std;
  std::int64_t samples = 0;
};

/// Mean/std over every pixel of the set as the model sees it (converted and fitted, not
/// augmented). Unreadable samples are skipped and listed, with their positions in the set in
/// `unreadable` (under ErrorPolicy::Fail, thrown). Returns nullopt when `progress` cancels.
std::optional<ChannelStats> computeChannelStats(const SampleSet& set,
                                                const SampleProcessor& processor,
                                                ErrorPolicy policy, const ProgressFn& progress,
                                                std::vector<SkippedItem>* skipped = nullptr,
                                                std::vector<std::int64_t>* unreadable = nullptr);

/// Decodes every sample of `set` and takes the unreadable ones out of it (listed in `skipped`;
/// under ErrorPolicy::Fail, thrown), so its size counts what training will use. Returns false
/// when `progress` cancels (the set is then unchanged).
bool dropUnreadable(SampleSet& set, const SampleProcessor& processor, ErrorPolicy policy,
                    const ProgressFn& progress, std::vector<SkippedItem>* skipped);

/// Removes the samples at `positions` (positions in the set, as computeChannelStats gives).
void removePositions(SampleSet& set, const std::vector<std::int64_t>& positions);

/// "WxH" -> count over the set's decoded images (image folders and manifests have mixed sizes).
std::optional<std::map<std::string, std::int64_t>> imageSizeHistogram(
    const SampleSet& set, const ProgressFn& progress, std::vector<SkippedItem>* skipped = nullptr);

/// Resolves the project's normalisation: explicit values, none (empty vectors), or "auto"
/// (computed over the training split, read from / written to `cacheDir` when given).
struct Normalization {
  std::vector<double> mean;
  std::vector<double> std;
  bool computed = false;  ///< "auto"
  bool fromCache = false;
};
std::optional<Normalization> resolveNormalization(const DataModule& data,
                                                  const SampleFormat& format,
                                                  const std::string& cacheDir,
                                                  const ProgressFn& progress);

}  // namespace netsmith::data
