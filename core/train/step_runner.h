#pragma once

// One training step, the way a run takes it: forward under autocast, loss, the batch's
// figures summed over the processes, backward (scaled for accumulation, a process's share of
// the global batch and the fp16 loss scale), then, at the end of an accumulation group, the
// gradient norms (global and per node), clipping and the optimizer step. The trainer, the LR
// finder and `netsmith-cli bench` all train through it.
#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

#include "data/data_loader.h"
#include "graph/graph_module.h"
#include "train/loop_state.h"
#include "train/run_plan.h"
#include "train/step_bench.h"
#include "train/train_options.h"

namespace netsmith::train {

class ProcessGroup;
}
namespace netsmith::task {
class Task;
}
namespace netsmith::train {

/// Autocast for one forward pass (bf16 on CPU or CUDA, fp16 on CUDA); "off" does nothing.
class AutocastScope {
 public:
  AutocastScope(const std::string& amp, const torch::Device& device);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool m_active = false;
  at::DeviceType m_type = at::kCPU;
};

/// A batch's figures over every process.
struct BatchFigures {
  double loss = 0;                 ///< mean loss of the global batch (NaN when nothing counted)
  double lossSum = 0;              ///< loss x samples, over the processes
  std::vector<double> figureSums;  ///< the task's trainSums, over the processes
  std::int64_t seen = 0;           ///< samples counted (0 when the loss was not finite)
  bool nonFinite = false;          ///< some process's loss was not finite: no backward was done
  double localLoss = 0;            ///< this process's loss (the non-finite value, for the message)
  bool stopAgreed = false;         ///< some process asked to stop
  bool pauseAgreed = false;
};

/// What an optimizer step did.
enum class StepResult { Stepped, NonFinite, ScalerSkipped };

class StepRunner {
 public:
  /// `params` / `paramNodes`: the trainable parameters and the node each belongs to. `state`
  /// receives the step count, per-node norm sums and the fp16 loss scaler. `task` gives the
  /// loss and the batch's figures.
  StepRunner(graph::GraphModule& net, torch::optim::Optimizer& optimizer,
             const TrainOptions& options, const torch::Device& device, ProcessGroup& group,
             LoopState& state, std::vector<torch::Tensor> params,
             std::vector<std::string> paramNodes, const task::Task& task);

  /// Forward, loss and the exchange of figures; backward unless a loss was not finite.
  /// `sync`: gradients are summed over the processes during this backward (the group ends
  /// here). `stopAsked` / `pauseAsked` travel with the figures so every process agrees.
  BatchFigures forwardBackward(const data::Batch& batch, const BatchGroup& group, bool sync,
                               bool stopAsked, bool pauseAsked);
  /// Norms, clipping and the optimizer step at `lr`. A non-finite norm zeroes the gradients
  /// and steps nothing (under fp16 the loss scaler shrinks: ScalerSkipped).
  StepResult optimizerStep(double lr);
  /// Drops the accumulated gradients (a group that will not step).
  void discardGradients();

  double lastGradNorm() const { return m_gradNorm; }  ///< global L2 norm before clipping
  /// Adds the time of each phase of the following steps to `phases` (nullptr: stop).
  void setPhaseClock(StepPhases* phases) { m_phases = phases; }
  /// The learning-rate multiplier of each optimizer group (makeOptimizer's groupScales).
  void setLrScales(std::vector<double> scales) { m_lrScales = std::move(scales); }
  /// Parameters that start to train (gradual unfreezing): from now on in the gradient norms
  /// and clipping.
  void addTrainable(const std::vector<std::pair<std::string, torch::Tensor>>& params) {
    for (const auto& [node, t] : params) {
      m_params.push_back(t);
      m_paramNodes.push_back(node);
    }
  }
  const std::vector<torch::Tensor>& params() const { return m_params; }

 private:
  double gradientNorms(std::map<std::string, double>& nodeSquares);
  void clip();

  graph::GraphModule& m_net;
  torch::optim::Optimizer& m_optimizer;
  std::vector<double> m_lrScales;
  const TrainOptions& m_options;
  torch::Device m_device;
  ProcessGroup& m_group;
  LoopState& m_state;
  std::vector<torch::Tensor> m_params;
  std::vector<std::string> m_paramNodes;
  const task::Task& m_task;
  double m_gradNorm = 0;
  StepPhases* m_phases = nullptr;
};

}  // namespace netsmith::train
