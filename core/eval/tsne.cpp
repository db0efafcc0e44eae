#include "eval/tsne.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <opencv2/core.hpp>
#include <thread>
#include <utility>
#include <vector>

#include "common/error.h"

namespace netsmith::eval {

namespace {

unsigned threadCount(unsigned wanted) {
  if (wanted > 0) return wanted;
  return std::max(1u, std::min(8u, std::thread::hardware_concurrency()));
}

/// Runs body(begin, end) over [0, n) split among `threads` threads.
template <typename Body>
void parallelRanges(std::int64_t n, unsigned threads, const Body& body) {
  threads = unsigned(std::max<std::int64_t>(1, std::min<std::int64_t>(threads, n / 64 + 1)));
  if (threads <= 1) {
    body(std::int64_t(0), n);
    return;
  }
  std::vector<std::thread> pool;
  const std::int64_t step = (n + threads - 1) / threads;
  for (unsigned t = 0; t < threads; ++t) {
    const std::int64_t begin = std::min<std::int64_t>(n, t * step);
    const std::int64_t end = std::min<std::int64_t>(n, begin + step);
    pool.emplace_back([&body, begin, end] { body(begin, end); });
  }
  for (auto& th : pool)
    th.join();
}

/// A quadtree over 2-D points: each cell keeps its points' count and centre of mass; a leaf
/// holds one location (points at the same place, or below the depth limit, share it).
class QuadTree {
 public:
  explicit QuadTree(const std::vector<double>& y) {
    const std::size_t n = y.size() / 2;
    double minX = std::numeric_limits<double>::max(), minY = minX;
    double maxX = std::numeric_limits<double>::lowest(), maxY = maxX;
    for (std::size_t i = 0; i < n; ++i) {
      minX = std::min(minX, y[2 * i]);
      maxX = std::max(maxX, y[2 * i]);
      minY = std::min(minY, y[2 * i + 1]);
      maxY = std::max(maxY, y[2 * i + 1]);
    }
    const double half = std::max({maxX - minX, maxY - minY, 1e-9}) / 2 * (1 + 1e-6);
    m_nodes.reserve(4 * n + 1);
    m_nodes.push_back(Node{(minX + maxX) / 2, (minY + maxY) / 2, half});
    for (std::size_t i = 0; i < n; ++i)
      insert(y[2 * i], y[2 * i + 1]);
  }

  /// Point (x, y)'s repulsion: adds sum q^2 (p - c) over the others to (fx, fy), returns the
  /// sum of q (both over the cells the criterion summarises, weighted by their counts).
  double repulse(double x, double y, double theta, double& fx, double& fy) const {
    double sumQ = 0;
    std::int32_t stack[512];
    int top = 0;
    stack[top++] = 0;
    const double theta2 = theta * theta;
    while (top > 0) {
      const Node& node = m_nodes[std::size_t(stack[--top])];
      if (node.count == 0) continue;
      const double dx = x - node.comX, dy = y - node.comY;
      const double d2 = dx * dx + dy * dy;
      const bool leaf = node.child < 0;
      if (leaf && d2 == 0) {
        sumQ += double(node.count - 1);  // the point itself is one of them
        continue;
      }
      const double width = 2 * node.half;
      if (leaf || width * width < theta2 * d2) {
        const double q = 1 / (1 + d2);
        const double w = double(node.count) * q;
        sumQ += w;
        fx += w * q * dx;
        fy += w * q * dy;
        continue;
      }
      if (top + 4 > 512) continue;  // deeper than the depth limit allows: not reached
      for (int c = 0; c < 4; ++c)
        stack[top++] = node.child + c;
    }
    return sumQ;
  }

 private:
  struct Node {
    double cx = 0, cy = 0, half = 0;
    double comX = 0, comY = 0;
    std::int64_t count = 0;
    std::int32_t child = -1;  ///< first of four children (-1: a leaf)
    int depth = 0;
  };
  static constexpr int kMaxDepth = 48;

  void insert(double x, double y) {
    std::size_t at = 0;
    std::int64_t weight = 1;
    while (true) {
      Node& node = m_nodes[at];
      if (node.child < 0) {
        if (node.count == 0) {
          node.comX = x;
          node.comY = y;
          node.count = weight;
          return;
        }
        if ((node.comX == x && node.comY == y) || node.depth >= kMaxDepth) {
          node.comX =
              (node.comX * double(node.count) + x * double(weight)) / double(node.count + weight);
          node.comY =
              (node.comY * double(node.count) + y * double(weight)) / double(node.count + weight);
          node.count += weight;
          return;
        }
        subdivide(at);
        // The leaf's points move down into their child; then (x, y) goes on down.
        Node& parent = m_nodes[at];
        const std::size_t down = childFor(at, parent.comX, parent.comY);
        m_nodes[down].comX = m_nodes[at].comX;
        m_nodes[down].comY = m_nodes[at].comY;
        m_nodes[down].count = m_nodes[at].count;
      }
      Node& inner = m_nodes[at];
      inner.comX =
          (inner.comX * double(inner.count) + x * double(weight)) / double(inner.count + weight);
      inner.comY =
          (inner.comY * double(inner.count) + y * double(weight)) / double(inner.count + weight);
      inner.count += weight;
      at = childFor(at, x, y);
    }
  }

  void subdivide(std::size_t at) {
    const auto first = std::int32_t(m_nodes.size());
    const Node parent = m_nodes[at];
    const double h = parent.half / 2;
    for (int c = 0; c < 4; ++c) {
      Node child;
      child.cx = parent.cx + ((c & 1) ? h : -h);
      child.cy = parent.cy + ((c & 2) ? h : -h);
      child.half = h;
      child.depth = parent.depth + 1;
      m_nodes.push_back(child);
    }
    m_nodes[at].child = first;
  }

  std::size_t childFor(std::size_t at, double x, double y) const {
    const Node& node = m_nodes[at];
    return std::size_t(node.child + (x >= node.cx ? 1 : 0) + (y >= node.cy ? 2 : 0));
  }

  std::vector<Node> m_nodes;
};

/// Input similarities: for each point, a Gaussian over its k nearest neighbours whose entropy
/// gives the perplexity; then symmetrised, P_ij = (p_j|i + p_i|j) / 2n, as rows of a sparse
/// matrix (row offsets, columns, values).
struct SparseP {
  std::vector<std::int64_t> offsets;
  std::vector<std::int64_t> columns;
  std::vector<double> values;
};

/// Each point's squared norm, summed in double and kept as a float.
std::vector<float> squaredNorms(const std::vector<float>& x, std::int64_t n, std::int64_t d) {
  std::vector<float> norms(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    double s = 0;
    for (std::int64_t c = 0; c < d; ++c)
      s += double(x[std::size_t(i * d + c)]) * x[std::size_t(i * d + c)];
    norms[std::size_t(i)] = float(s);
  }
  return norms;
}

/// Point i's squared distance to every point j (to itself infinite) into `dist`, as (d2, j).
void distancesFrom(const std::vector<float>& x, const std::vector<float>& norms, std::int64_t i,
                   std::int64_t n, std::int64_t d,
                   std::vector<std::pair<float, std::int64_t>>& dist) {
  const float* xi = &x[std::size_t(i * d)];
  for (std::int64_t j = 0; j < n; ++j) {
    const float* xj = &x[std::size_t(j * d)];
    float dot = 0;
    for (std::int64_t c = 0; c < d; ++c)
      dot += xi[c] * xj[c];
    const float d2 = std::max(0.0f, norms[std::size_t(i)] + norms[std::size_t(j)] - 2 * dot);
    dist[std::size_t(j)] = {j == i ? std::numeric_limits<float>::infinity() : d2, j};
  }
}

/// p_j|i over the k nearest (the first k of `dist`, sorted): a Gaussian of perplexity's entropy.
std::vector<double> conditionalRow(const std::vector<std::pair<float, std::int64_t>>& dist,
                                   std::int64_t k, double perplexity) {
  // Binary search for the precision beta whose distribution has entropy log(perplexity).
  const double target = std::log(perplexity);
  double beta = 1, low = 0, high = std::numeric_limits<double>::infinity();
  std::vector<double> p(static_cast<std::size_t>(k));
  // Distances relative to the nearest keep exp() in range whatever their scale.
  const double nearest = dist[0].first;
  for (int step = 0; step < 200; ++step) {
    double sum = 0, weighted = 0;
    for (std::int64_t m = 0; m < k; ++m) {
      const double r = double(dist[std::size_t(m)].first) - nearest;
      p[std::size_t(m)] = std::exp(-beta * r);
      sum += p[std::size_t(m)];
      weighted += r * p[std::size_t(m)];
    }
    const double entropy = std::log(sum) + beta * weighted / sum;
    for (auto& v : p)
      v /= sum;
    if (std::abs(entropy - target) < 1e-5) break;
    if (entropy > target) {
      low = beta;
      beta = std::isinf(high) ? beta * 2 : (beta + high) / 2;
    } else {
      high = beta;
      beta = (beta + low) / 2;
    }
  }
  return p;
}

/// Each point's k nearest neighbours and their p_j|i into `neighbour` and `conditional` (n x k);
/// returns true when `keepGoing` stopped the search.
bool findNeighbours(const std::vector<float>& x, std::int64_t n, std::int64_t d, std::int64_t k,
                    double perplexity, unsigned threads, const std::function<bool()>& keepGoing,
                    std::vector<std::int64_t>& neighbour, std::vector<double>& conditional) {
  // The neighbour search is O(n^2): the first thread asks now and then whether to go on, and
  // every thread stops when it says no.
  std::atomic<bool> stop{false};
  const std::vector<float> norms = squaredNorms(x, n, d);
  parallelRanges(n, threads, [&](std::int64_t begin, std::int64_t end) {
    std::vector<std::pair<float, std::int64_t>> dist(static_cast<std::size_t>(n));
    for (std::int64_t i = begin; i < end; ++i) {
      if ((i - begin) % 64 == 0) {
        if (begin == 0 && keepGoing && !keepGoing()) stop = true;
        if (stop) return;
      }
      distancesFrom(x, norms, i, n, d, dist);
      std::partial_sort(dist.begin(), dist.begin() + k, dist.end());
      const std::vector<double> p = conditionalRow(dist, k, perplexity);
      for (std::int64_t m = 0; m < k; ++m) {
        neighbour[std::size_t(i * k + m)] = dist[std::size_t(m)].second;
        conditional[std::size_t(i * k + m)] = p[std::size_t(m)];
      }
    }
  });
  return stop;
}

/// Symmetrised P_ij = (p_j|i + p_i|j) / 2n from the neighbours' p_j|i (n x k), each row's
/// columns in order.
SparseP symmetrise(const std::vector<std::int64_t>& neighbour,
                   const std::vector<double>& conditional, std::int64_t n, std::int64_t k) {
  // Symmetrise: every (i, j) and (j, i) entry, summed.
  std::vector<std::int64_t> rowSize(static_cast<std::size_t>(n), 0);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t m = 0; m < k; ++m) {
      ++rowSize[std::size_t(i)];
      ++rowSize[std::size_t(neighbour[std::size_t(i * k + m)])];
    }
  SparseP out;
  out.offsets.assign(std::size_t(n + 1), 0);
  for (std::int64_t i = 0; i < n; ++i)
    out.offsets[std::size_t(i + 1)] = out.offsets[std::size_t(i)] + rowSize[std::size_t(i)];
  std::vector<std::pair<std::int64_t, double>> entries(std::size_t(out.offsets.back()));
  std::vector<std::int64_t> fill(out.offsets.begin(), out.offsets.end() - 1);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t m = 0; m < k; ++m) {
      const auto j = neighbour[std::size_t(i * k + m)];
      const double v = conditional[std::size_t(i * k + m)];
      entries[std::size_t(fill[std::size_t(i)]++)] = {j, v};
      entries[std::size_t(fill[std::size_t(j)]++)] = {i, v};
    }
  const double scale = 1.0 / (2.0 * double(n));
  out.offsets[0] = 0;
  std::int64_t written = 0;
  std::vector<std::int64_t> newOffsets(std::size_t(n + 1), 0);
  for (std::int64_t i = 0; i < n; ++i) {
    auto first = entries.begin() + out.offsets[std::size_t(i)];
    auto last = entries.begin() + out.offsets[std::size_t(i + 1)];
    std::sort(first, last);
    for (auto it = first; it != last;) {
      double sum = 0;
      const auto j = it->first;
      for (; it != last && it->first == j; ++it)
        sum += it->second;
      out.columns.push_back(j);
      out.values.push_back(sum * scale);
      ++written;
    }
    newOffsets[std::size_t(i + 1)] = written;
  }
  out.offsets = std::move(newOffsets);
  return out;
}

/// P over the points `x` (n x d); empty, `stopped` set, when `keepGoing` says no.
SparseP inputSimilarities(const std::vector<float>& x, std::int64_t n, std::int64_t d,
                          double perplexity, unsigned threads,
                          const std::function<bool()>& keepGoing, bool& stopped) {
  const std::int64_t k = std::min<std::int64_t>(n - 1, std::int64_t(3 * perplexity));
  std::vector<std::int64_t> neighbour(std::size_t(n * k));
  std::vector<double> conditional(std::size_t(n * k));
  stopped = findNeighbours(x, n, d, k, perplexity, threads, keepGoing, neighbour, conditional);
  if (stopped) return {};
  return symmetrise(neighbour, conditional, n, k);
}

/// Each row's index in `features` (n x width) whose values are all finite.
std::vector<std::int64_t> finiteRows(const std::vector<float>& features, std::int64_t n,
                                     std::int64_t width) {
  std::vector<std::int64_t> rows;
  for (std::int64_t i = 0; i < n; ++i) {
    const auto* f = &features[std::size_t(i * width)];
    if (std::all_of(f, f + width, [](float v) { return std::isfinite(v); })) rows.push_back(i);
  }
  return rows;
}

/// The principal components of `features`' `rows`, scaled into [-1, 1].
std::vector<float> scaledComponents(const std::vector<float>& features,
                                    const std::vector<std::int64_t>& rows, std::int64_t width,
                                    int dimensions) {
  const auto m = std::int64_t(rows.size());
  std::vector<float> kept(std::size_t(m * width));
  for (std::int64_t i = 0; i < m; ++i)
    std::copy_n(&features[std::size_t(rows[std::size_t(i)] * width)], width,
                kept.begin() + i * width);
  std::vector<float> reduced = principalComponents(kept, m, width, dimensions);
  // Scaled so that distances are of order one, as the perplexity search expects.
  double maxAbs = 0;
  for (float v : reduced)
    maxAbs = std::max(maxAbs, double(std::abs(v)));
  if (maxAbs > 0)
    for (auto& v : reduced)
      v = float(v / maxAbs);
  return reduced;
}

/// The starting layout (m x 2) from the principal components `reduced` (m x d).
std::vector<double> initialLayout(const std::vector<float>& reduced, std::int64_t m,
                                  std::int64_t d) {
  // Started from the first two principal components, scaled to a standard deviation of 1e-4.
  std::vector<double> y(std::size_t(2 * m), 0.0);
  for (int c = 0; c < 2 && c < d; ++c) {
    double mean = 0, var = 0;
    for (std::int64_t i = 0; i < m; ++i)
      mean += reduced[std::size_t(i * d + c)];
    mean /= double(m);
    for (std::int64_t i = 0; i < m; ++i)
      var += std::pow(reduced[std::size_t(i * d + c)] - mean, 2);
    const double sd = std::sqrt(var / double(m));
    for (std::int64_t i = 0; i < m; ++i)
      y[std::size_t(2 * i + c)] = sd > 0 ? (reduced[std::size_t(i * d + c)] - mean) / sd * 1e-4 : 0;
  }
  return y;
}

/// The gradient at layout `y` into `grad`: 4 (exaggeration x P's attraction - repulsion / Z).
void klGradient(const SparseP& p, const std::vector<double>& y,
                const std::vector<double>& repulsion, double z, double exaggeration, std::int64_t m,
                unsigned threads, std::vector<double>& grad) {
  parallelRanges(m, threads, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      double ax = 0, ay = 0;
      for (auto e = p.offsets[std::size_t(i)]; e < p.offsets[std::size_t(i + 1)]; ++e) {
        const auto j = p.columns[std::size_t(e)];
        const double dx = y[std::size_t(2 * i)] - y[std::size_t(2 * j)];
        const double dy = y[std::size_t(2 * i + 1)] - y[std::size_t(2 * j + 1)];
        const double q = 1 / (1 + dx * dx + dy * dy);
        ax += p.values[std::size_t(e)] * q * dx;
        ay += p.values[std::size_t(e)] * q * dy;
      }
      grad[std::size_t(2 * i)] = 4 * (exaggeration * ax - repulsion[std::size_t(2 * i)] / z);
      grad[std::size_t(2 * i + 1)] =
          4 * (exaggeration * ay - repulsion[std::size_t(2 * i + 1)] / z);
    }
  });
}

/// Moves layout `y` (m x 2) so that its mean is at the origin.
void recentre(std::vector<double>& y, std::int64_t m) {
  double mx = 0, my = 0;
  for (std::int64_t i = 0; i < m; ++i) {
    mx += y[std::size_t(2 * i)];
    my += y[std::size_t(2 * i + 1)];
  }
  for (std::int64_t i = 0; i < m; ++i) {
    y[std::size_t(2 * i)] -= mx / double(m);
    y[std::size_t(2 * i + 1)] -= my / double(m);
  }
}

/// Runs the gradient descent on layout `y`, the iterations done (and a cancel) into `out`;
/// returns the last iteration's Z (1 when none ran).
double gradientDescent(const SparseP& p, std::vector<double>& y, std::int64_t m, unsigned threads,
                       const EmbeddingOptions& options, Embedding& out) {
  // Gradient descent with momentum and per-coordinate gains; the first 250 iterations
  // exaggerate P by 12 so that clusters form before they spread (the paper's schedule).
  const int exaggerated = std::min(250, options.iterations / 4);
  const double rate = std::max(double(m) / 12.0 / 4.0, 50.0);
  std::vector<double> update(y.size(), 0.0), gains(y.size(), 1.0), repulsion, grad(y.size());
  double z = 1;
  for (int it = 0; it < options.iterations; ++it) {
    const double exaggeration = it < exaggerated ? 12.0 : 1.0;
    const double momentum = it < exaggerated ? 0.5 : 0.8;
    z = std::max(tsneRepulsion(y, options.theta, repulsion, threads), 1e-12);
    klGradient(p, y, repulsion, z, exaggeration, m, threads, grad);
    for (std::size_t c = 0; c < y.size(); ++c) {
      gains[c] = (grad[c] > 0) != (update[c] > 0) ? gains[c] + 0.2 : std::max(0.01, gains[c] * 0.8);
      update[c] = momentum * update[c] - rate * gains[c] * grad[c];
      y[c] += update[c];
    }
    recentre(y, m);
    out.iterations = it + 1;
    if (options.progress && (it % 10 == 9 || it + 1 == options.iterations) &&
        !options.progress(it + 1, options.iterations)) {
      out.cancelled = true;
      break;
    }
  }
  return z;
}

/// KL(P || Q) over P's entries at layout `y`, Q normalised by `z`.
double klDivergence(const SparseP& p, const std::vector<double>& y, std::int64_t m, double z) {
  // KL(P || Q) over P's entries, Q's normaliser from the last iteration's tree.
  double kl = 0;
  for (std::int64_t i = 0; i < m; ++i)
    for (auto e = p.offsets[std::size_t(i)]; e < p.offsets[std::size_t(i + 1)]; ++e) {
      const auto j = p.columns[std::size_t(e)];
      const double dx = y[std::size_t(2 * i)] - y[std::size_t(2 * j)];
      const double dy = y[std::size_t(2 * i + 1)] - y[std::size_t(2 * j + 1)];
      const double q = 1 / (1 + dx * dx + dy * dy) / z;
      const double pij = p.values[std::size_t(e)];
      if (pij > 0) kl += pij * std::log(pij / std::max(q, 1e-300));
    }
  return kl;
}

}  // namespace

std::vector<float> principalComponents(const std::vector<float>& features, std::int64_t n,
                                       std::int64_t width, int dimensions) {
  if (n <= 0 || width <= 0 || features.size() != std::size_t(n * width))
    throw Error("principal components: " + std::to_string(features.size()) + " values are not " +
                std::to_string(n) + " rows of " + std::to_string(width));
  const int keep = int(std::min<std::int64_t>({std::int64_t(dimensions), width, n}));
  cv::Mat data(int(n), int(width), CV_32F, const_cast<float*>(features.data()));
  cv::PCA pca(data, cv::noArray(), cv::PCA::DATA_AS_ROW, keep);
  cv::Mat projected = pca.project(data);
  projected.convertTo(projected, CV_32F);
  std::vector<float> out(std::size_t(n) * std::size_t(projected.cols));
  for (int r = 0; r < projected.rows; ++r)
    std::copy(projected.ptr<float>(r), projected.ptr<float>(r) + projected.cols,
              out.begin() + std::ptrdiff_t(r) * projected.cols);
  return out;
}

double tsneRepulsion(const std::vector<double>& y, double theta, std::vector<double>& force,
                     unsigned threads) {
  const auto n = std::int64_t(y.size() / 2);
  force.assign(y.size(), 0.0);
  if (n == 0) return 0;
  const QuadTree tree(y);
  std::vector<double> partial(threadCount(threads) + 1, 0.0);
  std::atomic<unsigned> slot{0};
  parallelRanges(n, threadCount(threads), [&](std::int64_t begin, std::int64_t end) {
    double sum = 0;
    for (std::int64_t i = begin; i < end; ++i)
      sum += tree.repulse(y[std::size_t(2 * i)], y[std::size_t(2 * i + 1)], theta,
                          force[std::size_t(2 * i)], force[std::size_t(2 * i + 1)]);
    partial[slot++] = sum;
  });
  return std::accumulate(partial.begin(), partial.end(), 0.0);
}

Embedding embedFeatures(const std::vector<float>& features, std::int64_t n, std::int64_t width,
                        const EmbeddingOptions& options) {
  if (n < 0 || width <= 0 || features.size() != std::size_t(n * width))
    throw Error("embedding: " + std::to_string(features.size()) + " feature values are not " +
                std::to_string(n) + " rows of " + std::to_string(width));
  Embedding out;
  out.points = n;
  out.xy.assign(std::size_t(2 * n), std::numeric_limits<float>::quiet_NaN());
  // Rows with a non-finite feature (a sample the loader skipped) are left out.
  const std::vector<std::int64_t> rows = finiteRows(features, n, width);
  const auto m = std::int64_t(rows.size());
  if (m < 2) {
    for (auto r : rows)
      out.xy[std::size_t(2 * r)] = out.xy[std::size_t(2 * r + 1)] = 0;
    return out;
  }
  const std::vector<float> reduced = scaledComponents(features, rows, width, options.pcaDimensions);
  const auto d = std::int64_t(reduced.size()) / m;
  const unsigned threads = threadCount(options.threads);
  const double perplexity = std::max(1.0, std::min(options.perplexity, double(m - 1) / 3.0));
  bool stopped = false;
  const SparseP p = inputSimilarities(
      reduced, m, d, perplexity, threads,
      [&options] { return !options.progress || options.progress(0, options.iterations); }, stopped);
  if (stopped) {
    out.cancelled = true;  // no layout yet: every point NaN
    return out;
  }

  std::vector<double> y = initialLayout(reduced, m, d);
  const double z = gradientDescent(p, y, m, threads, options, out);
  out.divergence = klDivergence(p, y, m, z);
  for (std::int64_t i = 0; i < m; ++i) {
    out.xy[std::size_t(2 * rows[std::size_t(i)])] = float(y[std::size_t(2 * i)]);
    out.xy[std::size_t(2 * rows[std::size_t(i)] + 1)] = float(y[std::size_t(2 * i + 1)]);
  }
  return out;
}

}  // namespace netsmith::eval
