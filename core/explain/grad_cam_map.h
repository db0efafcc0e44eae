#pragma once

// Grad-CAM on tensors (see grad_cam.h): what the file-level call and the tests run.
#include <torch/torch.h>

#include <string>

#include "graph/graph_analysis.h"
#include "graph/graph_module.h"

namespace netsmith::explain {

/// The node Grad-CAM uses by default: the last Conv2d in the model's order; "" when none.
std::string defaultGradCamNode(const graph::GraphAnalysis& analysis);

struct GradCamMap {
  torch::Tensor heat;           ///< H x W float in [0, 1], the model input's size
  torch::Tensor probabilities;  ///< softmax of the logits (classes)
  std::int64_t targetClass = 0;
  std::int64_t predicted = 0;
};

/// Grad-CAM of `targetClass` (-1: the predicted one) at `node` for `input` (1 x C x H x W,
/// normalised as the model sees it). The net runs in eval mode; its weights are not changed.
/// Throws netsmith::Error when `node` has no C x h x w output or the class is out of range.
GradCamMap gradCamMap(graph::GraphModuleImpl& net, const torch::Tensor& input,
                      const std::string& node, std::int64_t targetClass);

}  // namespace netsmith::explain
