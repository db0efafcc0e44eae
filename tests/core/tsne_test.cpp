// The embedding explorer's layout (eval/tsne.h): the Barnes-Hut repulsion against every pair
// summed here, and t-SNE keeping well-separated clusters apart.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "eval/tsne.h"

namespace netsmith {
namespace {

std::vector<double> randomLayout(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0, 3);
  std::vector<double> y(2 * n);
  for (auto& v : y)
    v = normal(rng);
  // Two points at one place: the tree keeps them in one leaf.
  y[2] = y[0];
  y[3] = y[1];
  return y;
}

TEST(Tsne, RepulsionMatchesEveryPairExactlyAtThetaZeroAndCloselyAtHalf) {
  const std::size_t n = 300;
  const auto y = randomLayout(n, 7);
  std::vector<double> exact(2 * n, 0.0);
  double z = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      if (i == j) continue;
      const double dx = y[2 * i] - y[2 * j], dy = y[2 * i + 1] - y[2 * j + 1];
      const double q = 1 / (1 + dx * dx + dy * dy);
      z += q;
      exact[2 * i] += q * q * dx;
      exact[2 * i + 1] += q * q * dy;
    }
  std::vector<double> force;
  const double z0 = eval::tsneRepulsion(y, 0.0, force, 2);
  EXPECT_NEAR(z0, z, 1e-9 * z);
  for (std::size_t c = 0; c < 2 * n; ++c)
    ASSERT_NEAR(force[c], exact[c], 1e-9) << c;
  // Barnes-Hut at theta 0.5: within a few per cent of the exact sums.
  const double zHalf = eval::tsneRepulsion(y, 0.5, force, 1);
  EXPECT_NEAR(zHalf, z, 0.02 * z);
  double error = 0, norm = 0;
  for (std::size_t c = 0; c < 2 * n; ++c) {
    error += std::pow(force[c] - exact[c], 2);
    norm += exact[c] * exact[c];
  }
  EXPECT_LT(std::sqrt(error / norm), 0.05);
}

TEST(Tsne, KeepsSeparatedClustersApartAndSkipsNonFiniteRows) {
  // Six clusters in 40 dimensions, 80 points each, plus one row with a NaN.
  const int clusters = 6, per = 80, width = 40;
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0, 1);
  std::vector<float> centre(std::size_t(clusters * width));
  for (auto& v : centre)
    v = 6 * normal(rng);
  const std::int64_t n = clusters * per + 1;
  std::vector<float> features;
  std::vector<int> label;
  for (int i = 0; i < clusters * per; ++i) {
    const int c = i % clusters;
    label.push_back(c);
    for (int k = 0; k < width; ++k)
      features.push_back(centre[std::size_t(c * width + k)] + normal(rng));
  }
  for (int k = 0; k < width; ++k)
    features.push_back(k == 3 ? NAN : 0.0f);
  int calls = 0;
  eval::EmbeddingOptions o;
  o.iterations = 500;
  o.progress = [&](int done, int total) {
    EXPECT_LE(done, total);
    calls += done > 0;  // done 0: the neighbour search
    return true;
  };
  const auto e = eval::embedFeatures(features, n, width, o);
  EXPECT_EQ(e.iterations, 500);
  EXPECT_EQ(calls, 50);
  ASSERT_EQ(e.xy.size(), std::size_t(2 * n));
  EXPECT_TRUE(std::isnan(e.xy[std::size_t(2 * (n - 1))]));
  EXPECT_GT(e.divergence, 0);
  // Every point's nearest neighbour in the plane is of its own cluster.
  int same = 0;
  for (int i = 0; i < clusters * per; ++i) {
    double best = 1e300;
    int nearest = -1;
    for (int j = 0; j < clusters * per; ++j) {
      if (j == i) continue;
      const double d = std::pow(e.xy[std::size_t(2 * i)] - e.xy[std::size_t(2 * j)], 2) +
                       std::pow(e.xy[std::size_t(2 * i + 1)] - e.xy[std::size_t(2 * j + 1)], 2);
      if (d < best) {
        best = d;
        nearest = j;
      }
    }
    same += label[std::size_t(nearest)] == label[std::size_t(i)];
  }
  EXPECT_GE(same, clusters * per - 2);
  // Stopped early, it says so and returns the layout it had.
  o.progress = [](int done, int) { return done < 100; };
  const auto stopped = eval::embedFeatures(features, n, width, o);
  EXPECT_TRUE(stopped.cancelled);
  EXPECT_EQ(stopped.iterations, 100);
  // Stopped during the neighbour search: no layout.
  o.progress = [](int, int) { return false; };
  const auto early = eval::embedFeatures(features, n, width, o);
  EXPECT_TRUE(early.cancelled);
  EXPECT_EQ(early.iterations, 0);
  EXPECT_TRUE(std::isnan(early.xy[0]));
}

TEST(Tsne, RefusesFeaturesOfTheWrongSize) {
  EXPECT_THROW(eval::embedFeatures(std::vector<float>(10), 3, 4), std::exception);
}

}  // namespace
}  // namespace netsmith
