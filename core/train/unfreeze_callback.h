#pragma once

// train.unfreeze as a callback (gradual unfreezing, as Lightning's fine-tuning callback does it):
// at the start of each epoch, the steps due by then unfreeze their nodes, once each. A resumed
// run replays the earlier steps at its first epoch, so the model trains what the checkpoint's
// trained; there is no state to keep. No LibTorch here: what unfreezing does to the model and
// the step runner is the `unfreeze` function's (the loop's), so this is tested without a model.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "graph/model_graph.h"
#include "train/callback.h"
#include "train/train_options.h"

namespace netsmith::train {

class UnfreezeCallback : public Callback {
 public:
  /// What one step did: the nodes whose parameters now train, and how many parameters.
  struct Unfrozen {
    std::size_t nodes = 0;
    std::int64_t parameters = 0;
  };
  /// Unfreezes the nodes `ids` (the loop's part: the model's flags, the step runner's list).
  using Unfreeze = std::function<Unfrozen(const std::vector<std::string>& ids)>;

  /// `model` must outlive the callback; `log` announces each step.
  UnfreezeCallback(std::vector<UnfreezeStep> steps, const graph::ModelGraph& model,
                   Unfreeze unfreeze, std::function<void(const std::string&)> log);
  void onEpochStart(std::int64_t epoch) override;
  /// Steps applied so far.
  std::size_t applied() const { return m_done; }

 private:
  std::vector<UnfreezeStep> m_steps;  // by epoch
  const graph::ModelGraph& m_model;
  Unfreeze m_unfreeze;
  std::function<void(const std::string&)> m_log;
  std::size_t m_done = 0;
};

}  // namespace netsmith::train
