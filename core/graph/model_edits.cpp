#include "graph/model_edits.h"

#include <set>

#include "common/error.h"

namespace netsmith::graph {

namespace {
/// The node whose result is the model output: `output`, or the last node no one reads.
const Node* outputNode(const ModelGraph& g) {
  if (!g.output.empty()) return g.find(g.output);
  for (auto it = g.nodes.rbegin(); it != g.nodes.rend(); ++it)
    if (g.consumers(it->id).empty()) return &*it;
  return nullptr;
}
}  // namespace

std::string headNode(const ModelGraph& g) {
  const Node* n = outputNode(g);
  // Walk up through single-input ops without weights until a Linear.
  std::set<std::string> seen;
  while (n && seen.insert(n->id).second) {
    if (n->op == "Linear") return n->id;
    static const std::set<std::string> passThrough{"Softmax", "Dropout", "Identity", "ReLU",
                                                   "Sigmoid", "Tanh",    "Flatten"};
    if (!passThrough.count(n->op) || n->inputs.size() != 1) return {};
    n = g.find(n->inputs[0]);
  }
  return {};
}

std::string replaceHead(ModelGraph& g, std::int64_t classes) {
  const std::string id = headNode(g);
  if (id.empty())
    throw Error(
        "the model has no Linear head to replace (its output is not reached from a Linear)");
  if (classes < 1) throw Error("replace head: the class count must be at least 1");
  Node* head = g.find(id);
  head->params["out_features"] = classes;
  head->init.clear();
  head->frozen = false;
  return id;
}

namespace {
/// `nodeId` and every node it depends on.
std::set<std::string> nodeAndAncestors(const ModelGraph& g, const std::string& nodeId) {
  std::set<std::string> up{nodeId};
  std::vector<std::string> stack{nodeId};
  while (!stack.empty()) {
    const Node* n = g.find(stack.back());
    stack.pop_back();
    if (!n) continue;
    for (const auto& in : n->inputs)
      if (up.insert(in).second) stack.push_back(in);
  }
  return up;
}
}  // namespace

std::vector<std::string> freezeUpTo(ModelGraph& g, const std::string& nodeId) {
  if (!g.find(nodeId)) throw Error("freeze: no node \"" + nodeId + "\" in the model");
  const auto up = nodeAndAncestors(g, nodeId);
  std::vector<std::string> frozen;
  for (auto& n : g.nodes) {
    if (!up.count(n.id)) continue;
    n.frozen = true;
    frozen.push_back(n.id);
  }
  return frozen;
}

std::vector<std::string> nodeAndDependents(const ModelGraph& g, const std::string& nodeId) {
  if (!g.find(nodeId)) return {};
  std::set<std::string> down{nodeId};
  std::vector<std::string> stack{nodeId};
  while (!stack.empty()) {
    const std::string id = stack.back();
    stack.pop_back();
    for (const auto& c : g.consumers(id))
      if (down.insert(c).second) stack.push_back(c);
  }
  std::vector<std::string> out;
  for (const auto& n : g.nodes)
    if (down.count(n.id)) out.push_back(n.id);
  return out;
}

std::vector<std::string> setLrMultUpTo(ModelGraph& g, const std::string& nodeId, double mult) {
  if (!g.find(nodeId)) throw Error("lr multiplier: no node \"" + nodeId + "\" in the model");
  if (!(mult > 0) || mult > 1000)
    throw Error("lr multiplier: " + std::to_string(mult) + " is not in (0, 1000]");
  const auto up = nodeAndAncestors(g, nodeId);
  std::vector<std::string> set;
  for (auto& n : g.nodes) {
    if (!up.count(n.id)) continue;
    n.lrMult = mult;
    set.push_back(n.id);
  }
  return set;
}

}  // namespace netsmith::graph
