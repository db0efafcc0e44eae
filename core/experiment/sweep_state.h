#pragma once

// A sweep's record on disk: sweeps/<name>-<timestamp>/sweep.json, written atomically after
// every change, so a killed sweep resumes from it. Next to it: base.netsmith.json (the project
// the sweep started from, its sweep section included, data paths made absolute) and
// trials/t0003/ (the trial's project, its run folder, its standard output and error).
// No LibTorch here.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/json.h"
#include "experiment/sweep_spec.h"

namespace netsmith::experiment {

enum class TrialStatus {
  Running,    ///< a segment is due or under way (after a kill: resumes from its checkpoint)
  Paused,     ///< reached an early-stopping rung; waits for the rung's decision
  Completed,  ///< trained every planned epoch (or ended by its own early stopping)
  Stopped,    ///< stopped at a rung by ASHA, or by the sweep's time budget
  Failed,     ///< its process failed; `error` says how
};
std::string trialStatusName(TrialStatus s);

struct Trial {
  std::int64_t id = 0;
  Assignment params;
  TrialStatus status = TrialStatus::Running;
  std::int64_t maxEpochs = 1;   ///< its project's train.epochs
  std::int64_t epochsDone = 0;  ///< epochs with a recorded score
  /// The objective after each epoch (1-based); NaN where it was not a number.
  std::map<std::int64_t, double> scores;
  std::string runDir;  ///< its run folder, once known
  std::string error;   ///< Failed: the process's own message and exit status
  std::string note;    ///< Stopped: why ("ASHA at epoch 3: 0.8123 below the rung's 0.8410")
  double seconds = 0;  ///< process time summed over its ended segments
  /// When its running segment started (seconds since 1970; 0: none runs), so a reader counts
  /// the time of the segment under way.
  double segmentStarted = 0;
  std::int64_t segments = 0;
  /// What its model costs deployed (its run's deploy.json; SweepSpec::deployBench): batch-1
  /// median latency and the exported file's size; -1 unmeasured.
  double latencyMs = -1;
  std::int64_t fileBytes = -1;

  bool ended() const {
    return status == TrialStatus::Completed || status == TrialStatus::Stopped ||
           status == TrialStatus::Failed;
  }
  /// The objective at its last scored epoch; NaN when none.
  double objective() const;
};

struct SweepState {
  std::string name;
  std::string created;      ///< ISO time
  std::string baseProject;  ///< the project file the sweep started from, as given
  std::int64_t parallel = 1;
  int threadsPerTrial = 1;
  /// The lag of the model-based sampler: trial k learns from trials 0..k-lag-1 (the sweep's
  /// parallelism when it started), so its proposals do not depend on which trials ran first.
  std::int64_t samplerLag = 1;
  std::vector<std::string> trainArgs;  ///< passed to every trial (--limit-train N, ...)
  double elapsedSeconds = 0;           ///< wall time over every session of the sweep
  bool finished = false;
  std::vector<Trial> trials;
};

Json sweepStateToJson(const SweepState& s);
/// Reads a sweep.json; throws netsmith::Error naming the file and the place of any problem.
SweepState sweepStateFromJson(const Json& j, const std::string& source);

/// Reads a sweep record's text (bounded size and nesting); throws netsmith::Error.
SweepState parseSweepState(const std::string& text, const std::string& source);
/// Reads `dir`/sweep.json (bounded size and nesting); throws netsmith::Error.
SweepState loadSweepState(const std::string& dir);
/// Writes `dir`/sweep.json atomically.
void saveSweepState(const std::string& dir, const SweepState& s);

/// Whether a sweep (or a trial of one) holds `dir`/sweep.lock now: a process is running it.
/// False when there is no lock file, or it is no plain file (a folder someone sent). Never
/// blocks and never creates the file.
bool sweepInUse(const std::string& dir);

/// The trial's folder inside the sweep folder: trials/t0003.
std::string trialFolderName(std::int64_t id);

/// `project` (a project file's JSON) with its data paths and init_from made absolute against
/// `baseDir`, so the copy reads the same files from any folder.
Json withAbsolutePaths(Json project, const std::string& baseDir);

}  // namespace netsmith::experiment
