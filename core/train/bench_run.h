#pragma once

// `netsmith-cli bench` as a run of its own: the loop's batch step timed on one synthetic batch
// of the model's input shape, fed again and again, then on the training loader, then (when
// asked) once more under LibTorch's profiler. The step is the loop's (Fit::trainBatch, handed
// in), so the figures are what training costs per batch, the loop's own work included; the
// phases come from the step runner's clock.
#include <functional>
#include <optional>

#include "train/loop_state.h"
#include "train/run_setup.h"
#include "train/step_bench.h"
#include "train/step_runner.h"

namespace netsmith::train {

class BenchRun {
 public:
  /// Trains one batch as the loop does; false: the run was asked to stop.
  using TrainBatch = std::function<bool(const data::Batch& batch, bool& groupHasBadBatch)>;

  BenchRun(RunSetup& setup, LoopState& state, StepRunner& runner, BenchOptions options)
      : m_setup(setup), m_state(state), m_runner(runner), m_options(std::move(options)) {}
  BenchResult run(const TrainBatch& trainBatch);

 private:
  StepRate timeBatches(const TrainBatch& trainBatch,
                       const std::function<std::optional<data::Batch>()>& next);

  RunSetup& m_setup;
  LoopState& m_state;
  StepRunner& m_runner;
  BenchOptions m_options;
};

}  // namespace netsmith::train
