#include "train/process_group.h"

#include <cmath>

#include "train/metrics.h"
#include "train/trainer.h"

namespace netsmith::train {

void ProcessGroup::sum(std::vector<double>&, const std::string&) {}

bool ProcessGroup::anyRank(bool mine, const std::string& what) {
  std::vector<double> v{mine ? 1.0 : 0.0};
  sum(v, what);
  return v[0] > 0;
}

EvalMetrics ProcessGroup::reduceMetrics(const EvalMetrics& m, std::int64_t numClasses) {
  if (worldSize() == 1) return m;
  std::vector<double> v;
  v.reserve(static_cast<std::size_t>(numClasses * numClasses + 1));
  for (std::int64_t t = 0; t < numClasses; ++t) {
    for (std::int64_t q = 0; q < numClasses; ++q) {
      const bool has = t < std::int64_t(m.confusion.size()) &&
                       q < std::int64_t(m.confusion[std::size_t(t)].size());
      v.push_back(has ? double(m.confusion[std::size_t(t)][std::size_t(q)]) : 0.0);
    }
  }
  v.push_back(m.samples ? m.loss * double(m.samples) : 0.0);
  sum(v, "the evaluation figures");
  std::vector<std::int64_t> counts(v.size() - 1);
  for (std::size_t i = 0; i + 1 < v.size(); ++i)
    counts[i] = std::llround(v[i]);
  return ConfusionCounter(numClasses, std::move(counts)).metrics(v.back());
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
