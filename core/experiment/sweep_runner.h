#pragma once

// Runs a sweep (issue 21): each trial is a normal `netsmith-cli train` run of its own project
// file under sweeps/<name>-<timestamp>/trials/tNNNN/, started as a child process, `parallel`
// of them at once with cores/parallel threads each. Trials with ASHA run in segments that stop
// at the rungs (train --stop-at-epoch, then --resume); what happens next is decided by
// sweep_schedule.h and written to sweep.json after every change, so a killed sweep resumes
// (`open` + `run`). No LibTorch here.
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/json.h"
#include "experiment/sweep_event.h"
#include "experiment/sweep_spec.h"
#include "experiment/sweep_state.h"
#include "project/project.h"
#include "run/run_records.h"

namespace netsmith::experiment {

struct SweepOptions {
  std::string program;                 ///< netsmith-cli, by absolute path
  std::string outRoot = "sweeps";      ///< the sweep folder is made inside
  std::int64_t parallel = 0;           ///< 0: the spec's
  int threadsPerTrial = 0;             ///< 0: the machine's cores / parallel
  std::vector<std::string> trainArgs;  ///< passed to each trial: --limit-train N, --limit-val N
  RegistriesPtr registries;  ///< the program's: the base project's sweep is read with them
};

/// What the sweep reports as it goes (sweep_event.h).
using SweepListener = std::function<void(const SweepEvent& event)>;

class SweepRunner {
 public:
  /// Makes the sweep folder for `loaded`'s sweep section (already parsed into `spec`).
  static std::string create(const project::LoadedProject& loaded, const SweepSpec& spec,
                            const SweepOptions& options);
  /// Opens a sweep folder (a new one, or one to resume). Throws netsmith::Error.
  SweepRunner(const std::string& sweepDir, const SweepOptions& options);
  ~SweepRunner();
  SweepRunner(const SweepRunner&) = delete;
  SweepRunner& operator=(const SweepRunner&) = delete;

  /// Runs to the end, or until `*interrupt` is set: then the running trials are stopped
  /// (SIGTERM: each writes a checkpoint) and the record says where to go on. Returns true when
  /// the sweep has finished.
  bool run(const SweepListener& listener, const std::atomic<bool>* interrupt);

  const SweepState& state() const { return m_state; }
  const SweepSpec& spec() const { return m_spec; }
  const std::string& dir() const { return m_dir; }
  /// The base project (the sweep's copy), for --apply-best.
  const project::Project& baseProject() const { return m_base; }
  /// The project of trial `id`: the base with the trial's settings, its sweep section removed.
  Json trialProjectJson(std::int64_t id) const;

 private:
  struct Process {
    std::int64_t trial = 0;
    pid_t pid = -1;
    std::int64_t stopAt = 0;
    double started = 0;
    bool signalled = false;
  };
  void startSegment(Trial& trial, const SweepListener& listener);
  void finishSegment(Process& p, int status, const SweepListener& listener);
  void reportNewEpochs(Trial& trial, const SweepListener& listener);
  std::map<std::int64_t, double> readScores(const Trial& trial);
  std::string findRunDir(const Trial& trial) const;
  void save();
  /// The sweep_started event: the folder, the plan and how many trials run at once.
  void reportSweepStarted(const SweepListener& listener) const;
  /// The sweep_ended event: `how` it ended ("finished", "interrupted") and its best trial.
  void reportSweepEnded(const char* how, const SweepListener& listener) const;
  /// Finishes the segments of the trials whose process has ended.
  void finishEndedTrials(const SweepListener& listener);
  /// Sends the running trials SIGTERM, once, when `*interrupt` is set or the time budget is spent.
  void stopTrialsWhenAsked(const std::atomic<bool>* interrupt);
  /// Judges the trials at a rung and reports each decision; true when there was one.
  bool judgeRungs(const SweepListener& listener);
  /// With the time budget spent: the trials waiting to go on stop where they are.
  void endWaitingTrials();
  /// Starts trials (resumed or new) while fewer than `parallel` run; true when it started one.
  bool startTrials(const SweepListener& listener);
  /// A trial running by the record that has no process (one to resume), else null.
  Trial* trialToResume();
  /// Adds the sampler's next trial (its epochs from its project), else null when there is none.
  Trial* addNextTrial();

  std::string m_dir;
  SweepOptions m_options;
  SweepState m_state;
  SweepSpec m_spec;
  project::Project m_base;
  std::vector<Process> m_running;
  std::map<std::int64_t, std::int64_t> m_epochsReported;
  /// Per trial: its run folder followed from where the last poll stopped.
  std::map<std::int64_t, run::RunRecordReader> m_runReaders;
  bool m_interrupting = false;
  bool m_budgetSpent = false;
};

}  // namespace netsmith::experiment
