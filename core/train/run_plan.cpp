#include "train/run_plan.h"

#include <algorithm>

#include "train/train_options.h"

namespace netsmith::train {

std::int64_t limitedCount(std::int64_t n, std::int64_t limit) {
  return limit > 0 ? std::min(n, limit) : n;
}

RunPlan RunPlan::make(const TrainOptions& options, std::int64_t splitSamples,
                      std::int64_t limitTrain, int worldSize) {
  RunPlan p;
  p.m_worldSize = std::max(1, worldSize);
  p.m_batchSize = std::max<std::int64_t>(1, options.batchSize);
  p.m_accumulation = std::max<std::int64_t>(1, options.gradAccumulation);
  p.m_schedule = options.schedule;
  std::int64_t samples = limitedCount(std::max<std::int64_t>(0, splitSamples), limitTrain);
  if (options.overfitBatches > 0)
    samples = std::min(samples, options.overfitBatches * p.globalBatch());
  p.m_trainSamples = samples;
  const std::int64_t global = p.globalBatch();
  p.m_batchesPerEpoch = options.dropLast ? samples / global : (samples + global - 1) / global;
  p.m_epochs = std::max<std::int64_t>(1, options.epochs);
  if (options.fastDevRun) {
    p.m_batchesPerEpoch = std::min<std::int64_t>(p.m_batchesPerEpoch, 1);
    p.m_epochs = 1;
  }
  p.m_span.epochs = p.m_epochs;
  p.m_span.stepsPerEpoch = (p.m_batchesPerEpoch + p.m_accumulation - 1) / p.m_accumulation;
  return p;
}

BatchGroup RunPlan::groupOf(std::int64_t batch) const {
  BatchGroup g;
  g.start = (batch / m_accumulation) * m_accumulation;
  g.size = std::max<std::int64_t>(1, std::min(m_accumulation, m_batchesPerEpoch - g.start));
  g.boundary = batch + 1 == g.start + g.size;
  return g;
}

std::int64_t RunPlan::stepsBefore(std::int64_t epoch, std::int64_t batch) const {
  return epoch * stepsPerEpoch() + batch / m_accumulation;
}

double RunPlan::lrAt(std::int64_t step) const {
  const std::int64_t last = std::max<std::int64_t>(0, totalSteps() - 1);
  return m_schedule.lrAt(std::clamp<std::int64_t>(step, 0, last), m_span);
}

std::vector<double> RunPlan::lrCurve() const {
  return m_schedule.curve(m_span);
}

Json RunPlan::toJson() const {
  return Json{{"epochs", m_epochs},
              {"train_samples", m_trainSamples},
              {"batch_size", m_batchSize},
              {"world_size", m_worldSize},
              {"global_batch", globalBatch()},
              {"grad_accumulation", m_accumulation},
              {"batches_per_epoch", m_batchesPerEpoch},
              {"steps_per_epoch", stepsPerEpoch()},
              {"total_steps", totalSteps()},
              {"schedule", m_schedule.type()},
              {"base_lr", m_schedule.baseLr()}};
}

std::string RunPlan::describe() const {
  std::string batch = std::to_string(m_batchSize);
  if (m_worldSize > 1) batch += " x " + std::to_string(m_worldSize) + " processes";
  std::string text = std::to_string(m_epochs) + (m_epochs == 1 ? " epoch" : " epochs") + " x " +
                     std::to_string(m_batchesPerEpoch) + " batches of " + batch;
  if (m_accumulation > 1) {
    text += " (accumulation " + std::to_string(m_accumulation) + ": " +
            std::to_string(stepsPerEpoch()) + " steps per epoch)";
  }
  return text + " = " + std::to_string(totalSteps()) + " optimizer steps";
}

}  // namespace netsmith::train
