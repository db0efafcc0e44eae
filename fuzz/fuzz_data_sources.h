#pragma once

// What every data-source target does with a source that opened: read each label, name and
// (for the first few) image, as the loader would.
#include <algorithm>
#include <cmath>
#include <memory>

#include "data/dataset_source.h"

namespace netsmith::fuzz {

/// What a target's first input byte picks: bit 0, the project's class names (`named`) or none;
/// bit 1, ErrorPolicy::Fail or Skip.
struct SourceMode {
  std::vector<std::string> classes;
  data::ErrorPolicy policy = data::ErrorPolicy::Skip;
};
inline SourceMode sourceMode(std::uint8_t byte, const std::vector<std::string>& named) {
  return {(byte & 1) ? named : std::vector<std::string>{},
          (byte & 2) ? data::ErrorPolicy::Fail : data::ErrorPolicy::Skip};
}

inline void exerciseSource(const std::shared_ptr<data::DatasetSource>& source) {
  const auto n = source->size();
  for (std::int64_t i = 0; i < n; ++i) {
    // The source's promises: a class in range, or (a table of targets) -1 and a row of finite
    // numbers, and a stratum in range.
    const auto label = source->label(i);
    if (source->targetWidth() > 0) {
      if (label != -1) __builtin_trap();
      for (const float v : source->targetValues(i))
        if (!std::isfinite(v)) __builtin_trap();
      std::int64_t previous = -1;  // a multi-label row's classes: ascending, once, in range
      for (const auto k : source->positiveLabels(i)) {
        if (k <= previous || k >= source->targetWidth()) __builtin_trap();
        previous = k;
      }
    } else if (label < 0 || label >= source->numClasses()) {
      __builtin_trap();
    }
    const auto stratum = source->stratum(i);
    if (stratum < 0 || stratum >= source->numStrata()) __builtin_trap();
    (void)source->describe(i);
  }
  for (std::int64_t i = 0; i < std::min<std::int64_t>(n, 4); ++i) {
    try {
      const cv::Mat image = source->load(i);
      if (image.empty()) __builtin_trap();
    } catch (const data::SampleError&) {
      // one unreadable sample: the loader skips or reports it
    }
  }
  for (const auto& skipped : source->skippedAtScan())
    (void)skipped;
}

}  // namespace netsmith::fuzz
