#pragma once

// The LibTorch module that runs a ModelGraph. Include only where tensors are needed: the graph
// and analysis headers stay free of LibTorch.
#include <torch/torch.h>

#include <string>
#include <vector>

#include "graph/graph_analysis.h"
#include "graph/model_graph.h"
#include "ops/op_registry.h"

namespace netsmith::ops {
class NodeLayerImpl;
}

namespace netsmith::graph {

/// A torch::nn::Module built from a valid graph. Each node is a child module named after its
/// id, so parameter names are stable: "conv1.weight", "bn1.running_mean".
///   GraphModule net(project.model, registry);   // throws netsmith::Error if invalid
///   auto logits = net->forward(images);          // images: N x C x H x W
/// A tapped node's output as one feature row per sample (what the embedding, the doctor's
/// outliers and its fold models read from ModelGraph::penultimate): float, spatial outputs
/// averaged over H and W, flattened, contiguous.
torch::Tensor featureRows(const torch::Tensor& tapped);

class GraphModuleImpl : public torch::nn::Module {
 public:
  GraphModuleImpl(const ModelGraph& graph, const ops::OpRegistry& registry);

  /// Runs the nodes in topological order; `x` must be N x C x H x W matching the input spec.
  torch::Tensor forward(torch::Tensor x);
  /// forward() that also hands back node `tapId`'s output (kept in the autograd graph, so a
  /// gradient can be taken with respect to it). Throws netsmith::Error for an unknown node.
  torch::Tensor forwardTapping(torch::Tensor x, const std::string& tapId, torch::Tensor& tapped);

  const GraphAnalysis& analysis() const { return m_analysis; }
  /// The layer of node `id` (nullptr if none).
  std::shared_ptr<ops::NodeLayerImpl> layer(const std::string& id) const;
  /// Gives every layer the cross-process sum of a data-parallel job (synchronised BatchNorm);
  /// returns how many layers use it.
  int setCrossProcessSum(const std::function<torch::Tensor(const torch::Tensor&)>& sum);
  /// Keeps the BatchNorm layers of frozen nodes in evaluation mode (their imported statistics
  /// are not updated by a small fine-tuning batch) while the rest trains. Returns how many.
  int keepFrozenBatchNormInEval(bool keep);
  /// Lets the frozen nodes `ids` train again (gradual unfreezing): their parameters require
  /// gradients and their BatchNorm follows train()/eval() again. Returns the parameters made
  /// trainable with their node ids, in module order.
  std::vector<std::pair<std::string, torch::Tensor>> unfreeze(const std::vector<std::string>& ids);
  /// train() that leaves those layers in evaluation mode.
  void train(bool on = true) override;

 private:
  struct Step {
    std::string id;
    std::shared_ptr<ops::NodeLayerImpl> layer;
    std::vector<std::size_t> inputSlots;  ///< indices into the value table
    std::vector<std::size_t> release;     ///< values no longer needed after this step
    bool thenRelu = false;                ///< runs as forwardThenRelu(): the next ReLU is folded in
    bool passThrough = false;             ///< a ReLU folded into the step before it
  };
  GraphAnalysis m_analysis;
  InputSpec m_input;
  std::vector<Step> m_steps;
  std::size_t m_outputSlot = 0;
  std::vector<std::string> m_frozenBatchNorm;  ///< ids of frozen BatchNorm2d nodes
  bool m_frozenBatchNormEval = false;
  torch::Tensor run(torch::Tensor x, std::size_t tap, torch::Tensor* tapped);
  void foldRelus(const ModelGraph& graph);
};
TORCH_MODULE(GraphModule);

}  // namespace netsmith::graph
