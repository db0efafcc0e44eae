#pragma once

// The built-in tasks' statistics of their training targets (data/target_summary.h), each the
// TaskDef::statistics of its task: multi-label's label counts and co-occurrence, regression's
// target ranges and histograms, segmentation's class pixels, detection's boxes and their sizes.
// Classification gives none: its data is counted per class by the scan itself. No LibTorch.
#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "data/target_summary.h"

namespace netsmith::task {

std::unique_ptr<data::TargetStatistics> labelSetStatistics();
std::unique_ptr<data::TargetStatistics> targetValueStatistics();
std::unique_ptr<data::TargetStatistics> maskPixelStatistics();
std::unique_ptr<data::TargetStatistics> boxStatistics();

/// The co-occurrence matrix holds this many of the most frequent labels at most (a matrix of
/// every label is labels squared, 800 MB for 10,000).
inline constexpr std::size_t kCooccurrenceLabels = 60;

/// A class's boxes: widths and heights in their images' pixels, aspect ratio = width / height;
/// min, median (the lower middle of an even count) and max. All 0 for a class without a box.
struct BoxSizeSummary {
  std::int64_t boxes = 0;
  std::array<double, 3> width{}, height{}, aspect{};  ///< min, median, max
};
/// One summary per class of the boxes given as (class, width, height); boxes of a class
/// outside 0 .. classes - 1 are left out.
std::vector<BoxSizeSummary> boxSizeSummaries(const std::vector<std::int32_t>& classes,
                                             const std::vector<float>& widths,
                                             const std::vector<float>& heights,
                                             std::size_t classCount);

}  // namespace netsmith::task
