#pragma once

// How a sweep chooses its trials and stops poor ones early: grid and seeded random samplers,
// and the ASHA rule (asynchronous successive halving). Pure functions of the spec, the trial
// number and the scores so far, so a resumed sweep makes the same choices. No LibTorch here.
#include <cstdint>
#include <vector>

#include "experiment/sweep_spec.h"

namespace netsmith::experiment {

/// The grid: the product of every parameter's gridValues(), the first parameter varying
/// slowest, at most `spec.trials` of them.
std::vector<Assignment> gridAssignments(const SweepSpec& spec);

/// Trial `k` of a random sweep: each value drawn from a generator seeded by (seed, k, the
/// parameter's place), so trial k is the same whether or not the trials before it ran.
/// Log-uniform draws are uniform in log space; int_uniform includes both ends.
Assignment randomAssignment(const SweepSpec& spec, std::int64_t k);

/// Trial `k`'s settings for the spec's method (grid: the k-th grid point).
Assignment trialAssignment(const SweepSpec& spec, std::int64_t k);
/// How many trials the sweep runs: `trials`, or the grid's size when smaller.
std::int64_t plannedTrials(const SweepSpec& spec);

/// ASHA's rungs for a run of `maxEpochs`: min_epochs x reduction^i below maxEpochs.
std::vector<std::int64_t> ashaRungs(const AshaOptions& asha, std::int64_t maxEpochs);

/// Whether a trial that reached a rung with `score` goes on: it must rank in the best
/// max(1, n / reduction) of the `n` scores recorded at that rung so far (its own included).
bool ashaContinues(const std::vector<double>& rungScores, double score, std::int64_t reduction,
                   bool maximize);
/// The score a trial must reach (or beat) at that rung: the max(1, n / reduction)-th best of
/// `rungScores`; NaN when none of them is a number.
double ashaCutoff(const std::vector<double>& rungScores, std::int64_t reduction, bool maximize);

}  // namespace netsmith::experiment
