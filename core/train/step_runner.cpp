#include "train/step_runner.h"

#include <ATen/autocast_mode.h>

#include <chrono>
#include <cmath>

#include "common/torch_compat.h"
#include "task/task.h"
#include "train/optimizer_factory.h"
#include "train/process_group.h"

namespace netsmith::train {

namespace {

/// Adds the time since the last lap to a phase, when phases are being timed.
class PhaseLaps {
 public:
  explicit PhaseLaps(StepPhases* phases) : m_phases(phases) {}
  void lap(double StepPhases::*phase) {
    if (!m_phases) return;
    const auto now = std::chrono::steady_clock::now();
    m_phases->*phase += std::chrono::duration<double>(now - m_last).count();
    m_last = now;
  }

 private:
  StepPhases* m_phases;
  std::chrono::steady_clock::time_point m_last = std::chrono::steady_clock::now();
};

}  // namespace

AutocastScope::AutocastScope(const std::string& amp, const torch::Device& device) {
  if (amp == "off") return;
  m_active = true;
  m_type = device.is_cuda() ? at::kCUDA : at::kCPU;
  const auto dtype = amp == "fp16" ? at::kHalf : at::kBFloat16;
#if NETSMITH_TORCH_AT_LEAST(2, 4)
  at::autocast::set_autocast_enabled(m_type, true);
  at::autocast::set_autocast_dtype(m_type, dtype);
#else
  if (m_type == at::kCUDA) {
    at::autocast::set_enabled(true);
    at::autocast::set_autocast_gpu_dtype(dtype);
  } else {
    at::autocast::set_cpu_enabled(true);
    at::autocast::set_autocast_cpu_dtype(dtype);
  }
#endif
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (!m_active) return;
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
#if NETSMITH_TORCH_AT_LEAST(2, 4)
  at::autocast::set_autocast_enabled(m_type, false);
#else
  if (m_type == at::kCUDA)
    at::autocast::set_enabled(false);
  else
    at::autocast::set_cpu_enabled(false);
#endif
}

StepRunner::StepRunner(graph::GraphModule& net, torch::optim::Optimizer& optimizer,
                       const TrainOptions& options, const torch::Device& device,
                       ProcessGroup& group, LoopState& state, std::vector<torch::Tensor> params,
                       std::vector<std::string> paramNodes, const task::Task& task)
    : m_net(net),
      m_optimizer(optimizer),
      m_options(options),
      m_device(device),
      m_group(group),
      m_state(state),
      m_params(std::move(params)),
      m_paramNodes(std::move(paramNodes)),
      m_task(task) {}

BatchFigures StepRunner::forwardBackward(const data::Batch& batch, const BatchGroup& group,
                                         bool sync, bool stopAsked, bool pauseAsked) {
  const auto images = batch.images.to(m_device, /*non_blocking=*/true);
  const auto target = batch.target.to(m_device, /*non_blocking=*/true);
  const auto soft = batch.targets.defined() ? batch.targets.to(m_device) : torch::Tensor();
  const std::int64_t n = images.size(0);
  // A data-parallel share can be empty (the last global batch has fewer samples than
  // processes). It still runs the model when BatchNorm is synchronised, so that its
  // collectives match the other ranks'.
  const bool empty = n == 0;
  PhaseLaps laps(m_phases);
  torch::Tensor output, loss;
  if (!empty || m_group.crossProcessBatchNorm()) {
    AutocastScope autocast(m_options.amp, m_device);
    output = m_net->forward(images);
  }
  laps.lap(&StepPhases::forward);
  if (!empty) {
    loss = m_task.loss(output, target, soft);
  } else if (output.defined()) {
    loss = output.sum() * 0.0;
  }
  const double lossValue = empty ? 0.0 : loss.item<double>();
  const bool bad = !std::isfinite(lossValue);
  // The batch over every process: [loss x n, n, bad, stop, pause, the task's figure sums...].
  std::vector<double> all{bad ? 0.0 : lossValue * double(n), bad ? 0.0 : double(n), bad ? 1.0 : 0.0,
                          stopAsked ? 1.0 : 0.0, pauseAsked ? 1.0 : 0.0};
  constexpr std::size_t kFigures = 5;
  auto mine = empty ? std::vector<double>() : m_task.trainSums(output, target);
  mine.resize(m_task.trainSumCount(), 0.0);  // every process sends as many
  all.insert(all.end(), mine.begin(), mine.end());
  m_group.sum(all, "the batch figures");
  BatchFigures f;
  f.lossSum = all[0];
  f.seen = static_cast<std::int64_t>(std::llround(all[1]));
  f.nonFinite = all[2] > 0;
  f.localLoss = lossValue;
  f.stopAgreed = all[3] > 0;
  f.pauseAgreed = all[4] > 0;
  f.figureSums.assign(all.begin() + kFigures, all.end());
  f.loss = all[1] > 0 ? all[0] / all[1] : std::nan("");
  laps.lap(&StepPhases::figures);
  if (f.nonFinite) return f;
  m_group.beforeBackward(sync);
  if (loss.defined()) {
    // Each process's mean loss weighs by its share of the global batch: the summed gradients
    // are those of the global batch's mean loss (a single process's share is 1).
    const double share = all[1] > 0 ? double(n) / all[1] : 0.0;
    auto scaled = loss * share / double(group.size);
    if (m_options.amp == "fp16") scaled = scaled * m_state.lossScale;
    scaled.backward();
  }
  m_group.afterBackward(sync);
  laps.lap(&StepPhases::backward);
  return f;
}

double StepRunner::gradientNorms(std::map<std::string, double>& nodeSquares) {
  const bool scaling = m_options.amp == "fp16";
  std::vector<torch::Tensor> norms;
  std::vector<std::size_t> which;
  for (std::size_t i = 0; i < m_params.size(); ++i) {
    auto& g = m_params[i].mutable_grad();
    if (!g.defined()) continue;
    if (scaling) g.div_(m_state.lossScale);
    norms.push_back(g.detach().norm(2).to(torch::kFloat));
    which.push_back(i);
  }
  double total = 0;
  if (norms.empty()) return total;
  const auto all = torch::stack(norms).to(torch::kCPU, torch::kDouble).contiguous();
  const double* v = all.data_ptr<double>();
  for (std::size_t k = 0; k < which.size(); ++k) {
    total += v[k] * v[k];
    nodeSquares[m_paramNodes[which[k]]] += v[k] * v[k];
  }
  return std::sqrt(total);
}

void StepRunner::clip() {
  torch::NoGradGuard noGrad;
  if (m_options.clipGradValue > 0) {
    for (auto& p : m_params) {
      if (p.grad().defined())
        p.mutable_grad().clamp_(-m_options.clipGradValue, m_options.clipGradValue);
    }
  }
  if (m_options.clipGradNorm > 0 && m_gradNorm > m_options.clipGradNorm) {
    const double coef = m_options.clipGradNorm / (m_gradNorm + 1e-6);
    for (auto& p : m_params) {
      if (p.grad().defined()) p.mutable_grad().mul_(coef);
    }
  }
}

StepResult StepRunner::optimizerStep(double lr) {
  PhaseLaps laps(m_phases);
  std::map<std::string, double> nodeSquares;
  const double norm = gradientNorms(nodeSquares);
  m_gradNorm = norm;
  laps.lap(&StepPhases::norms);
  if (!std::isfinite(norm)) {
    m_optimizer.zero_grad();
    if (m_options.amp != "fp16") return StepResult::NonFinite;
    // The loss scaler's normal business: skip, shrink the scale.
    m_state.lossScale = std::max(1.0, m_state.lossScale * 0.5);
    m_state.scaleGrowth = 0;
    ++m_state.skippedSteps;
    return StepResult::ScalerSkipped;
  }
  for (const auto& [node, sq] : nodeSquares)
    m_state.normSums[node] += std::sqrt(sq);
  ++m_state.normSteps;
  clip();
  setLearningRate(m_optimizer, lr, m_lrScales);
  m_optimizer.step();
  m_optimizer.zero_grad();
  laps.lap(&StepPhases::optimizer);
  ++m_state.step;
  if (m_options.amp == "fp16" && ++m_state.scaleGrowth >= 2000) {
    m_state.lossScale *= 2;
    m_state.scaleGrowth = 0;
  }
  return StepResult::Stepped;
}

void StepRunner::discardGradients() {
  m_optimizer.zero_grad();
}

}  // namespace netsmith::train
