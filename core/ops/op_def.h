#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/shape.h"
#include "ops/export_emit.h"
#include "schema/param_schema.h"

namespace netsmith::ops {

class NodeLayerImpl;  // a torch::nn::Module; see ops/node_layer.h

/// Weight initialisation chosen per node. `Default` is PyTorch's own reset_parameters().
enum class InitScheme {
  Default,
  KaimingNormal,
  KaimingUniform,
  XavierUniform,
  XavierNormal,
  Zeros
};

std::string initSchemeName(InitScheme scheme);
std::optional<InitScheme> parseInitScheme(const std::string& name);
std::vector<std::string> initSchemeNames();

/// Thrown by a shape rule when the inputs do not fit the op. `fix` says what to change.
struct ShapeError : std::exception {
  explicit ShapeError(std::string why, std::string howToFix = {})
      : message(std::move(why)), fix(std::move(howToFix)) {}
  const char* what() const noexcept override { return message.c_str(); }
  std::string message;
  std::string fix;
};

/// What a builder receives: the node, its checked parameters and the inferred shapes.
struct LayerSpec {
  std::string nodeId;
  schema::Params params;
  std::vector<Shape> inputShapes;
  Shape outputShape;
};

/// Everything Netsmith knows about one layer type, declared in one place (one file per family).
struct OpDef {
  std::string name;   ///< "Conv2d"
  std::string group;  ///< palette group: "Convolution", "Normalisation", ...
  std::string help;   ///< one line
  schema::ParamSchema schema;
  int minInputs = 1;
  int maxInputs = 1;      ///< -1: any number
  bool isSource = false;  ///< Input: receives the model input shape as its only "input"
  /// Init schemes a node of this op accepts (besides Default). Empty: the op has no weights.
  std::vector<InitScheme> initSchemes;

  /// Output shape from input shapes; throws ShapeError when they do not fit.
  std::function<Shape(const std::vector<Shape>& inputs, const schema::Params& p)> inferShape;
  /// What each of the node's "auto" parameters stands for here, as a JSON object
  /// ({"in_features": 2704}); shown by the inspector. Null: the op has no "auto" parameter.
  std::function<Json(const std::vector<Shape>& inputs, const schema::Params& p)> autoValues;
  /// Number of learnable parameters (null: none).
  std::function<std::int64_t(const std::vector<Shape>& inputs, const schema::Params& p)> paramCount;
  /// Multiply-accumulates per sample (null: none counted).
  std::function<std::int64_t(const std::vector<Shape>& inputs, const Shape& output,
                             const schema::Params& p)>
      macs;
  /// Builds the LibTorch layer. Its parameters are registered directly on the layer, so a node
  /// "conv1" owns "conv1.weight" and "conv1.bias" in the GraphModule.
  std::function<std::shared_ptr<NodeLayerImpl>(const LayerSpec& spec)> build;
  /// ONNX export: adds the node's ONNX nodes and returns the value name of its output (an
  /// input's name for ops removed from the inference graph). Null: not exportable.
  std::function<std::string(OnnxEmitter& onnx, const EmitNode& node)> toOnnx;
  /// PyTorch code: the module and the forward expression (`self.<id>` is the module).
  std::function<PyNode(const EmitNode& node)> toPyTorch;

  bool acceptsInputCount(int n) const {
    return n >= minInputs && (maxInputs < 0 || n <= maxInputs);
  }
};

}  // namespace netsmith::ops
