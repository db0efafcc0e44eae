#include "graph/model_graph.h"

#include <algorithm>
#include <cmath>

#include "schema/param_schema.h"

namespace netsmith::graph {

const Node* ModelGraph::find(const std::string& id) const {
  const int i = indexOf(id);
  return i < 0 ? nullptr : &nodes[static_cast<std::size_t>(i)];
}

Node* ModelGraph::find(const std::string& id) {
  const int i = indexOf(id);
  return i < 0 ? nullptr : &nodes[static_cast<std::size_t>(i)];
}

std::string ModelGraph::penultimate(const std::string& outputId) const {
  const Node* node = find(outputId);
  return node && !node->inputs.empty() ? node->inputs.front() : std::string();
}

int ModelGraph::indexOf(const std::string& id) const {
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].id == id) return static_cast<int>(i);
  }
  return -1;
}

std::vector<std::string> ModelGraph::consumers(const std::string& id) const {
  std::vector<std::string> out;
  for (const auto& n : nodes) {
    if (std::find(n.inputs.begin(), n.inputs.end(), id) != n.inputs.end()) out.push_back(n.id);
  }
  return out;
}

bool isValidNodeId(const std::string& id) {
  if (id.empty() || id.size() > kMaxNodeIdLength) return false;
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!alpha(id[0])) return false;
  return std::all_of(id.begin(), id.end(),
                     [&](char c) { return alpha(c) || (c >= '0' && c <= '9'); });
}

std::vector<schema::ParamSpec> inputSchema() {
  using schema::ParamSpec;
  return {
      ParamSpec::integer("channels", 1, "1: grey, 3: colour (RGB); model.input.channels")
          .atLeast(1)
          .atMost(double(kMaxInputChannels)),
      ParamSpec::integer("height", 28, "every image is brought to this height; model.input.height")
          .atLeast(1)
          .atMost(double(kMaxInputSide))
          .inUnit("px"),
      ParamSpec::integer("width", 28, "every image is brought to this width; model.input.width")
          .atLeast(1)
          .atMost(double(kMaxInputSide))
          .inUnit("px")};
}

namespace {

std::string tooLongId(const std::string& id) {
  return "an id of " + std::to_string(id.size()) + " characters (\"" + printable(id.substr(0, 24)) +
         "...\"); ids have at most " + std::to_string(kMaxNodeIdLength) +
         " (letters, digits and _)";
}

void readDimension(const Json& input, const char* key, std::int64_t maxValue, std::int64_t& out,
                   Problems& problems) {
  const std::string path = std::string("model.input.") + key;
  if (!input.contains(key)) {
    problems.push_back({path, "missing (a whole number)", {}, {}});
    return;
  }
  const Json& v = input.at(key);
  if (!v.is_number_integer() && !v.is_number_unsigned()) {
    problems.push_back({path, "must be a whole number, got " + jsonBrief(v), {}, {}});
    return;
  }
  const auto n = v.get<std::int64_t>();
  if (n < 1 || n > maxValue) {
    problems.push_back(
        {path,
         "must be between 1 and " + std::to_string(maxValue) + ", got " + std::to_string(n),
         {},
         {}});
    return;
  }
  out = n;
}

/// The node's "id" into n.id, when it is a string of a valid length; else reported.
void readNodeId(const Json& j, const std::string& path, Node& n, Problems& problems) {
  if (!j.contains("id") || !j["id"].is_string()) {
    problems.push_back({path + ".id", j.contains("id") ? "must be a string" : "missing", {}, {}});
  } else if (j["id"].get_ref<const std::string&>().size() > kMaxNodeIdLength) {
    // Checked before anything uses it: a million-character id would be copied into every
    // message and compared with every other id.
    problems.push_back({path + ".id", tooLongId(j["id"].get_ref<const std::string&>()), {}, {}});
  } else {
    n.id = j["id"].get<std::string>();
  }
}

/// The node's "inputs" (a list of node ids) into n.inputs, reporting what is not one.
void readNodeInputs(const Json& j, const std::string& where, Node& n, Problems& problems) {
  if (!j.contains("inputs")) return;
  const Json& in = j["inputs"];
  if (!in.is_array()) {
    problems.push_back(
        {where, "\"inputs\" must be a list of node ids, got " + jsonTypeName(in), n.id, {}});
    return;
  }
  for (const auto& item : in) {
    if (!item.is_string()) {
      problems.push_back(
          {where, "\"inputs\" must hold node ids (strings), got " + jsonBrief(item), n.id, {}});
    } else if (item.get_ref<const std::string&>().size() > kMaxNodeIdLength) {
      problems.push_back(
          {where, "\"inputs\": " + tooLongId(item.get_ref<const std::string&>()), n.id, {}});
    } else {
      n.inputs.push_back(item.get<std::string>());
    }
  }
}

/// The node's training settings ("init", "frozen", "lr_mult") into `n`, reporting bad values.
void readNodeTrainingKeys(const Json& j, const std::string& where, Node& n, Problems& problems) {
  if (j.contains("init")) {
    if (!j["init"].is_string()) {
      problems.push_back({where, "\"init\" must be a string", n.id, {}});
    } else {
      n.init = j["init"].get<std::string>();
    }
  }
  if (j.contains("frozen")) {
    if (!j["frozen"].is_boolean()) {
      problems.push_back({where, "\"frozen\" must be true or false", n.id, {}});
    } else {
      n.frozen = j["frozen"].get<bool>();
    }
  }
  if (j.contains("lr_mult")) {
    const Json& m = j["lr_mult"];
    if (!m.is_number() || !(m.get<double>() > 0) || m.get<double>() > 1000) {
      problems.push_back({where + ".lr_mult",
                          "must be a number in (0, 1000] (a multiple of the learning rate)",
                          n.id,
                          {}});
    } else {
      n.lrMult = m.get<double>();
    }
  }
}

Node nodeFromJson(const Json& j, const std::string& path, Problems& problems) {
  Node n;
  if (!j.is_object()) {
    problems.push_back(
        {path, "must be an object {id, op, params, inputs, pos}, got " + jsonTypeName(j), {}, {}});
    return n;
  }
  schema::reportUnknownKeys(j, {"id", "op", "params", "inputs", "pos", "init", "frozen", "lr_mult"},
                            path, problems);
  readNodeId(j, path, n, problems);
  const std::string where = n.id.empty() ? path : "node \"" + n.id + "\"";
  if (!j.contains("op") || !j["op"].is_string()) {
    problems.push_back(
        {where, j.contains("op") ? "\"op\" must be a string" : "\"op\" is missing", n.id, {}});
  } else {
    n.op = j["op"].get<std::string>();
  }
  if (j.contains("params")) {
    if (j["params"].is_object()) {
      n.params = j["params"];
    } else {
      problems.push_back(
          {where, "\"params\" must be an object, got " + jsonTypeName(j["params"]), n.id, {}});
    }
  }
  readNodeInputs(j, where, n, problems);
  if (j.contains("pos")) {
    const Json& pos = j["pos"];
    if (!pos.is_array() || pos.size() != 2 || !pos[0].is_number() || !pos[1].is_number()) {
      problems.push_back({where, "\"pos\" must be [x, y], got " + jsonBrief(pos), n.id, {}});
    } else {
      n.x = pos[0].get<double>();
      n.y = pos[1].get<double>();
    }
  }
  readNodeTrainingKeys(j, where, n, problems);
  return n;
}

Json number(double v) {
  // Whole positions are written as integers so files stay tidy.
  if (std::floor(v) == v && std::fabs(v) < 1e15) return static_cast<std::int64_t>(v);
  return v;
}

}  // namespace

ModelGraph modelFromJson(const Json& model, Problems& problems) {
  ModelGraph g;
  if (!model.is_object()) {
    problems.push_back(
        {"model",
         "must be an object with \"input\" and \"nodes\", got " + jsonTypeName(model),
         {},
         {}});
    return g;
  }
  schema::reportUnknownKeys(model, {"input", "nodes", "output"}, "model", problems);
  if (!model.contains("input")) {
    problems.push_back(
        {"model.input", "missing: declare {\"channels\", \"height\", \"width\"}", {}, {}});
  } else if (!model["input"].is_object()) {
    problems.push_back(
        {"model.input", "must be an object {\"channels\", \"height\", \"width\"}", {}, {}});
  } else {
    const Json& in = model["input"];
    schema::reportUnknownKeys(in, {"channels", "height", "width"}, "model.input", problems);
    readDimension(in, "channels", kMaxInputChannels, g.input.channels, problems);
    readDimension(in, "height", kMaxInputSide, g.input.height, problems);
    readDimension(in, "width", kMaxInputSide, g.input.width, problems);
  }
  if (!model.contains("nodes")) {
    problems.push_back({"model.nodes", "missing: a list of layers", {}, {}});
  } else if (!model["nodes"].is_array()) {
    problems.push_back(
        {"model.nodes", "must be a list of layers, got " + jsonTypeName(model["nodes"]), {}, {}});
  } else {
    const Json& nodes = model["nodes"];
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      g.nodes.push_back(nodeFromJson(nodes[i], "model.nodes[" + std::to_string(i) + "]", problems));
    }
  }
  if (model.contains("output")) {
    if (!model["output"].is_string()) {
      problems.push_back({"model.output", "must be a node id (string)", {}, {}});
    } else {
      g.output = model["output"].get<std::string>();
    }
  }
  return g;
}

Json modelToJson(const ModelGraph& graph) {
  Json model = Json::object();
  model["input"] = Json{{"channels", graph.input.channels},
                        {"height", graph.input.height},
                        {"width", graph.input.width}};
  Json nodes = Json::array();
  for (const auto& n : graph.nodes) {
    Json j = Json::object();
    j["id"] = n.id;
    j["op"] = n.op;
    j["params"] = n.params;
    j["inputs"] = n.inputs;
    j["pos"] = Json::array({number(n.x), number(n.y)});
    if (!n.init.empty()) j["init"] = n.init;
    if (n.frozen) j["frozen"] = true;
    if (n.lrMult != 1.0) j["lr_mult"] = n.lrMult;
    nodes.push_back(std::move(j));
  }
  model["nodes"] = std::move(nodes);
  if (!graph.output.empty()) model["output"] = graph.output;
  return model;
}

}  // namespace netsmith::graph
