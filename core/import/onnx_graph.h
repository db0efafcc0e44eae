#pragma once

// An ONNX model as plain values: what the importer needs of it, read by one file
// (onnx_graph_reader.cpp) that is the only one to see the protobuf classes.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"

namespace netsmith::import {

/// At most this many bytes of tensor values are held while a model is read (floats at 4 bytes
/// each, integers at 8): a model whose constants would need more is refused by name first.
constexpr std::int64_t kMaxOnnxTensorBytes = std::int64_t(1) << 30;
/// Integer tensors are read as shapes, axes and settings: one with more elements than this is
/// kept as its shape only (`undecoded`), never widened to 64 bits.
constexpr std::int64_t kMaxOnnxIntElements = std::int64_t(1) << 16;
/// Nodes a model may have (ResNet-152 has ~500, a large ViT ~3,000).
constexpr std::size_t kMaxOnnxNodes = 100000;

/// A constant: an initializer or a Constant node's value. Floats (float, double, float16 read
/// as float) or integers (int64, int32, ...), never both.
struct OnnxTensor {
  std::string name;
  std::vector<std::int64_t> dims;
  bool isFloat = true;
  std::vector<float> floats;
  std::vector<std::int64_t> ints;
  bool undecoded = false;  ///< an integer tensor over kMaxOnnxIntElements: `ints` left empty

  std::int64_t numel() const;  ///< the product of `dims`
};

struct OnnxAttribute {
  enum class Kind { Int, Float, Ints, Floats, String, Tensor, Other };
  Kind kind = Kind::Other;
  std::int64_t i = 0;
  float f = 0;
  std::vector<std::int64_t> ints;
  std::vector<float> floats;
  std::string s;
  OnnxTensor t;
};

struct OnnxNode {
  std::string name;  ///< may be empty
  std::string opType;
  std::string domain;               ///< "" or "ai.onnx" for the standard ops
  std::vector<std::string> inputs;  ///< "" for an omitted optional input
  std::vector<std::string> outputs;
  std::map<std::string, OnnxAttribute> attributes;

  /// "name" (op), or "#index (op)" when the node has no name: how messages name it.
  std::string label(std::size_t index) const;
};

/// A graph input that is not an initializer: its dims, -1 where symbolic (a batch "N").
struct OnnxValue {
  std::string name;
  std::vector<std::int64_t> dims;
};

struct OnnxGraph {
  std::int64_t opset = 0;  ///< of the default domain
  std::string producer;    ///< "pytorch 2.1.0"
  std::vector<OnnxNode> nodes;
  /// Initializers and Constant node outputs, by value name. An Identity of a constant shares
  /// its tensor (no copy).
  std::map<std::string, std::shared_ptr<const OnnxTensor>> constants;
  std::vector<OnnxValue> inputs;
  std::vector<std::string> outputs;
  std::vector<std::pair<std::string, std::string>> metadata;
};

/// Thrown when the file has ops (or forms of ops) Netsmith cannot import: every such node is
/// listed, each by its ONNX name and op type, with the reason. Nothing has been written then.
struct UnsupportedOps : Error {
  std::vector<std::string> nodes;  ///< "\"/lstm/LSTM\" (LSTM): no such Netsmith op"
  UnsupportedOps(const std::string& source, std::vector<std::string> list);
};

/// Reads `path`. Throws netsmith::Error naming the file for anything that is not a readable
/// ONNX model: too large (over 1 GiB), not a ModelProto, tensors whose data does not match
/// their shape or exceed kMaxOnnxTensorBytes together, more than kMaxOnnxNodes nodes, external
/// data, no graph output. Bounded in time and memory by the file size.
OnnxGraph readOnnxGraph(const std::string& path);
/// The same from bytes (the fuzz target); `source` names them in messages.
/// `tensorBytes`: the budget of tensor values (smaller in tests).
OnnxGraph parseOnnxGraph(const std::string& bytes, const std::string& source,
                         std::int64_t tensorBytes = kMaxOnnxTensorBytes);

}  // namespace netsmith::import
