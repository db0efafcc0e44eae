// The Pareto front of cost against score, checked against the definition counted pair by pair.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>

#include "experiment/pareto.h"

using netsmith::experiment::CostPoint;
using netsmith::experiment::paretoFront;

namespace {

/// By the definition: no other point at least as good on both and better on one; of equal
/// points the first.
std::set<std::size_t> dominanceFront(const std::vector<CostPoint>& p, bool higherIsBetter) {
  std::set<std::size_t> front;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (std::isnan(p[i].cost) || std::isnan(p[i].score)) continue;
    bool beaten = false;
    for (std::size_t j = 0; j < p.size() && !beaten; ++j) {
      if (j == i || std::isnan(p[j].cost) || std::isnan(p[j].score)) continue;
      const double qi = higherIsBetter ? p[i].score : -p[i].score;
      const double qj = higherIsBetter ? p[j].score : -p[j].score;
      const bool atLeast = p[j].cost <= p[i].cost && qj >= qi;
      const bool better = p[j].cost < p[i].cost || qj > qi;
      beaten = atLeast && (better || j < i);
    }
    if (!beaten) front.insert(i);
  }
  return front;
}

}  // namespace

TEST(Pareto, TheFrontIsWhatNoOtherPointBeats) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> small(0, 9);
  for (int round = 0; round < 200; ++round) {
    std::vector<CostPoint> points(std::size_t(1 + round % 25));
    for (auto& p : points) {
      p.cost = small(rng) * 0.5;  // ties on purpose
      p.score = small(rng) * 0.1;
    }
    if (round % 7 == 0) points[0].score = std::nan("");
    for (bool higher : {true, false}) {
      const auto front = paretoFront(points, higher);
      EXPECT_EQ(std::set<std::size_t>(front.begin(), front.end()), dominanceFront(points, higher));
      for (std::size_t k = 1; k < front.size(); ++k) {
        EXPECT_LT(points[front[k - 1]].cost, points[front[k]].cost);
        EXPECT_EQ(points[front[k - 1]].score < points[front[k]].score, higher);
      }
    }
  }
}

TEST(Pareto, ASmallCaseByHand) {
  // (latency ms, accuracy): the 0.5 ms model beats the 0.6 ms one; 0.9 ms is best.
  const std::vector<CostPoint> points{
      {0.6, 0.80}, {0.5, 0.85}, {0.9, 0.91}, {0.3, 0.70}, {1.2, 0.90}};
  EXPECT_EQ(paretoFront(points, true), (std::vector<std::size_t>{3, 1, 2}));
  // Lower is better (an error): the cheapest is best.
  EXPECT_EQ(paretoFront(points, false), (std::vector<std::size_t>{3}));
}
