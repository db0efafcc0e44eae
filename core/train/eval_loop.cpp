#include "train/eval_loop.h"

#include <algorithm>

#include "data/data_loader.h"
#include "task/task.h"
#include "train/process_group.h"
#include "train/step_runner.h"

namespace netsmith::train {
namespace {

/// Runs `forward` (in eval mode, without gradients) over one epoch of `loader` and sums the
/// task's figures (the caller adds them over the processes and finishes them). `stop` ends
/// early when true.
std::unique_ptr<task::MetricSums> evaluateTask(
    const task::Task& task, const std::function<torch::Tensor(const torch::Tensor&)>& forward,
    data::DataLoader& loader, const torch::Device& device, const std::function<bool()>& stop) {
  torch::NoGradGuard noGrad;
  auto sums = task.evalSums();
  loader.startEpoch(0);
  while (auto batch = loader.next()) {
    if (stop && stop()) {
      loader.stop();
      break;
    }
    if (batch->images.size(0) == 0) continue;  // a data-parallel share can be empty
    const auto images = batch->images.to(device, /*non_blocking=*/true);
    const auto target = batch->target.to(device);
    sums->add(forward(images), target);
  }
  return sums;
}

}  // namespace

task::EvalMetrics EvalLoop::run(data::DataLoader& loader) {
  auto& s = m_setup;
  s.group->beforeEvaluation(s.net);
  s.net->eval();
  std::function<bool()> stop;
  if (s.group->stopsAlone()) stop = [this] { return bool(m_controls.stopNow); };
  std::unique_ptr<task::MetricSums> sums;
  {
    AutocastScope autocast(s.opt.amp, s.device);
    sums = evaluateTask(
        *s.task, [&](const torch::Tensor& x) { return s.net->forward(x); }, loader, s.device, stop);
  }
  s.net->train();
  // Every process's share, summed (a single process's sums come back as they were).
  auto v = sums->sums();
  s.group->sum(v, "the evaluation figures");
  sums->setSums(v);
  return sums->finish();
}

task::EvalMetrics EvalLoop::validation() {
  auto& s = m_setup;
  if (!s.opt.fastDevRun) return run(*s.valLoader);
  // One validation batch: a loader over the first batch's samples.
  auto one = s.pd->data.validation;
  one.indices.resize(static_cast<std::size_t>(std::min<std::int64_t>(one.size(), s.opt.batchSize)));
  data::LoaderOptions eo;
  eo.batchSize = s.opt.batchSize;
  eo.training = false;
  eo.shuffle = false;
  eo.workers = 1;
  data::DataLoader loader(one, *s.pd->processor, eo);
  return run(loader);
}

}  // namespace netsmith::train
