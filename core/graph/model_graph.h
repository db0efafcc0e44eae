#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/json.h"
#include "common/shape.h"

namespace netsmith::schema {
struct ParamSpec;
}

namespace netsmith::graph {

/// The most channels, and pixels a side, a model input may declare.
inline constexpr std::int64_t kMaxInputChannels = 4096;
inline constexpr std::int64_t kMaxInputSide = 16384;

/// The model input's keys as fields ("channels", "height", "width"), with those bounds: what
/// the Input node's inspector shows.
std::vector<schema::ParamSpec> inputSchema();

/// The model input declaration: one image of `channels` x `height` x `width`.
struct InputSpec {
  std::int64_t channels = 1;
  std::int64_t height = 28;
  std::int64_t width = 28;

  Shape shape() const { return {channels, height, width}; }
  bool operator==(const InputSpec& o) const {
    return channels == o.channels && height == o.height && width == o.width;
  }
};

/// One layer of the model as the user wrote it: parameters are kept exactly as given (not
/// resolved), so a project file round-trips unchanged.
struct Node {
  std::string id;                ///< unique, [A-Za-z_][A-Za-z0-9_]*; prefixes parameter names
  std::string op;                ///< registry name: "Conv2d"
  Json params = Json::object();  ///< as written; defaults are filled in by analysis
  std::vector<std::string> inputs;
  double x = 0.0;  ///< editor position
  double y = 0.0;
  std::string init;     ///< "" (default) or an init scheme name
  bool frozen = false;  ///< parameters excluded from training
  double lrMult = 1.0;  ///< its parameters train at this multiple of the learning rate

  bool operator==(const Node& o) const {
    return id == o.id && op == o.op && params == o.params && inputs == o.inputs && x == o.x &&
           y == o.y && init == o.init && frozen == o.frozen && lrMult == o.lrMult;
  }
};

/// A CNN as a DAG of nodes. A plain value: analysis (graph_analysis.h) and the LibTorch module
/// (graph_module.h) are derived from it.
class ModelGraph {
 public:
  InputSpec input;
  std::vector<Node> nodes;
  std::string output;  ///< optional: the node whose result is the model output

  const Node* find(const std::string& id) const;
  Node* find(const std::string& id);
  /// Position of node `id` in `nodes`, or -1.
  int indexOf(const std::string& id) const;
  /// Ids of the nodes that read from `id`, in file order.
  std::vector<std::string> consumers(const std::string& id) const;
  /// The node whose output node `outputId` (the model's output) reads first: its output is
  /// the model's penultimate features. "" when there is none.
  std::string penultimate(const std::string& outputId) const;

  bool operator==(const ModelGraph& o) const {
    return input == o.input && nodes == o.nodes && output == o.output;
  }
};

/// True for ids usable as parameter-name prefixes: [A-Za-z_][A-Za-z0-9_]*.
bool isValidNodeId(const std::string& id);

/// The longest node id; a longer one (or a longer input name) is refused when the file is read.
constexpr std::size_t kMaxNodeIdLength = 128;

/// Reads the `model` section. Every structural problem (wrong type, missing field, unknown key)
/// is added to `problems` with its path, e.g. `model.nodes[2].inputs`.
ModelGraph modelFromJson(const Json& model, Problems& problems);
Json modelToJson(const ModelGraph& graph);

}  // namespace netsmith::graph
