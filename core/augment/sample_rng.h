#pragma once

#include <cstdint>
#include <random>

namespace netsmith::augment {

/// Mixes (seed, epoch, index) into one well-spread 64-bit seed (splitmix64 steps), so sample i
/// of epoch e is transformed identically whatever thread or worker count processes it.
std::uint64_t mixSeed(std::uint64_t seed, std::uint64_t epoch, std::uint64_t index);

/// The random source a transform draws from; one per sample.
class SampleRng {
 public:
  explicit SampleRng(std::uint64_t seed) : m_engine(seed) {}

  /// Uniform in [lo, hi).
  double uniform(double lo, double hi);
  /// Uniform integer in [lo, hi] (inclusive).
  std::int64_t integer(std::int64_t lo, std::int64_t hi);
  /// True with probability p.
  bool chance(double p);
  double normal(double mean, double stddev);
  /// Beta(a, b) sample (MixUp / CutMix mixing weights).
  double beta(double a, double b);
  std::mt19937_64& engine() { return m_engine; }

 private:
  std::mt19937_64 m_engine;
};

}  // namespace netsmith::augment
