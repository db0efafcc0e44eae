#pragma once

// The model-based sampler: a Tree-structured Parzen Estimator (Bergstra et al., 2011), each
// setting on its own. The trials so far are split into the best quarter ("good") and the rest;
// for each setting, candidates are drawn from a Parzen density over the good values and the one
// with the largest ratio of good to rest density is taken. Until `startup` trials have a score,
// trials are the seeded random sampler's. A pure function of (spec, k, observations): a resumed
// sweep proposes the same trial. No LibTorch here.
#include <cstdint>
#include <vector>

#include "experiment/sweep_spec.h"

namespace netsmith::experiment {

struct Observation {
  Assignment params;
  double score = 0;  ///< the objective; NaN for a diverged trial (ranked last)
};

struct TpeOptions {
  std::int64_t startup = 5;  ///< random trials before the model is used
  int candidates = 24;       ///< draws from the good density per setting
  double gamma = 0.25;       ///< the fraction of trials counted as good
};

/// Trial `k`'s settings given the scored trials before it (`maximize`: larger is better).
Assignment tpeAssignment(const SweepSpec& spec, std::int64_t k,
                         const std::vector<Observation>& observations, bool maximize,
                         const TpeOptions& options = {});

}  // namespace netsmith::experiment
