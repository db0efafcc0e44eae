#pragma once

// Single- or multi-process training behind one interface, so the loop has no branches for it.
// A single process is a group of one: its sums are the values themselves, its broadcasts and
// gradient syncs do nothing, and a pause waits on the user's controls. The data-parallel group
// (data_parallel.cpp) exchanges over torch.distributed.
//
//   auto group = makeProcessGroup(ctx, options, device);   // joins or starts the job
//   std::vector<double> figures{loss, correct, seen};
//   group->sum(figures, "the batch figures");               // every rank gets the totals
#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "graph/graph_module.h"
#include "run/events.h"
#include "train/run_context.h"

namespace netsmith::train {

struct TrainOptions;

/// What a pause or stop check between optimizer steps concluded.
struct PauseOutcome {
  bool stop = false;
  double pausedSeconds = 0;  ///< time spent paused (not run time)
};

class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;

  virtual int rank() const { return 0; }
  virtual int worldSize() const { return 1; }
  /// Processes sharing this machine's cores (for thread counts).
  virtual int localProcesses() const { return 1; }
  /// True when a stop can end an evaluation midway (in a job, every rank finishes it).
  virtual bool stopsAlone() const { return true; }
  /// True when BatchNorm layers sum their statistics across processes.
  virtual bool crossProcessBatchNorm() const { return false; }

  /// Sums `values` over the processes (a single process: unchanged).
  virtual void sum(std::vector<double>& values, const std::string& what);
  /// True when any process says true (every process gets the same answer).
  bool anyRank(bool mine, const std::string& what);

  /// After the model is built (and resumed): rank 0's weights go to every process, gradient
  /// buckets are made over `params`, BatchNorm is synchronised when asked.
  virtual void prepareModel(graph::GraphModule& net, const std::vector<torch::Tensor>& params,
                            const TrainOptions& options);
  /// Before an evaluation: rank 0's BatchNorm statistics where they are not synchronised.
  virtual void beforeEvaluation(graph::GraphModule& net);
  /// Around the backward pass that ends an accumulation group (`sync`: gradients are summed).
  virtual void beforeBackward(bool sync);
  virtual void afterBackward(bool sync);
  /// Between optimizer steps: honours an agreed pause (every process holds) and says whether
  /// to stop. `pauseAgreed` / `stopAgreed` come from the batch's sum.
  virtual PauseOutcome holdOrStop(bool pauseAgreed, bool stopAgreed);
  /// At the end of the run: the other processes' exit is waited for.
  virtual void finish(double timeoutSeconds);

 protected:
  explicit ProcessGroup(RunContext& ctx) : m_ctx(ctx) {}
  /// Marks the run paused / running and says so in the log.
  void announcePause(bool paused);
  RunContext& m_ctx;
};

/// The group this run belongs to: a single process, or a data-parallel job (joined from the
/// launcher's environment, or started here for train.local_processes > 1). May move `device`
/// to the rank's local GPU. Throws netsmith::Error on bad settings.
std::unique_ptr<ProcessGroup> makeProcessGroup(RunContext& ctx, const TrainOptions& options,
                                               torch::Device& device);

}  // namespace netsmith::train
