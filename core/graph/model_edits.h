#pragma once

// Edits for fine-tuning, shared by the CLI (import flags, the train.replace_head option) and the
// studio's editor: replace the classifier head, freeze everything up to a node.
#include <cstdint>
#include <string>
#include <vector>

#include "graph/model_graph.h"

namespace netsmith::graph {

/// The head: the last Linear on the way to the output (through ops without weights, such as
/// Softmax or Dropout). "" when the output is not reached through a Linear.
std::string headNode(const ModelGraph& graph);

/// Sets the head's out_features to `classes` and clears its init, so its weights start anew
/// (a partial load skips them: their shape changed). Returns the head's id; throws
/// netsmith::Error when the model has no Linear head.
std::string replaceHead(ModelGraph& graph, std::int64_t classes);

/// Marks `nodeId` and every node it depends on frozen (the backbone up to a node). Returns the
/// ids frozen, in file order; throws netsmith::Error for an unknown node.
std::vector<std::string> freezeUpTo(ModelGraph& graph, const std::string& nodeId);

/// `nodeId` and every node that depends on it, in file order (empty for an unknown node).
std::vector<std::string> nodeAndDependents(const ModelGraph& graph, const std::string& nodeId);

/// Sets the learning-rate multiplier of `nodeId` and every node it depends on (e.g. the
/// backbone at 0.1). Returns the ids set; throws netsmith::Error for an unknown node or a
/// multiplier outside (0, 1000].
std::vector<std::string> setLrMultUpTo(ModelGraph& graph, const std::string& nodeId, double mult);

}  // namespace netsmith::graph
