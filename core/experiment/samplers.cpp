#include "experiment/samplers.h"

#include <algorithm>
#include <cmath>

#include "augment/sample_rng.h"

namespace netsmith::experiment {

namespace {

/// A uniform double in [0, 1) from (seed, trial, param).
double unitDraw(std::uint64_t seed, std::int64_t trial, std::size_t param) {
  // The augmentation's per-sample seed mix, with (trial, parameter) for (epoch, sample).
  const std::uint64_t h =
      augment::mixSeed(seed, static_cast<std::uint64_t>(trial), static_cast<std::uint64_t>(param));
  return double(h >> 11) * (1.0 / 9007199254740992.0);  // 53 bits
}

std::int64_t gridSize(const SweepSpec& spec) {
  std::int64_t n = 1;
  for (const auto& p : spec.params) {
    const auto size = static_cast<std::int64_t>(p.gridValues().size());
    if (size == 0) return 0;
    if (n > (std::int64_t(1) << 40) / size) return std::int64_t(1) << 40;
    n *= size;
  }
  return n;
}

Assignment gridPoint(const SweepSpec& spec, std::int64_t k) {
  Assignment a;
  // Mixed radix, the last parameter varying fastest.
  for (std::size_t i = spec.params.size(); i-- > 0;) {
    const auto values = spec.params[i].gridValues();
    const auto size = static_cast<std::int64_t>(values.size());
    a[spec.params[i].path] = values[static_cast<std::size_t>(k % size)];
    k /= size;
  }
  return a;
}

}  // namespace

std::int64_t plannedTrials(const SweepSpec& spec) {
  return spec.method == "grid" ? std::min(spec.trials, gridSize(spec)) : spec.trials;
}

std::vector<Assignment> gridAssignments(const SweepSpec& spec) {
  std::vector<Assignment> out;
  const std::int64_t n = std::min(spec.trials, gridSize(spec));
  for (std::int64_t k = 0; k < n; ++k)
    out.push_back(gridPoint(spec, k));
  return out;
}

Assignment randomAssignment(const SweepSpec& spec, std::int64_t k) {
  Assignment a;
  for (std::size_t i = 0; i < spec.params.size(); ++i) {
    const auto& p = spec.params[i];
    const double u = unitDraw(spec.seed, k, i);
    switch (p.kind) {
      case SweepParam::Kind::Uniform:
        a[p.path] = p.low + u * (p.high - p.low);
        break;
      case SweepParam::Kind::LogUniform:
        a[p.path] = std::exp(std::log(p.low) + u * (std::log(p.high) - std::log(p.low)));
        break;
      case SweepParam::Kind::IntUniform: {
        const auto lo = static_cast<std::int64_t>(std::ceil(p.low));
        const auto hi = static_cast<std::int64_t>(std::floor(p.high));
        a[p.path] = lo + std::min<std::int64_t>(hi - lo,
                                                static_cast<std::int64_t>(u * double(hi - lo + 1)));
        break;
      }
      case SweepParam::Kind::Choice:
        a[p.path] = p.values[std::min(p.values.size() - 1,
                                      static_cast<std::size_t>(u * double(p.values.size())))];
        break;
    }
  }
  return a;
}

Assignment trialAssignment(const SweepSpec& spec, std::int64_t k) {
  return spec.method == "grid" ? gridPoint(spec, k) : randomAssignment(spec, k);
}

std::vector<std::int64_t> ashaRungs(const AshaOptions& asha, std::int64_t maxEpochs) {
  std::vector<std::int64_t> rungs;
  if (!asha.enabled) return rungs;
  for (std::int64_t r = asha.minEpochs; r < maxEpochs;
       r *= std::max<std::int64_t>(2, asha.reduction))
    rungs.push_back(r);
  return rungs;
}

double ashaCutoff(const std::vector<double>& rungScores, std::int64_t reduction, bool maximize) {
  if (rungScores.empty()) return std::nan("");
  std::vector<double> sorted = rungScores;
  // Best first; a NaN (a diverged trial) ranks last.
  std::sort(sorted.begin(), sorted.end(), [maximize](double a, double b) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
    return maximize ? a > b : a < b;
  });
  const std::size_t keep =
      std::max<std::size_t>(1, sorted.size() / std::size_t(std::max<std::int64_t>(2, reduction)));
  return sorted[keep - 1];
}

bool ashaContinues(const std::vector<double>& rungScores, double score, std::int64_t reduction,
                   bool maximize) {
  if (rungScores.empty()) return true;
  if (std::isnan(score)) return false;
  const double cutoff = ashaCutoff(rungScores, reduction, maximize);
  if (std::isnan(cutoff)) return true;
  return maximize ? score >= cutoff : score <= cutoff;
}

}  // namespace netsmith::experiment
