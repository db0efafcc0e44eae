#pragma once

// The training loop on its own std::thread. No LibTorch in this header: the UI and the CLI
// include it without paying for <torch/torch.h>.
//
//   TrainerConfig config;
//   config.project = loaded.project;
//   config.baseDir = loaded.baseDir();
//   Trainer trainer(std::move(config));
//   trainer.addSink(std::make_shared<MySink>());
//   trainer.start();
//   ...                      // trainer.pause(), resume(), stop(), stopAfterEpoch()
//   trainer.wait();
//   auto result = trainer.result();
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "data/data_config.h"
#include "distributed/dist_env.h"
#include "project/project.h"
#include "registries/registries_fwd.h"
#include "run/events.h"
#include "task/task_registry.h"
#include "train/run_context.h"
#include "train/step_bench.h"
#include "train/train_options.h"

namespace netsmith::run {
class RunWriter;
}

namespace netsmith::train {

/// The LR range test: an exponential LR sweep over training batches.
struct LrFindOptions {
  double startLr = 1e-7;
  double endLr = 10;
  std::int64_t steps = 100;
  double smoothing = 0.98;     ///< exponential smoothing of the loss
  double divergeFactor = 4.0;  ///< stop when the smoothed loss exceeds this x its minimum
};

struct LrFindResult {
  std::vector<double> lrs;
  std::vector<double> losses;
  std::vector<double> smoothed;
  double suggestedLr = 0;  ///< at the steepest fall of the smoothed loss
  double minLossLr = 0;    ///< where the smoothed loss is lowest
  bool diverged = false;
  bool weightsRestored = false;  ///< the model's weights equal those before the sweep
};

struct TrainerConfig {
  project::Project project;  ///< a validated project
  /// Its train section as the caller resolved it (resolve::resolveProject); none: read here
  /// from `project` (a data-parallel worker's rank, a test's config).
  std::optional<TrainOptions> options;
  /// Its data section as the caller resolved it (paths made absolute against its folder); none:
  /// read here from `project` against `baseDir`.
  std::optional<data::DataConfig> data;
  std::string baseDir;            ///< for relative data paths
  std::string runsRoot = "runs";  ///< the run folder is created inside
  std::string runDir;             ///< use this folder instead of creating one (resume appends)
  std::string resumePath;         ///< continue a checkpoint of this project exactly
  std::string initFromPath;       ///< load matching weights (fine-tuning), then train from step 0
  std::string cacheDir;           ///< normalisation statistics cache ("" = none)
  std::int64_t limitTrain = 0;    ///< use at most N training samples (0 = all)
  std::int64_t limitVal = 0;      ///< at most N validation samples (0 = all)
  std::int64_t limitTest = 0;     ///< at most N test samples (0 = all: the run's test figure)
  bool writeRun = true;           ///< false: no run folder, no checkpoints (tests, lr-find)
  /// Stop (as by stop(), with a checkpoint) after this many training batches in this session;
  /// 0: no limit. For tests of exact resume, and for budgeted runs.
  std::int64_t stopAfterBatches = 0;
  /// Stop (with a checkpoint) once this many epochs are done, as stopAfterEpoch() would; the
  /// run's schedule still plans train.epochs, so a resumed run goes on exactly. 0: no limit.
  /// Sweeps use it to pause trials at their early-stopping rungs.
  std::int64_t stopAtEpoch = 0;
  /// Skip the test split at the end (a sweep's trials are judged on validation only).
  bool skipTest = false;
  /// Train on exactly these samples of the training source (indices into it, in order), with
  /// no validation or test split: the data doctor's cross-training folds. Empty: the project's
  /// splits.
  std::vector<std::int64_t> trainIndices;
  /// Run the LR range test instead of training (no run folder); see TrainResult::lrFind.
  bool lrFind = false;
  LrFindOptions lrFindOptions;
  /// Measure training throughput instead of training (no run folder); see TrainResult::bench.
  bool bench = false;
  BenchOptions benchOptions;
  /// Data parallelism (torch.distributed). `dist` is this process's place in a job started by
  /// a launcher (torchrun, srun, mpirun: distributed::distEnvFromEnvironment()). With
  /// train.local_processes = N > 1 and no launcher, this process becomes rank 0 of N local ranks
  /// and starts the others as `workerProgram dist-worker SPEC` (netsmith-cli).
  distributed::DistEnv dist;
  std::string workerProgram;
  /// The program's registries (Registries::builtins() in its main; a test adds its own task or
  /// op to a copy): the ops build the model, the transforms the pipeline, the schedules the
  /// train section's, and the tasks what a project's "task" key can name.
  RegistriesPtr registries;
};

/// What a finished run reports (also sent as the Finished event).
struct TrainResult {
  run::FinishState state = run::FinishState::Completed;
  std::string reason;
  /// What ended a Failed run: the input (a project, data, a folder from elsewhere refused
  /// before the first batch), the machine (a full disk, a permission: netsmith::IoError), or
  /// the run itself (divergence, another rank ending, a library failure).
  enum class Failure { None, Input, Io, Run } failure = Failure::None;
  std::string runDir;
  std::int64_t epochsDone = 0;
  std::int64_t steps = 0;
  bool hasValidation = false;
  task::EvalMetrics lastValidation;
  bool hasTest = false;
  task::EvalMetrics test;
  std::string testCheckpoint;      ///< whose weights `test` measured: "best" or "last"
  std::int64_t testSplitSize = 0;  ///< samples of the test split the run would evaluate
  std::string bestCheckpoint;
  std::string lastCheckpoint;
  std::string initReport;  ///< what --init-from loaded
  int worldSize = 1;       ///< processes that trained together
  int rank = 0;
  double seconds = 0;
  LrFindResult lrFind;
  BenchResult bench;
};

/// The run's one test figure with its denominator and checkpoint, as the CLI and the studio
/// print it: "test accuracy 91.77% on 10000 images (checkpoint best)"; for a run that has a
/// test split it did not evaluate, says so and how to; "" when there is no test split.
std::string describeTestFigure(const TrainResult& result);

enum class RunState { Idle, Preparing, Running, Paused, Finished };

class Trainer {
 public:
  explicit Trainer(TrainerConfig config);
  ~Trainer();  ///< stops a running run and joins
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  /// Before start(). Every sink gets its own delivery thread. A display (the default) that
  /// falls far behind skips step events and says so in run::BatchMetrics::skippedBefore; a sink
  /// given run::Overflow::Wait (records, such as --json lines) makes training wait instead.
  void addSink(std::shared_ptr<run::EventSink> sink,
               run::Overflow overflow = run::Overflow::DropOldestBatch);

  void start();
  void wait();  ///< joins the thread and flushes every sink

  // Controls, answered within one batch. Safe from any thread.
  void pause();
  void resume();
  void stop();            ///< stop now (a checkpoint of the position is written)
  void stopAfterEpoch();  ///< finish the current epoch (with validation), then stop

  RunState state() const { return m_state.load(); }
  TrainResult result() const;  ///< after wait()
  std::string runDir() const;  ///< known once the Started event went out

 private:
  void publish(run::TrainingEvent event);
  void attachRunWriter(const std::string& runDir, const std::string& headline);
  void run();

  TrainerConfig m_config;
  std::vector<std::shared_ptr<run::AsyncSink>> m_sinks;
  std::thread m_thread;
  std::atomic<RunState> m_state{RunState::Idle};
  RunControls m_controls;
  mutable std::mutex m_resultMutex;
  TrainResult m_result;
  std::string m_runDir;
  double m_startTime = 0;
  std::vector<run::TrainingEvent> m_beforeRunDir;  // replayed into the run writer when it attaches
  std::shared_ptr<run::RunWriter> m_runWriter;
  std::shared_ptr<run::AsyncSink> m_runWriterQueue;  // never drops: training waits for the disk
};

}  // namespace netsmith::train
