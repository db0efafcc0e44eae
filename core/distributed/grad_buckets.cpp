#include "distributed/grad_buckets.h"

namespace netsmith::distributed {

GradBuckets::GradBuckets(Comm& comm, std::vector<torch::Tensor> params, double bucketMb)
    : m_comm(comm), m_params(std::move(params)) {
  const auto limit = static_cast<std::int64_t>(bucketMb * 1024 * 1024);
  m_where.resize(m_params.size());
  m_filled.assign(m_params.size(), false);
  // Last parameters first: backward produces their gradients first.
  std::int64_t bytes = 0;
  for (std::size_t k = m_params.size(); k-- > 0;) {
    const auto& p = m_params[k];
    const std::int64_t size = p.numel() * static_cast<std::int64_t>(p.element_size());
    if (m_buckets.empty() || (bytes > 0 && bytes + size > limit) ||
        m_buckets.back().flat.scalar_type() != p.scalar_type()) {
      m_buckets.emplace_back();
      m_buckets.back().flat = torch::empty({0}, p.options());
      bytes = 0;
    }
    auto& b = m_buckets.back();
    b.offsets.push_back(bytes / static_cast<std::int64_t>(p.element_size()));
    m_where[k] = {m_buckets.size() - 1, b.members.size()};
    b.members.push_back(k);
    bytes += size;
  }
  for (auto& b : m_buckets) {
    std::int64_t n = 0;
    for (auto m : b.members)
      n += m_params[m].numel();
    b.flat = torch::zeros({n}, m_params[b.members.front()].options().requires_grad(false));
  }
  for (std::size_t k = 0; k < m_params.size(); ++k) {
    m_hooks.push_back(
        m_params[k].register_hook([this, k](const torch::Tensor& grad) { onGrad(k, grad); }));
  }
}

GradBuckets::~GradBuckets() {
  for (std::size_t k = 0; k < m_params.size() && k < m_hooks.size(); ++k)
    m_params[k].remove_hook(m_hooks[k]);
}

void GradBuckets::arm() {
  m_armed = true;
  m_nextLaunch = 0;
  m_startedEarly = 0;
  std::fill(m_filled.begin(), m_filled.end(), false);
  for (auto& b : m_buckets) {
    b.filled = 0;
    b.launched = false;
  }
}

void GradBuckets::onGrad(std::size_t k, const torch::Tensor& grad) {
  if (!m_armed || m_filled[k]) return;
  torch::NoGradGuard noGrad;
  const auto [bi, mi] = m_where[k];
  auto& b = m_buckets[bi];
  const auto& p = m_params[k];
  // The hook runs before the gradient is accumulated: add what earlier micro-batches left.
  auto full = p.grad().defined() ? p.grad() + grad : grad;
  b.flat.narrow(0, b.offsets[mi], p.numel()).copy_(full.reshape(-1));
  m_filled[k] = true;
  ++b.filled;
  if (!m_inFinish) launchReady();
}

void GradBuckets::launchReady() {
  while (m_nextLaunch < m_buckets.size()) {
    auto& b = m_buckets[m_nextLaunch];
    if (b.filled < b.members.size()) return;
    b.pending = m_comm.allreduceSumAsync(b.flat, "gradients");
    b.launched = true;
    if (!m_inFinish) ++m_startedEarly;
    ++m_nextLaunch;
  }
}

void GradBuckets::finish() {
  if (!m_armed) return;
  m_inFinish = true;
  torch::NoGradGuard noGrad;
  // Parameters without a gradient this pass (an unused branch, an empty batch) send their
  // accumulated gradient, or zeros.
  for (std::size_t k = 0; k < m_params.size(); ++k) {
    if (m_filled[k]) continue;
    const auto [bi, mi] = m_where[k];
    auto& b = m_buckets[bi];
    auto slice = b.flat.narrow(0, b.offsets[mi], m_params[k].numel());
    if (m_params[k].grad().defined())
      slice.copy_(m_params[k].grad().reshape(-1));
    else
      slice.zero_();
    m_filled[k] = true;
    ++b.filled;
  }
  launchReady();
  for (auto& b : m_buckets)
    m_comm.wait(b.pending);
  for (auto& b : m_buckets) {
    for (std::size_t mi = 0; mi < b.members.size(); ++mi) {
      auto& p = m_params[b.members[mi]];
      auto summed = b.flat.narrow(0, b.offsets[mi], p.numel()).view(p.sizes());
      if (p.grad().defined())
        p.mutable_grad().copy_(summed);
      else
        p.mutable_grad() = summed.clone().contiguous(p.suggest_memory_format());
    }
  }
  m_armed = false;
  m_inFinish = false;
}

}  // namespace netsmith::distributed
