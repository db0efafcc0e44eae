#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/shape.h"
#include "graph/model_graph.h"
#include "ops/op_registry.h"
#include "schema/param_schema.h"

namespace netsmith::graph {

/// What analysis knows about one node once its inputs are known.
struct NodeInfo {
  std::string id;
  std::string op;
  const ops::OpDef* def = nullptr;  ///< points into the registry: keep it alive while used
  schema::Params params;            ///< resolved, with defaults
  std::vector<Shape> inputShapes;
  Shape outputShape;            ///< empty when it could not be inferred
  std::int64_t paramCount = 0;  ///< learnable parameters
  std::int64_t trainableParams = 0;
  std::int64_t macs = 0;             ///< per sample
  std::int64_t activationBytes = 0;  ///< fp32 output of one sample
  bool valid = false;                ///< params and shape are known and correct
  /// The values its "auto" parameters take here ({"in_features": 2704}); valid nodes only.
  Json autoValues = Json::object();
};

/// The result of checking a graph: every problem found, plus shapes and counts for each node.
struct GraphAnalysis {
  std::vector<NodeInfo> nodes;  ///< in topological order (nodes on a cycle are left out)
  Problems problems;
  std::string outputId;
  Shape inputShape;
  Shape outputShape;
  std::int64_t totalParams = 0;
  std::int64_t trainableParams = 0;
  std::int64_t totalMacs = 0;        ///< per sample
  std::int64_t activationBytes = 0;  ///< all node outputs of one sample, fp32

  bool ok() const { return problems.empty(); }
  const NodeInfo* find(const std::string& id) const;
};

/// Structure checks (ids, ops, inputs, cycles, a single Input and output), parameter checks
/// against each op's schema, and shape inference in topological order. Never throws for bad
/// input: every problem is returned, each naming its node. A node whose inputs failed is not
/// reported again (no cascades).
GraphAnalysis analyseGraph(const ModelGraph& graph, const ops::OpRegistry& registry);

/// Places the nodes in rows by their depth from the sources (the editor's auto layout and the
/// importer's): rows `rowGap` apart, nodes of a row `columnGap` apart, centred on x = 0; nodes
/// on a cycle go in a row below the rest.
void layoutRows(ModelGraph& graph, double columnGap, double rowGap);

/// Node indices in a topological order that keeps file order among ready nodes. Nodes on a
/// cycle (or fed by one) are missing from the result.
std::vector<int> topologicalOrder(const ModelGraph& graph);

/// An estimate of the memory a training step needs, in bytes (fp32).
struct MemoryEstimate {
  std::int64_t weights = 0;
  std::int64_t gradients = 0;
  std::int64_t optimizerState = 0;
  std::int64_t activations = 0;  ///< node outputs kept for the backward pass
  std::int64_t inputBatch = 0;
  std::int64_t total() const {
    return weights + gradients + optimizerState + activations + inputBatch;
  }
};

/// `optimizerSlots`: tensors of optimizer state per trainable parameter (SGD 0, momentum 1,
/// Adam 2). See optimizerStateSlots().
MemoryEstimate estimateTrainingMemory(const GraphAnalysis& analysis, std::int64_t batchSize,
                                      int optimizerSlots);

/// Optimizer state tensors per parameter for an optimizer name ("sgd", "adam", ...) and momentum.
int optimizerStateSlots(const std::string& optimizer, double momentum);

}  // namespace netsmith::graph
