#pragma once

// `eval --predictions` as a CSV file: a path column naming each sample as the data names it,
// then the task's columns, one row per sample in split order; numbers written so they read back
// exactly (float32 as %.9g). Written atomically when the evaluation ends.
#include <functional>
#include <string>
#include <vector>

#include "task/task.h"

namespace netsmith::task {

/// The name of the n-th picture a predictions writer writes: "000042.png" (masks, overlays,
/// drawn boxes), sorting as they were written.
std::string pngName(std::int64_t n);

/// "0.123456791", the shortest text that reads back as the same float.
std::string floatCell(float v);

/// "<prefix><name>" for each of `count` classes or targets (by index past `names`).
std::vector<std::string> namedColumns(const std::string& prefix,
                                      const std::vector<std::string>& names, std::int64_t count);

/// One row per sample: its truths (N x K; as 1/0 when `flags`, else as numbers; none when
/// `truth` is undefined), then its values (N x K floats).
std::vector<std::vector<std::string>> truthAndValueCells(const torch::Tensor& truth,
                                                         const torch::Tensor& values, bool flags);

class CsvPredictionWriter : public PredictionWriter {
 public:
  /// The cells (after the path) of every sample of a batch, in batch order: its truth's
  /// (none when `target` is undefined: images without labels), then its values'.
  using Cells = std::function<std::vector<std::vector<std::string>>(const torch::Tensor& output,
                                                                    const torch::Tensor& target)>;
  /// The truth columns are written only for a set whose source is labelled.
  CsvPredictionWriter(std::string path, const data::SampleSet& set,
                      const std::vector<std::string>& truthColumns,
                      const std::vector<std::string>& valueColumns, Cells cells);
  void add(const torch::Tensor& output, const torch::Tensor& target,
           const std::vector<std::int64_t>& samples) override;
  void finish() override;

 private:
  std::string m_path;
  const data::SampleSet& m_set;
  Cells m_cells;
  std::string m_text;
};

}  // namespace netsmith::task
