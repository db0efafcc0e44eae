#include "train/process_group.h"

#include <cmath>

#include "train/trainer.h"

namespace netsmith::train {

void ProcessGroup::sum(std::vector<double>&, const std::string&) {}

bool ProcessGroup::anyRank(bool mine, const std::string& what) {
  std::vector<double> v{mine ? 1.0 : 0.0};
  sum(v, what);
  return v[0] > 0;
}

void ProcessGroup::prepareModel(graph::GraphModule&, const std::vector<torch::Tensor>&,
                                const TrainOptions&) {}
void ProcessGroup::beforeEvaluation(graph::GraphModule&) {}
void ProcessGroup::beforeBackward(bool) {}
void ProcessGroup::afterBackward(bool) {}
void ProcessGroup::finish(double) {}

void ProcessGroup::announcePause(bool paused) {
  m_ctx.state = paused ? RunState::Paused : RunState::Running;
  m_ctx.log(paused ? "paused" : "resumed");
}

PauseOutcome ProcessGroup::holdOrStop(bool, bool stopAgreed) {
  PauseOutcome out;
  auto& controls = m_ctx.controls;
  if (controls.paused && !controls.stopNow) {
    announcePause(true);
    const auto pausedAt = std::chrono::steady_clock::now();
    controls.waitWhilePaused();
    out.pausedSeconds = secondsSince(pausedAt);
    announcePause(false);
  }
  // A stop pressed during the pause counts too.
  out.stop = stopAgreed || controls.stopNow;
  return out;
}

}  // namespace netsmith::train
