#pragma once

// A model's features drawn in two dimensions, for the Evaluation page's embedding explorer:
// PCA down to at most 50 dimensions (OpenCV), then t-SNE (van der Maaten and Hinton, 2008) with
// the Barnes-Hut approximation (van der Maaten, "Accelerating t-SNE using Tree-Based
// Algorithms", JMLR 2014): input similarities over each point's 3 x perplexity nearest
// neighbours, the repulsion summarised by a quadtree where a cell is small against its
// distance (theta). Started from the first two principal components, so that the same
// features give the same picture. Plain numbers in and out: no LibTorch.
#include <cstdint>
#include <functional>
#include <vector>

namespace netsmith::eval {

struct EmbeddingOptions {
  double perplexity = 30;  ///< clamped below (points - 1) / 3
  int iterations = 1000;
  /// Barnes-Hut's accuracy: a cell whose width over its distance is below theta counts as one
  /// point at its centre of mass; 0 is exact (every pair, O(n^2)).
  double theta = 0.5;
  int pcaDimensions = 50;
  unsigned threads = 0;  ///< 0: the machine's cores (at most 8)
  /// Called every few iterations with (done, total), and with done 0 during the neighbour
  /// search before them; return false to stop (the layout so far is returned, `cancelled` set;
  /// stopped before the first iteration, every point is NaN).
  std::function<bool(int, int)> progress;
};

struct Embedding {
  /// Row-major points x 2; NaN for a row whose features were not all finite (left out).
  std::vector<float> xy;
  std::int64_t points = 0;
  int iterations = 0;     ///< done
  double divergence = 0;  ///< KL(P || Q) at the end (Q's normaliser from the tree)
  bool cancelled = false;
};

/// The first `dimensions` principal components of `features` (row-major n x width), row-major
/// n x min(dimensions, width, n). Rows must be finite.
std::vector<float> principalComponents(const std::vector<float>& features, std::int64_t n,
                                       std::int64_t width, int dimensions);

/// `features` (row-major n x width) laid out in 2-D. Throws netsmith::Error when the sizes
/// disagree.
Embedding embedFeatures(const std::vector<float>& features, std::int64_t n, std::int64_t width,
                        const EmbeddingOptions& options = {});

/// t-SNE's repulsion at layout `y` (row-major n x 2): for each point, the sum over the others of
/// q^2 (y_i - y_j) with q = 1 / (1 + |y_i - y_j|^2), into `force` (n x 2); returns Z, the sum
/// of q over all ordered pairs i != j. Barnes-Hut with `theta` (0: exact).
double tsneRepulsion(const std::vector<double>& y, double theta, std::vector<double>& force,
                     unsigned threads = 1);

}  // namespace netsmith::eval
