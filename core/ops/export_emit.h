#pragma once

// What an op declares so its nodes can be exported: an ONNX emitter and a PyTorch-code emitter.
// No protobuf and no LibTorch here: core/export implements OnnxEmitter with the ONNX classes.
#include <array>
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "common/shape.h"
#include "schema/param_schema.h"

namespace netsmith::ops {

/// One node as the exporters see it.
struct EmitNode {
  std::string id;
  schema::Params params;  ///< resolved (defaults filled in)
  std::vector<Shape> inputShapes;
  Shape outputShape;
  std::vector<std::string> inputs;  ///< ONNX value names, or Python variable names
};

/// An ONNX attribute.
struct OnnxAttr {
  enum class Kind { Int, Float, Ints, Floats, String };
  std::string name;
  Kind kind = Kind::Int;
  std::int64_t i = 0;
  float f = 0;
  std::vector<std::int64_t> ints;
  std::vector<float> floats;
  std::string s;

  static OnnxAttr integer(std::string n, std::int64_t v) {
    OnnxAttr a;
    a.name = std::move(n);
    a.i = v;
    return a;
  }
  static OnnxAttr real(std::string n, float v) {
    OnnxAttr a;
    a.name = std::move(n);
    a.kind = Kind::Float;
    a.f = v;
    return a;
  }
  static OnnxAttr integers(std::string n, std::vector<std::int64_t> v) {
    OnnxAttr a;
    a.name = std::move(n);
    a.kind = Kind::Ints;
    a.ints = std::move(v);
    return a;
  }
  /// A string attribute: `OnnxAttr::text("mode", "nearest")`.
  static OnnxAttr text(std::string n, std::string v) {
    OnnxAttr a;
    a.name = std::move(n);
    a.kind = Kind::String;
    a.s = std::move(v);
    return a;
  }
};

/// Thrown by an emitter when the node cannot be exported at the chosen opset.
struct NotExportable : std::exception {
  explicit NotExportable(std::string why, int opset = 0)
      : message(std::move(why)), opsetNeeded(opset) {}
  const char* what() const noexcept override { return message.c_str(); }
  std::string message;
  int opsetNeeded = 0;  ///< 0: no opset helps
};

/// The ONNX graph under construction, as an op's emitter sees it.
class OnnxEmitter {
 public:
  virtual ~OnnxEmitter() = default;
  virtual int opset() const = 0;
  /// Adds a node with one output; returns the output's value name.
  virtual std::string node(const std::string& opType, const std::vector<std::string>& inputs,
                           const std::vector<OnnxAttr>& attrs = {}) = 0;
  /// The initializer holding the model tensor `name` ("conv1.weight"); adds it on first use.
  virtual std::string tensor(const std::string& name) = 0;
  /// A float constant initializer (a scalar when `dims` is empty).
  virtual std::string constant(const std::vector<float>& values,
                               const std::vector<std::int64_t>& dims = {}) = 0;
  /// An int64 constant initializer, one dimension (Pad's pads, Reshape's shape).
  virtual std::string constantInts(const std::vector<std::int64_t>& values) = 0;
};

/// A node in generated PyTorch code: the module built in __init__ ("" for none) and the
/// forward expression over the input variables, where `$m` stands for the node's module.
struct PyNode {
  std::string module;   ///< "nn.Conv2d(1, 32, kernel_size=(3, 3), ...)"
  std::string forward;  ///< "$m(x)", "a + b", "torch.cat([a, b], dim=1)"
};

// Helpers for emitters.
std::string pyPair(const std::array<std::int64_t, 2>& v);  ///< "(3, 3)"
std::string pyNumber(double v);                            ///< shortest exact: 0.01, 1e-05
inline std::string pyBool(bool b) {
  return b ? "True" : "False";
}
/// An emitter for ops that vanish from the inference graph (Dropout, Identity).
std::string onnxPassThrough(OnnxEmitter& onnx, const EmitNode& node);
/// `$m(x)` with the module `module`: the usual PyNode of a single-input layer.
PyNode pyModule(std::string module, const EmitNode& node);

}  // namespace netsmith::ops
