#pragma once

// Loss, evaluation and memory figures shared by the trainer, `eval` and the LR finder.
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "train/events.h"

namespace netsmith::data {
class DataLoader;
}

namespace netsmith::train {

/// Cross-entropy on hard `labels` (N) or, when `softTargets` (N x K) is defined, on soft
/// targets (MixUp/CutMix), with label smoothing and optional per-class `weights` (K).
torch::Tensor classificationLoss(const torch::Tensor& logits, const torch::Tensor& labels,
                                 const torch::Tensor& softTargets, double labelSmoothing,
                                 const torch::Tensor& weights);

/// Counts predictions into a confusion matrix.
class ConfusionCounter {
 public:
  explicit ConfusionCounter(std::int64_t numClasses);
  /// From counts [true * K + predicted] (a sum over processes).
  ConfusionCounter(std::int64_t numClasses, std::vector<std::int64_t> counts);
  void add(const torch::Tensor& predicted, const torch::Tensor& labels);  ///< N int64 each
  EvalMetrics metrics(double lossSum) const;  ///< loss = lossSum / samples

 private:
  std::int64_t m_classes;
  std::vector<std::int64_t> m_counts;  // [true * K + predicted]
  std::int64_t m_samples = 0;
};

/// Runs `forward` (in eval mode, without gradients) over one epoch of `loader` and returns
/// loss, accuracy, per-class accuracy and the confusion matrix. `stop` ends early when true.
EvalMetrics evaluateClassifier(const std::function<torch::Tensor(const torch::Tensor&)>& forward,
                               data::DataLoader& loader, std::int64_t numClasses,
                               const torch::Device& device, const std::function<bool()>& stop = {});

/// The memory figure for `device`: the CUDA caching allocator's numbers, or process RSS.
MemoryFigure memoryFigure(const torch::Device& device);

/// Parses "cpu", "cuda", "cuda:N"; throws netsmith::Error with a clear message when CUDA is
/// asked for and this build or machine has none.
torch::Device resolveDevice(const std::string& name);

}  // namespace netsmith::train
