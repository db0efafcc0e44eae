#include "task/prediction_csv.h"

#include <cstdio>

#include "common/file_util.h"
#include "common/output_folder.h"
#include "data/csv_table.h"

namespace netsmith::task {

std::string pngName(std::int64_t n) {
  char name[32];
  std::snprintf(name, sizeof name, "%06lld.png", static_cast<long long>(n));
  return name;
}

std::string floatCell(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", double(v));
  return buf;
}

std::vector<std::string> namedColumns(const std::string& prefix,
                                      const std::vector<std::string>& names, std::int64_t count) {
  std::vector<std::string> out;
  for (std::int64_t k = 0; k < count; ++k)
    out.push_back(prefix +
                  (std::size_t(k) < names.size() ? names[std::size_t(k)] : std::to_string(k)));
  return out;
}

std::vector<std::vector<std::string>> truthAndValueCells(const torch::Tensor& truth,
                                                         const torch::Tensor& values, bool flags) {
  const auto y = truth.defined() ? truth.to(torch::kCPU).to(torch::kFloat).contiguous() : truth;
  const auto v = values.to(torch::kCPU).to(torch::kFloat).contiguous();
  const auto n = v.size(0), k = v.size(1);
  const float* yp = y.defined() ? y.data_ptr<float>() : nullptr;
  const float* vp = v.data_ptr<float>();
  std::vector<std::vector<std::string>> rows;
  for (std::int64_t i = 0; i < n; ++i) {
    std::vector<std::string> row;
    for (std::int64_t c = 0; yp && c < k; ++c)
      row.push_back(flags ? (yp[i * k + c] > 0.5f ? "1" : "0") : floatCell(yp[i * k + c]));
    for (std::int64_t c = 0; c < k; ++c)
      row.push_back(floatCell(vp[i * k + c]));
    rows.push_back(std::move(row));
  }
  return rows;
}

CsvPredictionWriter::CsvPredictionWriter(std::string path, const data::SampleSet& set,
                                         const std::vector<std::string>& truthColumns,
                                         const std::vector<std::string>& valueColumns, Cells cells)
    : m_path(std::move(path)), m_set(set), m_cells(std::move(cells)) {
  checkOutputFile(m_path);  // before the evaluation, not after it
  m_text = "path";
  if (set.source->labelled())
    for (const auto& c : truthColumns)
      m_text += "," + data::csvTextCell(c);
  for (const auto& c : valueColumns)
    m_text += "," + data::csvTextCell(c);
  m_text += "\n";
}

void CsvPredictionWriter::add(const torch::Tensor& output, const torch::Tensor& target,
                              const std::vector<std::int64_t>& samples) {
  const auto rows = m_cells(output.to(torch::kCPU).to(torch::kFloat).contiguous(),
                            target.defined() ? target.to(torch::kCPU).contiguous() : target);
  for (std::size_t i = 0; i < rows.size() && i < samples.size(); ++i) {
    m_text += data::csvTextCell(m_set.describe(samples[i]));
    for (const auto& cell : rows[i])
      m_text += "," + cell;
    m_text += "\n";
  }
}

void CsvPredictionWriter::finish() {
  writeFileAtomically(m_path, m_text);
}

std::unique_ptr<PredictionWriter> Task::predictionWriter(const std::string&,
                                                         const data::SampleSet&) const {
  return nullptr;
}

}  // namespace netsmith::task
