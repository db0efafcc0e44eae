#include "train/eval_loop.h"

#include <algorithm>

#include "task/task.h"
#include "train/metrics.h"
#include "train/process_group.h"
#include "train/step_runner.h"

namespace netsmith::train {

EvalMetrics EvalLoop::run(data::DataLoader& loader) {
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

EvalMetrics EvalLoop::validation() {
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
