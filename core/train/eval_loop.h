#pragma once

// The evaluation loop of a run: the model in eval mode over a loader, under the run's autocast,
// the task's figures summed over the processes and finished. A run's validation (after every
// epoch) and its test pass (TestPass) go through it.
#include "train/run_context.h"
#include "train/run_setup.h"

namespace netsmith::train {

class EvalLoop {
 public:
  /// `setup` and `controls` outlive the loop.
  EvalLoop(RunSetup& setup, RunControls& controls) : m_setup(setup), m_controls(controls) {}

  /// One pass over `loader`; the model is back in training mode afterwards. A process that
  /// stops alone (a single process) ends the pass early when a stop arrives.
  task::EvalMetrics run(data::DataLoader& loader);
  /// The validation split; under train.fast_dev_run, its first batch only.
  task::EvalMetrics validation();

 private:
  RunSetup& m_setup;
  RunControls& m_controls;
};

}  // namespace netsmith::train
