#pragma once

// The body of a run, on the trainer thread: set up, then for each epoch: epoch-start callbacks,
// for each batch: step, batch-end callbacks, publish; validate (EvalLoop), publish, epoch-end
// callbacks; at the end the test pass (TestPass). The LR range test and `bench` are runs of
// their own (lr_finder.h, bench_run.h) on the same setup. The Trainer owns the thread and the
// controls (and publishes Finished); Fit owns everything the run builds.
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "train/best_metric.h"
#include "train/callback.h"
#include "train/eval_loop.h"
#include "train/loop_state.h"
#include "train/numeric_watchdog.h"
#include "train/plateau_callback.h"
#include "train/run_checkpoints.h"
#include "train/run_setup.h"
#include "train/step_runner.h"
#include "train/throughput_meter.h"
#include "train/trainer.h"

namespace netsmith::train {

class TestPass;

class Fit {
 public:
  explicit Fit(RunContext& ctx);
  ~Fit();
  Fit(const Fit&) = delete;
  Fit& operator=(const Fit&) = delete;

  /// Trains (or runs the LR range test) to the end. Throws RunEnd, netsmith::Error or LibTorch's
  /// errors; result() holds what was reached either way.
  void run();
  /// The run's outcome so far, with its steps, folder and time filled in.
  TrainResult result() const;
  bool deterministic() const { return m_setup.opt.deterministic; }
  /// True once a batch was trained in this process (a failure after that is the run's, not the
  /// input's).
  bool trainedABatch() const { return m_batchesThisSession > 0; }

 private:
  void prepare();
  void addCallbacks();
  void findLr();
  /// `bench`: BenchRun over Fit::trainBatch.
  void bench();
  void startTraining();
  bool trainEpoch();
  bool trainBatch(const data::Batch& batch, bool& groupHasBadBatch);
  void takeStep(double lr, std::int64_t batch, bool& skipped);
  void publishBatch(std::int64_t batch, std::int64_t step, const BatchFigures& figures, double lr,
                    bool skipped);
  std::string endEpoch();
  void evaluateTest();
  [[noreturn]] void failNonFinite(const std::string& message);
  void warnDivergence(const std::string& message);
  [[noreturn]] void failRecords(const std::string& failure);
  void onNonFinite(const std::string& what, double value, double lr, std::int64_t batch);
  double currentLr() const;
  double elapsed() const;

  RunContext& m_ctx;
  RunSetup m_setup;
  LoopState m_state;
  CallbackList m_callbacks;
  std::shared_ptr<PlateauCallback> m_plateau;
  std::shared_ptr<BestMetric> m_best;
  NumericWatchdog m_watchdog;
  std::unique_ptr<StepRunner> m_runner;
  std::unique_ptr<EvalLoop> m_eval;
  std::shared_ptr<TestPass> m_testPass;  // when there is a test split
  std::unique_ptr<RunCheckpoints> m_checkpoints;
  std::unique_ptr<run::RunFolderLock> m_lock;
  ThroughputMeter m_throughput;
  TrainResult m_result;
  std::string m_runDir;
  std::string m_headline;      ///< the task's headline figure (task::headlineOf)
  std::string m_callbackStop;  // a callback asked to stop after a batch
  std::int64_t m_batchesThisSession = 0;
  std::chrono::steady_clock::time_point m_t0 = std::chrono::steady_clock::now();
  double m_pausedSeconds = 0;
};

}  // namespace netsmith::train
