#include "train/metrics.h"

#include <unistd.h>

#include <cmath>
#include <fstream>

#include "common/error.h"
#include "data/data_loader.h"

#if defined(NETSMITH_HAS_CUDA)
#include <c10/cuda/CUDACachingAllocator.h>
#endif

namespace netsmith::train {

torch::Tensor classificationLoss(const torch::Tensor& logits, const torch::Tensor& labels,
                                 const torch::Tensor& softTargets, double labelSmoothing,
                                 const torch::Tensor& weights) {
  const auto x = logits.to(torch::kFloat);
  if (!softTargets.defined()) {
    auto options = torch::nn::functional::CrossEntropyFuncOptions().label_smoothing(labelSmoothing);
    if (weights.defined()) options.weight(weights);
    return torch::nn::functional::cross_entropy(x, labels, options);
  }
  const auto k = static_cast<double>(x.size(1));
  auto t = softTargets.to(x.device(), torch::kFloat);
  if (labelSmoothing > 0) t = t * (1.0 - labelSmoothing) + labelSmoothing / k;
  if (weights.defined()) t = t * weights.unsqueeze(0);
  return -(t * torch::log_softmax(x, 1)).sum(1).mean();
}

ConfusionCounter::ConfusionCounter(std::int64_t numClasses)
    : m_classes(numClasses), m_counts(static_cast<std::size_t>(numClasses * numClasses), 0) {}

ConfusionCounter::ConfusionCounter(std::int64_t numClasses, std::vector<std::int64_t> counts)
    : m_classes(numClasses), m_counts(std::move(counts)) {
  m_counts.resize(static_cast<std::size_t>(numClasses * numClasses), 0);
  for (auto c : m_counts)
    m_samples += c;
}

void ConfusionCounter::add(const torch::Tensor& predicted, const torch::Tensor& labels) {
  const auto p = predicted.to(torch::kCPU, torch::kLong).contiguous();
  const auto l = labels.to(torch::kCPU, torch::kLong).contiguous();
  const auto* pp = p.data_ptr<std::int64_t>();
  const auto* lp = l.data_ptr<std::int64_t>();
  for (std::int64_t i = 0; i < p.numel(); ++i) {
    if (lp[i] < 0 || lp[i] >= m_classes || pp[i] < 0 || pp[i] >= m_classes) continue;
    ++m_counts[static_cast<std::size_t>(lp[i] * m_classes + pp[i])];
    ++m_samples;
  }
}

EvalMetrics ConfusionCounter::metrics(double lossSum) const {
  EvalMetrics m;
  m.samples = m_samples;
  m.loss = m_samples ? lossSum / double(m_samples) : std::nan("");
  std::int64_t correct = 0;
  m.confusion.assign(static_cast<std::size_t>(m_classes), {});
  for (std::int64_t t = 0; t < m_classes; ++t) {
    std::int64_t row = 0;
    auto& out = m.confusion[static_cast<std::size_t>(t)];
    for (std::int64_t p = 0; p < m_classes; ++p) {
      const auto c = m_counts[static_cast<std::size_t>(t * m_classes + p)];
      out.push_back(c);
      row += c;
    }
    const auto hit = m_counts[static_cast<std::size_t>(t * m_classes + t)];
    correct += hit;
    m.perClassAccuracy.push_back(row ? double(hit) / double(row) : std::nan(""));
  }
  m.accuracy = m_samples ? double(correct) / double(m_samples) : std::nan("");
  return m;
}

EvalMetrics evaluateClassifier(const std::function<torch::Tensor(const torch::Tensor&)>& forward,
                               data::DataLoader& loader, std::int64_t numClasses,
                               const torch::Device& device, const std::function<bool()>& stop) {
  torch::NoGradGuard noGrad;
  ConfusionCounter counter(numClasses);
  double lossSum = 0;
  loader.startEpoch(0);
  while (auto batch = loader.next()) {
    if (stop && stop()) {
      loader.stop();
      break;
    }
    if (batch->labels.numel() == 0) continue;  // a data-parallel share can be empty
    const auto images = batch->images.to(device, /*non_blocking=*/true);
    const auto labels = batch->labels.to(device);
    const auto logits = forward(images).to(torch::kFloat);
    const auto loss = torch::nn::functional::cross_entropy(
        logits, labels, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum));
    lossSum += loss.item<double>();
    counter.add(logits.argmax(1), labels);
  }
  return counter.metrics(lossSum);
}

MemoryFigure memoryFigure(const torch::Device& device) {
  MemoryFigure m;
#if defined(NETSMITH_HAS_CUDA)
  if (device.is_cuda()) {
    using namespace c10::cuda::CUDACachingAllocator;
    const auto stats = getDeviceStats(device.index() < 0 ? 0 : device.index());
    const auto all = static_cast<std::size_t>(StatType::AGGREGATE);
    m.kind = "cuda_allocator";
    m.bytes = stats.allocated_bytes[all].current;
    m.reservedBytes = stats.reserved_bytes[all].current;
    m.peakBytes = stats.allocated_bytes[all].peak;
    return m;
  }
#else
  (void)device;
#endif
  std::ifstream statm("/proc/self/statm");
  long long pages = 0, resident = 0;
  if (statm >> pages >> resident)
    m.bytes = resident * static_cast<long long>(::sysconf(_SC_PAGESIZE));
  return m;
}

torch::Device resolveDevice(const std::string& name) {
  if (name.empty() || name == "cpu") return torch::Device(torch::kCPU);
  if (name.rfind("cuda", 0) != 0)
    throw Error("train.device: unknown device \"" + name + "\"; use cpu, cuda or cuda:N");
  if (!torch::cuda::is_available()) {
#if defined(NETSMITH_HAS_CUDA)
    throw Error("train.device is \"" + name +
                "\" but no CUDA device is available on this machine; use \"cpu\"");
#else
    throw Error("train.device is \"" + name +
                "\" but this build of Netsmith uses a CPU-only LibTorch; use \"cpu\" or build "
                "against a CUDA LibTorch");
#endif
  }
  const int index = name.size() > 5 ? std::stoi(name.substr(5)) : 0;
  const auto count = static_cast<int>(torch::cuda::device_count());
  if (index >= count) {
    throw Error("train.device is \"" + name + "\" but this machine has " + std::to_string(count) +
                " CUDA device" + (count == 1 ? "" : "s") + " (cuda:0" +
                (count > 1 ? "..cuda:" + std::to_string(count - 1) : std::string()) + ")");
  }
  return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index));
}

}  // namespace netsmith::train
