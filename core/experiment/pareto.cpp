#include "experiment/pareto.h"

#include <algorithm>
#include <cmath>

namespace netsmith::experiment {

std::vector<std::size_t> paretoFront(const std::vector<CostPoint>& points, bool higherIsBetter) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < points.size(); ++i)
    if (!std::isnan(points[i].cost) && !std::isnan(points[i].score)) order.push_back(i);
  // Quality as "higher is better" either way.
  const auto quality = [&](std::size_t i) {
    return higherIsBetter ? points[i].score : -points[i].score;
  };
  // By cost, then best quality first, then first given: a sweep keeps each point that beats
  // every cheaper one.
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (points[a].cost != points[b].cost) return points[a].cost < points[b].cost;
    return quality(a) > quality(b);
  });
  std::vector<std::size_t> front;
  for (std::size_t i : order)
    if (front.empty() || quality(i) > quality(front.back())) front.push_back(i);
  return front;
}

}  // namespace netsmith::experiment
