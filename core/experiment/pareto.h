#pragma once

// The Pareto front of models weighed on two things at once: a cost (batch-1 latency, file
// size), lower better, and a score (the task's headline figure), higher or lower better. A
// model is on the front when no other is at least as good on both and better on one. The Runs
// and Experiments pages mark it over their accuracy-against-cost plots. No LibTorch.
#include <cstddef>
#include <vector>

namespace netsmith::experiment {

struct CostPoint {
  double cost = 0;   ///< lower is better
  double score = 0;  ///< better as `higherIsBetter` says
};

/// The indices of the points on the front, by rising cost (so by rising quality too). NaN
/// points are left out; of points equal on both, the first is kept.
std::vector<std::size_t> paretoFront(const std::vector<CostPoint>& points, bool higherIsBetter);

}  // namespace netsmith::experiment
