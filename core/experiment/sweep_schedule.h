#pragma once

// A sweep's decisions, as pure functions of its record: which trial comes next and with what
// settings, where a trial's next segment stops (its next ASHA rung), what a segment's end means
// for the trial, which paused trials go on, and which trial is best. The runner
// (sweep_runner.h) only starts processes and reads their files; everything it decides is
// decided here, so a resumed sweep decides the same. No LibTorch here.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "experiment/sweep_spec.h"
#include "experiment/sweep_state.h"

namespace netsmith::experiment {

/// The epoch the trial's next segment stops at (its next rung above the epochs it has done),
/// or 0: on to its last epoch.
std::int64_t segmentStop(const Trial& trial, const SweepSpec& spec);

/// Whether trial number state.trials.size() may be created now, and its settings. False when
/// the sweep has all its trials, or when the model-based sampler waits for a trial it learns
/// from (trial k learns from trials 0..k-lag-1, each of which must have ended).
bool nextTrialSettings(const SweepState& state, const SweepSpec& spec, Assignment& settings);

/// The trial's scores and epochs done from `scores` (the objective after each epoch its run
/// recorded): epochs 1..maxEpochs, the rest ignored.
void takeScores(Trial& trial, const std::map<std::int64_t, double>& scores);

enum class SegmentEnd {
  Exited,       ///< the process exited with status 0
  Interrupted,  ///< stopped by the sweep (Ctrl-C, a kill of the sweep): resumes later
  Failed,       ///< any other end
};
/// Records a segment's end: `scores` are the objective after each epoch the trial's run has
/// recorded (all of them, from its events). `stopAt` is the segment's segmentStop().
void endSegment(Trial& trial, const std::map<std::int64_t, double>& scores, SegmentEnd end,
                std::int64_t stopAt, const std::string& error);

/// A trial that was under way when its sweep stopped (killed, or interrupted after its segment's
/// last epoch), with `scores` read from its run: when its last epoch is one of its rungs (short
/// of its last epoch), it becomes Paused, so the rung is judged before it goes on. A rung it had
/// already been judged at is judged again, with the same result: decideRungs reads only the
/// record, and the scores it reads at a rung do not change.
void pauseAtReachedRung(Trial& trial, const std::map<std::int64_t, double>& scores,
                        const SweepSpec& spec);

struct RungDecision {
  std::int64_t trial = 0;
  std::int64_t rung = 0;  ///< epochs done
  bool continues = true;
  double score = 0;
  double cutoff = 0;          ///< the score to reach at this rung
  std::int64_t compared = 0;  ///< scores at the rung it was ranked among (its own included)
};
/// Judges every paused trial whose rung can be judged: trial t at rung r is ranked among the
/// scores at r of trials 0..t (ASHA in trial order), once every trial before it has a score at
/// r or has ended short of r. A trial that goes on becomes Running; one that does not, Stopped.
std::vector<RungDecision> decideRungs(SweepState& state, const SweepSpec& spec);

/// Stops every trial that has not ended and is not under way (`underWay`: ids with a process).
/// For the time budget.
void stopWaitingTrials(SweepState& state, const std::vector<std::int64_t>& underWay,
                       const std::string& why);

/// True when every planned trial exists and has ended (or the budget stopped the rest).
bool sweepDone(const SweepState& state, const SweepSpec& spec, bool budgetSpent);

/// The best trial: the best objective among completed trials, else among all scored ones (under
/// SweepSpec::maxLatencyMs, only trials measured within it);
/// nullptr when no trial has a score.
const Trial* bestTrial(const SweepState& state, const SweepSpec& spec);

/// The objective from one epoch_end event of a run's events.jsonl (NaN when absent).
double objectiveFromEpochEvent(const Json& event, const std::string& objective);

}  // namespace netsmith::experiment
