#pragma once

// The run's test figure: the test split evaluated once, at the end of a completed run, with the
// weights of the best epoch (train.monitor), as the Evaluation page evaluates the best
// checkpoint. As a callback it keeps a copy of the weights whenever an epoch improves on the
// best; without such an epoch (no improvement since a resume) the last weights are tested.
#include <functional>
#include <memory>
#include <string>

#include "checkpoint/checkpoint.h"
#include "train/best_metric.h"
#include "train/eval_loop.h"

namespace netsmith::train {

class TestPass : public Callback {
 public:
  /// `best` must come before this callback in the run's list (it decides "improved").
  TestPass(RunSetup& setup, std::shared_ptr<const BestMetric> best)
      : m_setup(setup), m_best(std::move(best)) {}
  std::string onEpochEnd(const run::EpochMetrics& epoch) override;

  struct Outcome {
    task::EvalMetrics metrics;
    std::string weights;  ///< "best" or "last"
  };
  /// Loads the best weights (when some were kept) and evaluates the test split through `loop`.
  Outcome run(EvalLoop& loop, const std::function<void(const std::string&)>& log);

 private:
  RunSetup& m_setup;
  std::shared_ptr<const BestMetric> m_best;
  checkpoint::NamedTensors m_bestWeights;
  Json m_bestTaskState;
};

}  // namespace netsmith::train
