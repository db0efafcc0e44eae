#include "train/bench_run.h"

#include <torch/csrc/autograd/profiler_legacy.h>

#include "task/task.h"
#include "train/run_context.h"

namespace netsmith::train {

StepRate BenchRun::timeBatches(const TrainBatch& trainBatch,
                               const std::function<std::optional<data::Batch>()>& next) {
  const auto& o = m_options;
  bool groupHasBadBatch = false;
  StepRate rate;
  auto& p = rate.phases;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < o.warmup + o.steps; ++i) {
    const bool timed = i >= o.warmup;
    if (i == o.warmup) start = std::chrono::steady_clock::now();
    const auto t0 = std::chrono::steady_clock::now();
    auto batch = next();
    if (!batch) break;
    if (timed) p.loader += secondsSince(t0);
    // Batches run through the epoch's positions again and again (the plan's groups apply).
    if (m_state.nextBatch >= m_setup.plan.batchesPerEpoch()) m_state.nextBatch = 0;
    m_runner.setPhaseClock(timed ? &p : nullptr);
    const double stepParts = p.total() - p.loader - p.loop;
    const auto t1 = std::chrono::steady_clock::now();
    const bool go = trainBatch(*batch, groupHasBadBatch);
    // What the step runner did not account for is the loop's own work.
    if (timed) p.loop += secondsSince(t1) - (p.total() - p.loader - p.loop - stepParts);
    if (!go) break;
    if (timed) {
      ++rate.steps;
      rate.images += batch->images.size(0);
    }
  }
  m_runner.setPhaseClock(nullptr);
  rate.seconds = secondsSince(start);
  return rate;
}

BenchResult BenchRun::run(const TrainBatch& trainBatch) {
  auto& s = m_setup;
  BenchResult result;
  s.net->train();
  result.threads = s.threads;
  result.workers = s.workers;
  // One random batch of the model's input shape, laid out as the loader lays out its batches.
  const auto& in = s.project.model.input;
  data::Batch synthetic;
  synthetic.images = torch::randn({s.plan.batchSize(), in.channels, in.height, in.width});
  if (s.opt.channelsLast)
    synthetic.images = synthetic.images.contiguous(torch::MemoryFormat::ChannelsLast);
  synthetic.target = s.task->syntheticTarget(s.plan.batchSize());
  synthetic.globalCount = s.plan.batchSize();
  const auto again = [&]() -> std::optional<data::Batch> {
    synthetic.index = m_state.nextBatch;
    return synthetic;
  };
  result.synthetic = timeBatches(trainBatch, again);
  if (m_options.realData) {
    m_state.nextBatch = 0;
    s.trainLoader->startEpoch(0);
    result.real = timeBatches(trainBatch, [&]() -> std::optional<data::Batch> {
      auto b = s.trainLoader->next();
      if (!b) {  // a small split: start it again
        s.trainLoader->startEpoch(++m_state.epoch);
        b = s.trainLoader->next();
      }
      return b;
    });
    s.trainLoader->stop();
  }
  if (!m_options.profileTrace.empty()) {
    // Profiled apart from the measured passes: the profiler's own cost stays out of them.
    torch::autograd::profiler::RecordProfile profile(m_options.profileTrace);
    const auto profiled = timeBatches(trainBatch, again);
    result.profiledBatches = m_options.warmup + profiled.steps;
  }
  return result;
}

}  // namespace netsmith::train
