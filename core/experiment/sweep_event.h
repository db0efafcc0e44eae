#pragma once

// What a running sweep reports, one event at a time: the runner sends them to its listener,
// `netsmith-cli sweep --json` writes each as a line (toJson), and the studio's SweepSession
// reads the lines back (fromJson). One type on both sides of the pipe. No LibTorch here.
//   {"event": "sweep_started", "folder": "sweeps/lr-20261201-101500", "planned_trials": 12, ...}
//   {"event": "trial_started", "trial": 3, "params": {...}, "resumed": false, ...}
//   {"event": "epoch", "trial": 3, "epoch": 2, "epochs": 9, "objective": "val_accuracy",
//    "value": 0.81}
//   {"event": "rung", "trial": 3, "epoch": 3, "continues": false, "score": ..., "cutoff": ...}
//   {"event": "trial_ended", "trial": 3, "status": "completed", ...the trial's record}
//   {"event": "sweep_ended", "state": "finished" | "interrupted", "best": {...} | null}
#include <cstdint>
#include <optional>
#include <string>

#include "common/json.h"

namespace netsmith::experiment {

enum class SweepEventType { SweepStarted, TrialStarted, Epoch, Rung, TrialEnded, SweepEnded };
/// "sweep_started", "trial_started", "epoch", "rung", "trial_ended", "sweep_ended".
std::string sweepEventName(SweepEventType type);

struct SweepEvent {
  SweepEventType type = SweepEventType::SweepStarted;
  std::int64_t trial = 0;  ///< the trial's id (trial events)

  // sweep_started, sweep_ended
  std::string folder;  ///< the sweep folder (trial_started: the trial's, trials/t0003)
  std::string name;
  std::int64_t plannedTrials = 0;
  std::int64_t trials = 0;  ///< trials in the record when the session started
  std::int64_t parallel = 0;
  std::int64_t threadsPerTrial = 0;
  std::string state;  ///< sweep_ended: "finished" or "interrupted"
  double elapsedSeconds = 0;
  Json best;  ///< sweep_ended: the best trial's record, or null

  // trial_started
  Json params = Json::object();  ///< the trial's settings by path
  bool resumed = false;
  std::int64_t fromEpoch = 0;    ///< epochs done before this segment
  std::int64_t stopAtEpoch = 0;  ///< where this segment stops
  std::int64_t epochs = 0;       ///< the trial's planned epochs (also epoch)

  // epoch, rung
  std::int64_t epoch = 0;        ///< epochs done (epoch), or the rung's epoch
  std::string objective;         ///< epoch: what `value` is (val_accuracy, ...)
  double value = 0;              ///< epoch: NaN when not a number
  bool continues = false;        ///< rung: the trial goes on
  double score = 0, cutoff = 0;  ///< rung: NaN when none
  std::int64_t compared = 0;     ///< rung: trials it was compared with

  // trial_ended: the trial's record (sweep.json's entry), and what the views show of it
  Json record;
  std::string status;  ///< completed, stopped, failed
  std::string reason;  ///< failed: the error; stopped: the note
  std::int64_t epochsDone = 0;
  double trialObjective = 0;  ///< NaN when none

  /// The event's JSON line (what `sweep --json` prints).
  Json toJson() const;
  /// An event read back from a line; nullopt when `j` is not an event of this Netsmith's
  /// sweep (another program's output, a newer event): the caller shows the line as text.
  static std::optional<SweepEvent> fromJson(const Json& j);
};

}  // namespace netsmith::experiment
