#pragma once

// What a task counts of its training targets when a data scan reads them (data/data_scan.h),
// and the summary it gives back as tables, lines, a chart and one JSON member: `data-stats`
// prints it, `data-stats --json` writes it, the studio's Data page draws it, and none of them
// asks which task it is. Each task that does not take one class per sample gives its own
// statistics (task/target_statistics.h, TaskDef::statistics); a test's task can give its own.
// No LibTorch, no Qt.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/json.h"

namespace netsmith::data {

class DatasetSource;

/// A table of figures: column 0 names each row (a class, a label, a target, read from the
/// data), the other cells are text as they are shown.
struct SummaryTable {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
  /// A matrix whose rows and columns name the same things (a co-occurrence): the studio shows
  /// column 0 as the rows' header.
  bool rowHeader = false;
  /// Shades of the cells past column 0 ([row][column - 1], 0 to 1; empty: none), the diagonal
  /// in its own colour.
  std::vector<std::vector<double>> heat;
  /// A tooltip per cell past column 0 ([row][column - 1]; empty: none).
  std::vector<std::vector<std::string>> cellTips;
  std::string footer;   ///< a line under the rows (empty: none)
  std::string tooltip;  ///< what the whole table holds
  bool empty() const { return rows.empty(); }
};

/// One chart of the training targets: bars per name (one series of values per name), or
/// histograms (each series its own x values) when `names` is empty.
struct SummaryChart {
  struct Series {
    std::string name;
    std::vector<double> x;  ///< a histogram's bin centres (empty for bars)
    std::vector<double> y;
  };
  std::string title;  ///< the studio's tab ("Label frequencies")
  std::vector<std::string> names;
  std::vector<Series> series;
  std::string xLabel, yLabel;
};

/// What a task's statistics say of a training split. Names read from files stay raw here:
/// whoever prints them to a terminal makes them printable.
struct TargetSummary {
  /// `data-stats --json`'s member for it ("labels", "targets", "pixels", "boxes"), in place
  /// of the per-class counts of data with one class per sample.
  std::string jsonKey;
  Json json;
  /// What `data-stats` prints: the table, then the lines.
  SummaryTable table;
  std::vector<std::string> lines;
  /// What the Data page draws: the chart, and a second table in its own tab when `view` has
  /// rows (titled `viewTitle`).
  SummaryChart chart;
  SummaryTable view;
  std::string viewTitle;
};

/// A task's count of its training targets, one sample at a time.
class TargetStatistics {
 public:
  virtual ~TargetStatistics() = default;
  /// Before the first sample: the source and the data's classes and regression targets.
  virtual void begin(const DatasetSource& source, const std::vector<std::string>& classes,
                     const std::vector<std::string>& targets) = 0;
  /// Counts the training sample `index`; throws SampleError when its target cannot be read
  /// (the scan lists it under on_error "skip" and leaves it out, as training would).
  virtual void add(const DatasetSource& source, std::int64_t index) = 0;
  virtual TargetSummary summary() const = 0;
};
using TargetStatisticsFactory = std::function<std::unique_ptr<TargetStatistics>()>;

}  // namespace netsmith::data
