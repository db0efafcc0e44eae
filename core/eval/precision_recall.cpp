#include "eval/precision_recall.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace netsmith::eval {

PrCurve precisionRecall(std::vector<std::pair<float, bool>> scored, std::size_t maxPoints) {
  PrCurve out;
  std::int64_t positives = 0;
  for (const auto& s : scored)
    positives += s.second;
  if (positives == 0) {
    out.averagePrecision = std::numeric_limits<double>::quiet_NaN();
    return out;
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<double> recall, precision;
  std::int64_t tp = 0, taken = 0;
  double ap = 0, lastRecall = 0;
  for (std::size_t i = 0; i < scored.size(); ++i) {
    tp += scored[i].second;
    ++taken;
    if (i + 1 < scored.size() && scored[i + 1].first == scored[i].first) continue;
    const double r = double(tp) / double(positives), p = double(tp) / double(taken);
    ap += (r - lastRecall) * p;
    lastRecall = r;
    recall.push_back(r);
    precision.push_back(p);
  }
  out.averagePrecision = ap;
  const std::size_t n = recall.size();
  const std::size_t keep = std::max<std::size_t>(2, maxPoints);
  if (n <= keep) {
    out.recall = std::move(recall);
    out.precision = std::move(precision);
    return out;
  }
  for (std::size_t k = 0; k < keep; ++k) {
    const std::size_t i = k * (n - 1) / (keep - 1);
    out.recall.push_back(recall[i]);
    out.precision.push_back(precision[i]);
  }
  return out;
}

}  // namespace netsmith::eval
