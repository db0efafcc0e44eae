#include "experiment/tpe.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "augment/sample_rng.h"
#include "experiment/samplers.h"

namespace netsmith::experiment {

namespace {

constexpr double kPi = 3.14159265358979323846;

/// A value in the space the density is built in: log for log_uniform, as is otherwise.
double toInternal(const SweepParam& p, double v) {
  return p.kind == SweepParam::Kind::LogUniform ? std::log(std::max(v, 1e-300)) : v;
}

Json fromInternal(const SweepParam& p, double x) {
  double lo = p.low, hi = p.high;
  double v = p.kind == SweepParam::Kind::LogUniform ? std::exp(x) : x;
  v = std::clamp(v, lo, hi);
  if (p.kind == SweepParam::Kind::IntUniform) {
    const auto a = static_cast<std::int64_t>(std::ceil(lo));
    const auto b = static_cast<std::int64_t>(std::floor(hi));
    return std::clamp<std::int64_t>(static_cast<std::int64_t>(std::llround(v)), a, b);
  }
  return v;
}

/// A Parzen estimator on [lo, hi]: a Gaussian at each point plus the uniform prior, equally
/// weighted; the bandwidth shrinks with the number of points.
struct Parzen {
  std::vector<double> centres;
  double lo = 0, hi = 1, sigma = 1;

  Parzen(std::vector<double> points, double low, double high)
      : centres(std::move(points)), lo(low), hi(high) {
    const double width = hi - lo;
    const double n = double(centres.size()) + 1;
    sigma = std::clamp(width * std::pow(n, -0.2) * 0.5, width / 100, width);
  }
  double density(double x) const {
    const double width = hi - lo;
    double sum = 1 / width;  // the prior
    for (const double c : centres) {
      const double z = (x - c) / sigma;
      sum += std::exp(-0.5 * z * z) / (sigma * std::sqrt(2 * kPi));
    }
    return sum / double(centres.size() + 1);
  }
  double draw(augment::SampleRng& rng) const {
    const auto pick = rng.integer(0, static_cast<std::int64_t>(centres.size()));
    if (pick == static_cast<std::int64_t>(centres.size())) return rng.uniform(lo, hi);
    for (int tries = 0; tries < 16; ++tries) {
      const double x = rng.normal(centres[static_cast<std::size_t>(pick)], sigma);
      if (x >= lo && x <= hi) return x;
    }
    return std::clamp(centres[static_cast<std::size_t>(pick)], lo, hi);
  }
};

/// The index of `v` among a choice's values, or -1.
int choiceIndex(const SweepParam& p, const Json& v) {
  for (std::size_t i = 0; i < p.values.size(); ++i)
    if (p.values[i] == v) return static_cast<int>(i);
  return -1;
}

Json proposeChoice(const SweepParam& p, const std::vector<const Assignment*>& good,
                   const std::vector<const Assignment*>& rest, augment::SampleRng& rng,
                   int candidates) {
  const std::size_t n = p.values.size();
  std::vector<double> l(n, 1.0), g(n, 1.0);  // a count of one each: the prior
  for (const auto* a : good)
    if (const int i = choiceIndex(p, a->at(p.path)); i >= 0) l[std::size_t(i)] += 1;
  for (const auto* a : rest)
    if (const int i = choiceIndex(p, a->at(p.path)); i >= 0) g[std::size_t(i)] += 1;
  double lSum = 0, gSum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    lSum += l[i];
    gSum += g[i];
  }
  std::size_t best = 0;
  double bestRatio = -1;
  for (int c = 0; c < candidates; ++c) {
    double u = rng.uniform(0, lSum);
    std::size_t i = 0;
    while (i + 1 < n && u >= l[i])
      u -= l[i++];
    const double ratio = (l[i] / lSum) / (g[i] / gSum);
    if (ratio > bestRatio) {
      bestRatio = ratio;
      best = i;
    }
  }
  return p.values[best];
}

Json proposeRange(const SweepParam& p, const std::vector<const Assignment*>& good,
                  const std::vector<const Assignment*>& rest, augment::SampleRng& rng,
                  int candidates) {
  const double lo = toInternal(p, p.low), hi = toInternal(p, p.high);
  const auto points = [&](const std::vector<const Assignment*>& as) {
    std::vector<double> xs;
    for (const auto* a : as) {
      const Json& v = a->at(p.path);
      if (v.is_number()) xs.push_back(std::clamp(toInternal(p, v.get<double>()), lo, hi));
    }
    return xs;
  };
  const Parzen l(points(good), lo, hi), g(points(rest), lo, hi);
  double best = l.draw(rng), bestScore = -std::numeric_limits<double>::infinity();
  for (int c = 0; c < candidates; ++c) {
    const double x = c == 0 ? best : l.draw(rng);
    const double score = std::log(l.density(x)) - std::log(g.density(x));
    if (score > bestScore) {
      bestScore = score;
      best = x;
    }
  }
  return fromInternal(p, best);
}

}  // namespace

Assignment tpeAssignment(const SweepSpec& spec, std::int64_t k,
                         const std::vector<Observation>& observations, bool maximize,
                         const TpeOptions& options) {
  std::vector<const Observation*> usable;
  for (const auto& o : observations) {
    bool complete = true;
    for (const auto& p : spec.params)
      complete = complete && o.params.count(p.path) > 0;
    if (complete) usable.push_back(&o);
  }
  if (static_cast<std::int64_t>(usable.size()) < std::max<std::int64_t>(1, options.startup))
    return randomAssignment(spec, k);
  // Best first; a NaN ranks last; ties keep the trials' order.
  std::stable_sort(usable.begin(), usable.end(), [maximize](const auto* a, const auto* b) {
    if (std::isnan(a->score)) return false;
    if (std::isnan(b->score)) return true;
    return maximize ? a->score > b->score : a->score < b->score;
  });
  const auto nGood = std::max<std::size_t>(
      1, static_cast<std::size_t>(std::ceil(options.gamma * double(usable.size()))));
  std::vector<const Assignment*> good, rest;
  for (std::size_t i = 0; i < usable.size(); ++i)
    (i < nGood ? good : rest).push_back(&usable[i]->params);

  Assignment a;
  for (std::size_t i = 0; i < spec.params.size(); ++i) {
    const auto& p = spec.params[i];
    // The stream for (trial, setting), apart from the random sampler's.
    augment::SampleRng rng(
        augment::mixSeed(spec.seed ^ 0x7e57'7e57'7e57'7e57ULL, static_cast<std::uint64_t>(k), i));
    a[p.path] = p.kind == SweepParam::Kind::Choice
                    ? proposeChoice(p, good, rest, rng, options.candidates)
                    : proposeRange(p, good, rest, rng, options.candidates);
  }
  return a;
}

}  // namespace netsmith::experiment
