#include "graph/graph_analysis.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace netsmith::graph {

const NodeInfo* GraphAnalysis::find(const std::string& id) const {
  for (const auto& n : nodes) {
    if (n.id == id) return &n;
  }
  return nullptr;
}

namespace {

std::string nodeWhere(const std::string& id) {
  return "node \"" + id + "\"";
}

std::string plural(std::int64_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

std::string inputCountText(const ops::OpDef& def) {
  if (def.maxInputs < 0) return "at least " + plural(def.minInputs, "input");
  if (def.minInputs == def.maxInputs) return "exactly " + plural(def.minInputs, "input");
  return "between " + std::to_string(def.minInputs) + " and " + std::to_string(def.maxInputs) +
         " inputs";
}

// Finds one cycle among `stuck` nodes and renders it as "a -> b -> a".
std::string describeCycle(const ModelGraph& g, const std::set<int>& stuck) {
  // Walk backwards along inputs that are themselves stuck; every stuck node has one, since
  // Kahn's algorithm leaves only nodes on or behind a cycle.
  int cur = *stuck.begin();
  std::vector<int> path;
  std::map<int, std::size_t> seen;
  while (!seen.count(cur)) {
    seen[cur] = path.size();
    path.push_back(cur);
    int next = -1;
    for (const auto& in : g.nodes[static_cast<std::size_t>(cur)].inputs) {
      const int j = g.indexOf(in);
      if (j >= 0 && stuck.count(j)) {
        next = j;
        break;
      }
    }
    if (next < 0) return {};
    cur = next;
  }
  std::vector<int> cycle(path.begin() + static_cast<long>(seen[cur]), path.end());
  std::reverse(cycle.begin(), cycle.end());  // forward direction: producer -> consumer
  // Start at the node that comes first in the file, so the message is stable.
  std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
  std::string out;
  for (int i : cycle)
    out += g.nodes[static_cast<std::size_t>(i)].id + " -> ";
  return out + g.nodes[static_cast<std::size_t>(cycle.front())].id;
}

}  // namespace

std::vector<int> topologicalOrder(const ModelGraph& g) {
  const int n = static_cast<int>(g.nodes.size());
  std::unordered_map<std::string, int> index;
  for (int i = n - 1; i >= 0; --i)
    index[g.nodes[static_cast<std::size_t>(i)].id] = i;
  std::vector<int> pending(static_cast<std::size_t>(n), 0);
  std::vector<std::vector<int>> consumers(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    for (const auto& in : g.nodes[static_cast<std::size_t>(i)].inputs) {
      const auto found = index.find(in);
      if (found == index.end()) continue;  // dangling: reported separately, does not block ordering
      const int j = found->second;
      ++pending[static_cast<std::size_t>(i)];
      consumers[static_cast<std::size_t>(j)].push_back(i);
    }
  }
  std::set<int> ready;
  for (int i = 0; i < n; ++i) {
    if (pending[static_cast<std::size_t>(i)] == 0) ready.insert(i);
  }
  std::vector<int> order;
  while (!ready.empty()) {
    const int i = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(i);
    for (int c : consumers[static_cast<std::size_t>(i)]) {
      if (--pending[static_cast<std::size_t>(c)] == 0) ready.insert(c);
    }
  }
  return order;
}

namespace {

/// Adds a problem that belongs to node `id`.
void nodeProblem(Problems& problems, const std::string& id, std::string message,
                 std::string fix = {}) {
  problems.push_back({nodeWhere(id), std::move(message), id, std::move(fix)});
}

/// What the structure checks find for each node, for the shape pass.
struct Structure {
  std::map<std::string, int> firstIndex;  ///< each valid id's first node
  std::set<std::string> badIds;           ///< ids that are not valid or used twice
  std::vector<const ops::OpDef*> defs;    ///< each node's op (null: unknown or not looked up)
  std::vector<bool> structurallyOk;       ///< its id, op, inputs and their count are sound
};

/// Checks the nodes' ids: each valid, and used once.
void checkIds(const ModelGraph& g, Structure& s, Problems& problems) {
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const auto& id = g.nodes[i].id;
    const std::string path = "model.nodes[" + std::to_string(i) + "].id";
    if (id.empty()) continue;  // reported by the reader
    if (!isValidNodeId(id)) {
      problems.push_back(
          {path,
           "\"" + printable(id) +
               "\" is not a valid id: use letters, digits and _ , starting with a letter or _",
           id,
           {}});
      s.badIds.insert(id);
    } else if (s.firstIndex.count(id)) {
      problems.push_back({path,
                          "id \"" + id + "\" is already used by model.nodes[" +
                              std::to_string(s.firstIndex[id]) + "]; ids must be unique",
                          id,
                          {}});
      s.badIds.insert(id);
    } else {
      s.firstIndex[id] = static_cast<int>(i);
    }
  }
}

/// Reports each input of `n` that names no node; false when there is one.
bool checkInputsExist(const Node& n, const Structure& s, const std::vector<std::string>& ids,
                      int& suggested, Problems& problems) {
  bool ok = true;
  for (const auto& in : n.inputs) {
    if (!s.firstIndex.count(in) && !s.badIds.count(in)) {
      // Suggestions for the first few only: a file with thousands of dangling inputs is
      // answered in bounded time.
      const auto guess = ++suggested <= 16 ? schema::closestName(in, ids) : std::string();
      nodeProblem(
          problems, n.id, "input \"" + printable(in) + "\" does not exist",
          guess.empty() ? "connect it to an existing node" : "did you mean \"" + guess + "\"?");
      ok = false;
    }
  }
  return ok;
}

/// Checks the init scheme of `n` against those its op `def` allows.
void checkInit(const Node& n, const ops::OpDef& def, Problems& problems) {
  const auto scheme = ops::parseInitScheme(n.init);
  const auto& allowed = def.initSchemes;
  if (!scheme) {
    std::string names;
    for (const auto& s : ops::initSchemeNames())
      names += (names.empty() ? "" : ", ") + s;
    nodeProblem(problems, n.id, "unknown init \"" + n.init + "\"; known: " + names);
  } else if (*scheme != ops::InitScheme::Default &&
             std::find(allowed.begin(), allowed.end(), *scheme) == allowed.end()) {
    nodeProblem(problems, n.id,
                n.op + (allowed.empty() ? " has no weights to initialise"
                                        : " cannot use init \"" + n.init + "\""),
                "remove \"init\"");
  }
}

/// Checks each node's op, inputs, input count and init; returns how many Input nodes there are.
int checkOps(const ModelGraph& g, const ops::OpRegistry& registry, Structure& s,
             Problems& problems) {
  std::vector<std::string> ids;
  for (const auto& n : g.nodes)
    ids.push_back(n.id);
  s.defs.assign(g.nodes.size(), nullptr);
  s.structurallyOk.assign(g.nodes.size(), true);
  int inputNodes = 0;
  int suggested = 0;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (n.id.empty() || s.badIds.count(n.id)) {
      s.structurallyOk[i] = false;
      continue;
    }
    s.defs[i] = registry.find(n.op);
    if (!s.defs[i]) {
      if (!n.op.empty()) {
        const auto guess = schema::closestName(n.op, registry.names());
        nodeProblem(problems, n.id, "unknown op \"" + n.op + "\"",
                    guess.empty() ? "see `netsmith-cli ops` for the list"
                                  : "did you mean \"" + guess + "\"?");
      }
      s.structurallyOk[i] = false;
    } else if (s.defs[i]->isSource) {
      ++inputNodes;
    }
    if (!checkInputsExist(n, s, ids, suggested, problems)) s.structurallyOk[i] = false;
    if (s.defs[i] && !s.defs[i]->acceptsInputCount(static_cast<int>(n.inputs.size()))) {
      nodeProblem(
          problems, n.id,
          n.op + " takes " + inputCountText(*s.defs[i]) + " but has " +
              std::to_string(n.inputs.size()),
          s.defs[i]->isSource ? "remove its inputs" : "connect it to the layer(s) before it");
      s.structurallyOk[i] = false;
    }
    if (!n.init.empty() && s.defs[i]) checkInit(n, *s.defs[i], problems);
  }
  return inputNodes;
}

/// Reports a model without an Input node, or with more than one.
void checkInputNodeCount(int inputNodes, Problems& problems) {
  if (inputNodes == 0) {
    problems.push_back({"model.nodes",
                        "the model has no Input node",
                        {},
                        "add {\"id\": \"input\", \"op\": \"Input\"}"});
  } else if (inputNodes > 1) {
    problems.push_back({"model.nodes",
                        "the model has " + std::to_string(inputNodes) +
                            " Input nodes; Netsmith models take one input",
                        {},
                        {}});
  }
}

/// Reports one cycle among the nodes `order` leaves out, if any.
void checkCycles(const ModelGraph& g, const std::vector<int>& order, Problems& problems) {
  if (order.size() < g.nodes.size()) {
    std::set<int> stuck;
    for (int i = 0; i < static_cast<int>(g.nodes.size()); ++i)
      stuck.insert(i);
    for (int i : order)
      stuck.erase(i);
    const auto cycle = describeCycle(g, stuck);
    if (!cycle.empty()) {
      const std::string first = cycle.substr(0, cycle.find(' '));
      nodeProblem(problems, first, "is part of a cycle " + cycle,
                  "remove one of these connections");
    }
  }
}

/// Sets a.outputId: the explicit output, or the single node nobody reads; reports the others.
void chooseOutput(const ModelGraph& g, GraphAnalysis& a) {
  std::set<std::string> consumed;
  for (const auto& n : g.nodes)
    consumed.insert(n.inputs.begin(), n.inputs.end());
  std::vector<std::string> sinks;
  for (const auto& n : g.nodes) {
    if (!n.id.empty() && !consumed.count(n.id)) sinks.push_back(n.id);
  }
  if (!g.output.empty()) {
    if (!g.find(g.output)) {
      a.problems.push_back({"model.output", "node \"" + g.output + "\" does not exist", {}, {}});
    } else {
      a.outputId = g.output;
      for (const auto& s : sinks) {
        if (s != g.output)
          nodeProblem(a.problems, s, "its result is never used",
                      "connect it to a later layer or delete it");
      }
    }
  } else if (sinks.size() == 1) {
    a.outputId = sinks[0];
  } else if (sinks.size() > 1) {
    std::string list;
    for (std::size_t k = 0; k < sinks.size() && k < 8; ++k)
      list += (list.empty() ? "\"" : ", \"") + sinks[k] + "\"";
    if (sinks.size() > 8) list += " and " + std::to_string(sinks.size() - 8) + " more";
    a.problems.push_back({"model",
                          "the graph has " + std::to_string(sinks.size()) + " outputs (" + list +
                              "); Netsmith models have one",
                          {},
                          "connect or delete the extra branches, or set \"output\""});
  }
}

/// Node `n`'s input shapes, resolved parameters and (when all are sound) output shape.
NodeInfo inferNode(const Node& n, const ops::OpDef* def, bool structurallyOk,
                   const std::map<std::string, std::size_t>& infoIndex, GraphAnalysis& a) {
  NodeInfo info;
  info.id = n.id;
  info.op = n.op;
  info.def = def;
  bool inputsOk = structurallyOk;
  for (const auto& in : n.inputs) {
    auto it = infoIndex.find(in);
    if (it == infoIndex.end() || !a.nodes[it->second].valid) {
      inputsOk = false;
      continue;
    }
    info.inputShapes.push_back(a.nodes[it->second].outputShape);
  }
  if (def) {
    const std::size_t before = a.problems.size();
    info.params = schema::resolveParams(def->schema, n.params, nodeWhere(n.id), n.id, a.problems);
    const bool paramsOk = a.problems.size() == before;
    if (def->isSource) info.inputShapes = {a.inputShape};
    if (paramsOk && inputsOk) {
      try {
        info.outputShape = def->inferShape(info.inputShapes, info.params);
        info.valid = true;
      } catch (const ops::ShapeError& e) {
        nodeProblem(a.problems, n.id, e.message, e.fix);
      }
    }
  }
  return info;
}

/// Counts a valid node's parameters, MACs and activation bytes, and adds them to a's totals.
void measureNode(NodeInfo& info, const ops::OpDef& def, bool frozen, GraphAnalysis& a) {
  info.paramCount = def.paramCount ? def.paramCount(info.inputShapes, info.params) : 0;
  info.trainableParams = frozen ? 0 : info.paramCount;
  if (def.autoValues) info.autoValues = def.autoValues(info.inputShapes, info.params);
  info.macs = def.macs ? def.macs(info.inputShapes, info.outputShape, info.params) : 0;
  info.activationBytes = shapeNumel(info.outputShape) * 4;
  a.totalParams += info.paramCount;
  a.trainableParams += info.trainableParams;
  a.totalMacs += info.macs;
  a.activationBytes += info.activationBytes;
}

/// Analyses the nodes in `order` into a.nodes: parameters, shapes and counts.
void inferShapes(const ModelGraph& g, const std::vector<int>& order, const Structure& s,
                 GraphAnalysis& a) {
  std::map<std::string, std::size_t> infoIndex;
  for (int idx : order) {
    const auto i = static_cast<std::size_t>(idx);
    const Node& n = g.nodes[i];
    NodeInfo info = inferNode(n, s.defs[i], s.structurallyOk[i], infoIndex, a);
    if (info.valid) measureNode(info, *s.defs[i], n.frozen, a);
    infoIndex[n.id] = a.nodes.size();
    a.nodes.push_back(std::move(info));
  }
}

}  // namespace

GraphAnalysis analyseGraph(const ModelGraph& g, const ops::OpRegistry& registry) {
  GraphAnalysis a;
  a.inputShape = g.input.shape();

  if (g.nodes.empty()) {
    a.problems.push_back({"model.nodes",
                          "the model has no layers; add an Input node and at least one layer",
                          {},
                          {}});
    return a;
  }

  // Ids.
  Structure s;
  checkIds(g, s, a.problems);

  // Ops, input references and counts.
  const int inputNodes = checkOps(g, registry, s, a.problems);
  checkInputNodeCount(inputNodes, a.problems);

  // Cycles.
  const auto order = topologicalOrder(g);
  checkCycles(g, order, a.problems);

  // Output: the explicit one, or the single node nobody reads.
  chooseOutput(g, a);

  // Parameters and shapes, in order. A node is only analysed when all its inputs are valid.
  inferShapes(g, order, s, a);
  if (const NodeInfo* out = a.find(a.outputId)) a.outputShape = out->outputShape;
  return a;
}

int optimizerStateSlots(const std::string& optimizer, double momentum) {
  if (optimizer == "adam" || optimizer == "adamw") return 2;
  if (optimizer == "rmsprop") return momentum > 0 ? 2 : 1;
  if (optimizer == "adagrad") return 1;
  if (optimizer == "sgd") return momentum > 0 ? 1 : 0;
  return 2;  // unknown: assume the common worst case
}

MemoryEstimate estimateTrainingMemory(const GraphAnalysis& a, std::int64_t batchSize,
                                      int optimizerSlots) {
  MemoryEstimate m;
  m.weights = a.totalParams * 4;
  m.gradients = a.trainableParams * 4;
  m.optimizerState = a.trainableParams * 4 * optimizerSlots;
  // Every node output is (roughly) kept for the backward pass; the Input node's is the batch.
  std::int64_t perSample = 0;
  for (const auto& n : a.nodes) {
    if (n.def && !n.def->isSource) perSample += n.activationBytes;
  }
  m.activations = perSample * batchSize;
  m.inputBatch = shapeNumel(a.inputShape) * 4 * batchSize;
  return m;
}

void layoutRows(ModelGraph& g, double columnGap, double rowGap) {
  // Row = longest path from a source.
  std::map<std::string, int> row;
  const auto order = topologicalOrder(g);
  int deepest = 0;
  for (int i : order) {
    const auto& n = g.nodes[static_cast<std::size_t>(i)];
    int r = 0;
    for (const auto& in : n.inputs)
      if (auto it = row.find(in); it != row.end()) r = std::max(r, it->second + 1);
    row[n.id] = r;
    deepest = std::max(deepest, r);
  }
  std::map<int, int> used;  // nodes placed per row
  std::map<int, int> count;
  for (const auto& [id, r] : row)
    ++count[r];
  for (int i : order) {
    auto& n = g.nodes[static_cast<std::size_t>(i)];
    const int r = row[n.id];
    const int k = used[r]++;
    n.x = (double(k) - double(count[r] - 1) / 2.0) * columnGap;
    n.y = double(r) * rowGap;
  }
  int extra = 0;
  for (auto& n : g.nodes) {
    if (row.count(n.id)) continue;
    n.x = double(extra++) * columnGap;
    n.y = double(deepest + 2) * rowGap;
  }
}

}  // namespace netsmith::graph
