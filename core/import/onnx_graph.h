#pragma once

// An ONNX model as plain values: what the importer needs of it, read by one file
// (onnx_graph_reader.cpp) that is the only one to see the protobuf classes.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"

namespace netsmith::import {

/// A constant: an initializer or a Constant node's value. Floats (float, double, float16 read
/// as float) or integers (int64, int32, ...), never both.
struct OnnxTensor {
  std::string name;
  std::vector<std::int64_t> dims;
  bool isFloat = true;
  std::vector<float> floats;
  std::vector<std::int64_t> ints;

  std::int64_t numel() const;
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
  std::map<std::string, OnnxTensor> constants;  ///< initializers and Constant node outputs
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
/// their shape, external data, no graph output. Bounded in time and memory by the file size.
OnnxGraph readOnnxGraph(const std::string& path);
/// The same from bytes (the fuzz target); `source` names them in messages.
OnnxGraph parseOnnxGraph(const std::string& bytes, const std::string& source);

}  // namespace netsmith::import
