#include "eval/embedding.h"

#include <cmath>
#include <cstdio>

#include "common/file_util.h"
#include "data/csv_table.h"
#include "eval/evaluation.h"

namespace netsmith::eval {

EmbeddingRows embeddingRows(const eval::Evaluation& e) {
  EmbeddingRows out;
  out.width = e.featureWidth;
  if (out.width <= 0) return out;
  for (std::size_t i = 0; i < e.samples.size(); ++i) {
    const auto p = e.samples[i].position;
    if (p < 0 || std::size_t((p + 1) * out.width) > e.features.size()) continue;
    out.features.insert(out.features.end(), e.features.begin() + p * out.width,
                        e.features.begin() + (p + 1) * out.width);
    out.samples.push_back(i);
  }
  return out;
}

void writeEmbeddingCsv(const std::string& path, const eval::Evaluation& e,
                       const EmbeddingRows& rows, const Embedding& embedding) {
  std::string text = "position,sample,label,predicted,confidence,x,y";
  for (std::int64_t k = 0; k < rows.width; ++k)
    text += ",f" + std::to_string(k);
  text += '\n';
  char number[64];
  for (std::size_t r = 0; r < rows.samples.size(); ++r) {
    const float x = embedding.xy[2 * r], y = embedding.xy[2 * r + 1];
    if (!std::isfinite(x) || !std::isfinite(y)) continue;
    const auto& s = e.samples[rows.samples[r]];
    const auto p = std::size_t(s.position);
    text += std::to_string(s.position) + ',' +
            data::csvTextCell(p < e.featureSamples.size() ? e.featureSamples[p] : std::string()) +
            ',';
    std::snprintf(number, sizeof number, "%lld,%lld,%.9g,%.9g,%.9g", (long long)s.label,
                  (long long)s.predicted, s.top.empty() ? 0.0 : s.top.front().second, double(x),
                  double(y));
    text += number;
    for (std::int64_t k = 0; k < rows.width; ++k) {
      std::snprintf(number, sizeof number, ",%.9g",
                    double(rows.features[r * std::size_t(rows.width) + std::size_t(k)]));
      text += number;
    }
    text += '\n';
  }
  writeFileAtomically(path, text);
}

}  // namespace netsmith::eval
