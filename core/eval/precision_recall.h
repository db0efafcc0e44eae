#pragma once

// One class's precision-recall curve and average precision from scores, as scikit-learn's
// precision_recall_curve and average_precision_score compute them: a point at each distinct
// score, highest first (a threshold there takes every sample of that score); AP = sum over the
// points of (recall_n - recall_{n-1}) x precision_n. Plain numbers: no LibTorch.
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace netsmith::eval {

struct PrCurve {
  std::vector<double> recall, precision;  ///< at most maxPoints points, recall rising
  double averagePrecision = 0;            ///< NaN when there is no positive
};

/// `scored`: (score, whether the sample is a positive) for every sample. The curve keeps at
/// most `maxPoints` points (evenly chosen, the last always); AP is over all of them.
PrCurve precisionRecall(std::vector<std::pair<float, bool>> scored, std::size_t maxPoints = 256);

}  // namespace netsmith::eval
