#pragma once

// An evaluation pass through the task, and the memory and device figures the trainer shares.
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "train/events.h"

namespace netsmith::data {
class DataLoader;
}
namespace netsmith::task {
class MetricSums;
class Task;
}  // namespace netsmith::task

namespace netsmith::train {

/// Runs `forward` (in eval mode, without gradients) over one epoch of `loader` and sums the
/// task's figures (the caller adds them over the processes and finishes them). `stop` ends
/// early when true.
std::unique_ptr<task::MetricSums> evaluateTask(
    const task::Task& task, const std::function<torch::Tensor(const torch::Tensor&)>& forward,
    data::DataLoader& loader, const torch::Device& device, const std::function<bool()>& stop = {});

/// The memory figure for `device`: the CUDA caching allocator's numbers, or process RSS.
MemoryFigure memoryFigure(const torch::Device& device);

/// Parses "cpu", "cuda", "cuda:N"; throws netsmith::Error with a clear message when CUDA is
/// asked for and this build or machine has none.
torch::Device resolveDevice(const std::string& name);

}  // namespace netsmith::train
