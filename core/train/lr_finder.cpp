#include "train/lr_finder.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "checkpoint/checkpoint.h"
#include "common/error.h"
#include "train/device.h"
#include "train/optimizer_factory.h"
#include "train/step_runner.h"

namespace netsmith::train {

namespace {

/// The model's weights and the optimizer's state, to put back after the sweep.
struct SavedState {
  std::vector<std::pair<std::string, torch::Tensor>> weights;
  checkpoint::NamedTensors optimizer;
};

SavedState save(RunSetup& s) {
  SavedState saved;
  for (const auto& [name, t] : checkpoint::moduleState(*s.net))
    saved.weights.emplace_back(name, t.clone());
  saved.optimizer = checkpoint::optimizerState(*s.optimizer, s.opt.optimizer.type, *s.net);
  return saved;
}

/// Restores `saved`; returns true when every weight equals the saved one.
bool restore(RunSetup& s, const SavedState& saved) {
  {
    torch::NoGradGuard noGrad;
    checkpoint::loadModuleState(*s.net, saved.weights);
  }
  s.optimizer = makeOptimizer(s.opt.optimizer, s.net->named_parameters(), s.lrMult, &s.lrScales,
                              /*includeFrozen=*/!s.opt.unfreeze.empty());
  checkpoint::restoreOptimizerState(*s.optimizer, s.opt.optimizer.type, *s.net, saved.optimizer);
  for (const auto& entry : checkpoint::moduleState(*s.net)) {
    const auto it = std::find_if(saved.weights.begin(), saved.weights.end(),
                                 [&](const auto& p) { return p.first == entry.first; });
    if (it == saved.weights.end() || !torch::equal(it->second, entry.second)) return false;
  }
  return true;
}

}  // namespace

void suggestLearningRate(LrFindResult& r) {
  const std::size_t n = r.smoothed.size();
  if (n == 0) return;
  // The first tenth of the sweep is the smoothing's start-up, not a signal.
  const std::size_t skip = n >= 10 ? n / 10 : 0;
  const auto minIt = std::min_element(r.smoothed.begin() + long(skip), r.smoothed.end());
  const auto minAt = static_cast<std::size_t>(minIt - r.smoothed.begin());
  r.minLossLr = r.lrs[minAt];
  r.suggestedLr = r.minLossLr / 10;
  // The falling stretch that ends at the minimum (rises under 1% of the loss do not end it)...
  std::size_t start = minAt;
  while (start > skip && r.smoothed[start - 1] >= r.smoothed[start] - 0.01 * r.smoothed[minAt])
    --start;
  // ...and, on it, the steepest fall in log LR over a twentieth of the sweep (at least three
  // steps: a short span follows the smoothing's noise).
  const std::size_t span = std::max<std::size_t>(3, n / 20);
  double steepest = 0;
  for (std::size_t k = start; k + span <= minAt; ++k) {
    const double slope =
        (r.smoothed[k + span] - r.smoothed[k]) / (std::log(r.lrs[k + span]) - std::log(r.lrs[k]));
    if (slope < steepest) {
      steepest = slope;
      r.suggestedLr = std::sqrt(r.lrs[k] * r.lrs[k + span]);  // the middle, in log LR
    }
  }
}

LrFindResult findLearningRate(RunContext& ctx, RunSetup& s, const LrFindOptions& o) {
  if (!(o.startLr > 0) || !(o.endLr > o.startLr) || o.steps < 2)
    throw Error("lr-find: needs 0 < start LR < end LR and at least 2 steps");
  LrFindResult r;
  const SavedState saved = save(s);
  LoopState state;
  StepRunner runner(s.net, *s.optimizer, s.opt, s.device, *s.group, state, s.params, s.paramNodes,
                    *s.task);
  runner.setLrScales(s.lrScales);
  s.net->train();
  double avg = 0, best = std::numeric_limits<double>::infinity();
  std::int64_t epoch = 0;
  s.trainLoader->startEpoch(epoch);
  for (std::int64_t i = 0; i < o.steps && !ctx.controls.stopNow; ++i) {
    auto batch = s.trainLoader->next();
    if (!batch) {
      s.trainLoader->startEpoch(++epoch);
      batch = s.trainLoader->next();
      if (!batch) break;
    }
    const double lr = o.startLr * std::pow(o.endLr / o.startLr, double(i) / double(o.steps - 1));
    const auto f = runner.forwardBackward(*batch, BatchGroup{}, true, false, false);
    if (f.nonFinite || runner.optimizerStep(lr) != StepResult::Stepped) {
      r.diverged = true;
      break;
    }
    avg = o.smoothing * avg + (1 - o.smoothing) * f.loss;
    const double smooth = avg / (1 - std::pow(o.smoothing, double(i + 1)));
    r.lrs.push_back(lr);
    r.losses.push_back(f.loss);
    r.smoothed.push_back(smooth);
    best = std::min(best, smooth);
    run::TrainingEvent e;
    e.type = run::EventType::BatchEnd;
    e.batch.batch = i;
    e.batch.batchesPerEpoch = o.steps;
    e.batch.step = i + 1;
    e.batch.totalSteps = o.steps;
    e.batch.loss = f.loss;
    e.batch.lr = lr;
    e.batch.gradNorm = runner.lastGradNorm();
    e.batch.memory = memoryFigure(s.device);
    ctx.publish(std::move(e));
    if (i > 0 && smooth > o.divergeFactor * best) {
      r.diverged = true;
      break;
    }
  }
  s.trainLoader->stop();
  suggestLearningRate(r);
  r.weightsRestored = restore(s, saved);
  return r;
}

}  // namespace netsmith::train
