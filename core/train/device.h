#pragma once

// The device a run computes on, and its memory figure.
#include <torch/torch.h>

#include <string>

#include "run/events.h"

namespace netsmith::train {

/// The memory figure for `device`: the CUDA caching allocator's numbers, or process RSS.
run::MemoryFigure memoryFigure(const torch::Device& device);

/// Parses "cpu", "cuda", "cuda:N"; throws netsmith::Error with a clear message when CUDA is
/// asked for and this build or machine has none.
torch::Device resolveDevice(const std::string& name);

}  // namespace netsmith::train
