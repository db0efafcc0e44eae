#include "augment/sample_rng.h"

namespace netsmith::augment {

namespace {
std::uint64_t splitmix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
}  // namespace

std::uint64_t mixSeed(std::uint64_t seed, std::uint64_t epoch, std::uint64_t index) {
  return splitmix(splitmix(splitmix(seed) ^ epoch) ^ index);
}

double SampleRng::uniform(double lo, double hi) {
  if (!(hi > lo)) return lo;
  return std::uniform_real_distribution<double>(lo, hi)(m_engine);
}

std::int64_t SampleRng::integer(std::int64_t lo, std::int64_t hi) {
  if (hi <= lo) return lo;
  return std::uniform_int_distribution<std::int64_t>(lo, hi)(m_engine);
}

bool SampleRng::chance(double p) {
  if (p >= 1.0) return true;
  if (p <= 0.0) return false;
  return uniform(0.0, 1.0) < p;
}

double SampleRng::normal(double mean, double stddev) {
  if (stddev <= 0) return mean;
  return std::normal_distribution<double>(mean, stddev)(m_engine);
}

double SampleRng::beta(double a, double b) {
  const double x = std::gamma_distribution<double>(a, 1.0)(m_engine);
  const double y = std::gamma_distribution<double>(b, 1.0)(m_engine);
  return x + y > 0 ? x / (x + y) : 0.5;
}

}  // namespace netsmith::augment
