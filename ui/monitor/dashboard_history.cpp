// A resumed run's history on the dashboard: what its run folder holds from before the resume,
// drawn as the run's own points once the resumed run's first point says where it goes on.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "monitor/dashboard.h"
#include "run/run_records.h"

namespace netsmith::ui {

void Dashboard::setHistory(const run::RunRecord& record) {
  m_history = std::make_unique<run::RunRecord>(record);
}

void Dashboard::drawHistory(std::int64_t firstStep, std::int64_t firstEpoch,
                            std::int64_t batchesPerEpoch, double firstSeconds) {
  const std::unique_ptr<run::RunRecord> record = std::move(m_history);
  if (!record) return;
  // The step rows as the run stands: a part written after a resume replaces the rows from its
  // first step on (an earlier resume repeated them), and the live run replaces from firstStep.
  std::vector<const run::StepRecord*> steps;
  for (const auto& s : record->steps) {
    while (!steps.empty() && steps.back()->step >= s.step)
      steps.pop_back();
    steps.push_back(&s);
  }
  const bool stepKnown = firstStep != std::numeric_limits<std::int64_t>::max();
  while (!steps.empty() && (steps.back()->step >= double(firstStep) ||
                            (!stepKnown && steps.back()->epoch >= firstEpoch)))
    steps.pop_back();
  // The epochs before the one the run goes on in; the last record of an epoch counts.
  std::map<std::int64_t, run::EpochMetrics> epochs;
  for (const Json& event : record->epochEvents) {
    run::EpochMetrics e = run::epochMetricsFromJson(event);
    if (e.epoch >= 0 && e.epoch < firstEpoch) epochs[e.epoch] = std::move(e);
  }
  if (epochs.empty()) {
    // No events.jsonl to read: metrics.csv's epoch rows (losses, the headline figure, LR).
    const std::string headline = record->headline;
    for (const auto& r : record->epochs) {
      if (r.epoch < 0 || r.epoch >= firstEpoch) continue;
      run::EpochMetrics e;
      e.epoch = r.epoch;
      e.trainLoss = r.trainLoss;
      e.trainAccuracy = e.validation.accuracy = std::nan("");
      e.trainFigures[headline] = r.trainFigure;
      e.hasValidation = std::isfinite(r.valLoss);
      e.validation.loss = r.valLoss;
      e.validation.figures[headline] = r.valFigure;
      e.lr = r.lr;
      e.seconds = r.seconds;
      epochs[r.epoch] = e;
    }
  }
  if (batchesPerEpoch <= 0)
    for (const auto* s : steps)
      batchesPerEpoch = std::max(batchesPerEpoch, s->batch + 1);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  QVector<run::BatchMetrics> batches;
  const auto flush = [&] {
    if (batches.isEmpty()) return;
    addBatches(batches);
    batches.clear();
  };
  std::size_t next = 0;
  const auto takeSteps = [&](std::int64_t upToEpoch) {
    for (; next < steps.size() && steps[next]->epoch <= upToEpoch; ++next) {
      const auto& s = *steps[next];
      run::BatchMetrics b;
      b.epoch = s.epoch;
      b.batch = s.batch;
      b.batchesPerEpoch = batchesPerEpoch;
      b.step = std::int64_t(s.step);
      b.loss = s.loss;
      b.headlineValue = b.epochLoss = b.epochHeadlineValue = nan;  // not in metrics.csv's steps
      b.lr = s.lr;
      b.gradNorm = s.gradNorm;
      b.imagesPerSecond = s.imagesPerSecond;
      b.seconds = b.runSeconds = s.seconds;
      b.memory.bytes = std::int64_t(s.memoryBytes);
      batches.push_back(b);
    }
    flush();
  };
  for (const auto& [epoch, e] : epochs) {
    takeSteps(epoch);
    addEpoch(e);
  }
  takeSteps(std::numeric_limits<std::int64_t>::max());
  // The resumed process counts its time from 0: its points go on after the history's.
  if (firstSeconds < m_keys.lastSeconds()) m_keys.continueAfter(m_keys.lastSeconds());
}

}  // namespace netsmith::ui
