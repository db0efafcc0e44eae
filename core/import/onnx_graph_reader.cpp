// The only file of the importer that sees the ONNX protobuf classes (like export/onnx_export.cpp
// for the exporter): it turns a ModelProto into the plain values of onnx_graph.h.
#include <onnx/onnx_pb.h>

#include <cstring>
#include <fstream>
#include <limits>

#include "common/error.h"
#include "common/file_util.h"
#include "import/onnx_graph.h"

namespace netsmith::import {

namespace {

constexpr std::int64_t kMaxOnnxBytes = std::int64_t(1) << 30;
constexpr std::int64_t kMaxTensorElements = std::int64_t(1) << 28;  // 1 GiB of floats

/// float16 bits to float (IEEE 754 half).
float halfToFloat(std::uint16_t h) {
  const std::uint32_t sign = std::uint32_t(h & 0x8000u) << 16;
  std::uint32_t exponent = (h >> 10) & 0x1Fu;
  std::uint32_t mantissa = h & 0x3FFu;
  std::uint32_t bits = 0;
  if (exponent == 0 && mantissa == 0) {
    bits = sign;
  } else if (exponent == 0) {  // subnormal: normalise
    exponent = 127 - 15 + 1;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --exponent;
    }
    mantissa &= 0x3FFu;
    bits = sign | (exponent << 23) | (mantissa << 13);
  } else if (exponent == 31) {
    bits = sign | 0x7F800000u | (mantissa << 13);
  } else {
    bits = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  }
  float f = 0;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

template <typename T>
std::vector<T> fromRaw(const std::string& raw, std::int64_t n) {
  std::vector<T> v(static_cast<std::size_t>(n));
  if (n > 0) std::memcpy(v.data(), raw.data(), sizeof(T) * static_cast<std::size_t>(n));
  return v;
}

/// The bytes of tensor values a model may hold, and what is left of them.
struct TensorBudget {
  std::int64_t total = kMaxOnnxTensorBytes;
  std::int64_t left = kMaxOnnxTensorBytes;
};

/// Copies the dims of `t` to `out` and returns its element count; an impossible shape is refused.
std::int64_t readOnnxTensorDims(const onnx::TensorProto& t, const std::string& where,
                                OnnxTensor& out) {
  std::int64_t n = 1;
  for (const auto d : t.dims()) {
    if (d < 0 || (d > 0 && n > kMaxTensorElements / d))
      throw Error(where + ": tensor \"" + t.name() + "\" has an impossible shape");
    out.dims.push_back(d);
    n *= d;
  }
  return n;
}

/// Whether `t` holds integers (read into `ints`, 8 bytes each) rather than floats.
bool isOnnxIntegerTensor(const onnx::TensorProto& t) {
  return t.data_type() == onnx::TensorProto::INT64 || t.data_type() == onnx::TensorProto::INT32 ||
         t.data_type() == onnx::TensorProto::INT8 || t.data_type() == onnx::TensorProto::UINT8 ||
         t.data_type() == onnx::TensorProto::BOOL;
}

/// Counts the `n` elements of `t` against `budget`, refusing a tensor that would pass it.
void chargeOnnxTensorBudget(const onnx::TensorProto& t, const std::string& where, std::int64_t n,
                            bool isInteger, TensorBudget& budget) {
  const std::int64_t bytes = n * (isInteger ? 8 : 4);
  if (bytes > budget.left) {
    throw Error(where + ": tensor \"" + printable(t.name()) + "\" (" + std::to_string(n) +
                " elements) would bring the model's tensors past the " +
                std::to_string(budget.total >> 20) + " MiB read here");
  }
  budget.left -= bytes;
}

/// A tensor whose values are being decoded: the proto, how messages name it, its element count.
struct OnnxTensorPayload {
  const onnx::TensorProto& t;
  const std::string& where;
  std::int64_t n;
  bool raw;              ///< the values are in raw_data
  std::int64_t rawSize;  ///< bytes of raw_data

  /// Refuses raw data that is not `n` elements of `bytesPerElement` bytes.
  void checkRaw(std::int64_t bytesPerElement) const {
    if (rawSize != n * bytesPerElement) {
      throw Error(where + ": tensor \"" + t.name() + "\" has " + std::to_string(rawSize) +
                  " bytes of data for " + std::to_string(n) + " elements");
    }
  }
  /// Refuses typed data that has `count` values for `n` elements.
  void checkCount(std::int64_t count) const {
    if (count != n) {
      throw Error(where + ": tensor \"" + t.name() + "\" has " + std::to_string(count) +
                  " values for " + std::to_string(n) + " elements");
    }
  }
};

/// Reads a FLOAT tensor's values into `out.floats`.
void decodeOnnxFloatValues(const OnnxTensorPayload& p, OnnxTensor& out) {
  const auto& t = p.t;
  if (p.raw) {
    p.checkRaw(4);
    out.floats = fromRaw<float>(t.raw_data(), p.n);
  } else {
    p.checkCount(t.float_data_size());
    out.floats.assign(t.float_data().begin(), t.float_data().end());
  }
}

/// Reads a DOUBLE tensor's values into `out.floats`, narrowed to float.
void decodeOnnxDoubleValues(const OnnxTensorPayload& p, OnnxTensor& out) {
  const auto& t = p.t;
  std::vector<double> d;
  if (p.raw) {
    p.checkRaw(8);
    d = fromRaw<double>(t.raw_data(), p.n);
  } else {
    p.checkCount(t.double_data_size());
    d.assign(t.double_data().begin(), t.double_data().end());
  }
  out.floats.assign(d.begin(), d.end());
}

/// Reads a FLOAT16 tensor's values into `out.floats`, widened to float.
void decodeOnnxHalfValues(const OnnxTensorPayload& p, OnnxTensor& out) {
  const auto& t = p.t;
  std::vector<std::uint16_t> h;
  if (p.raw) {
    p.checkRaw(2);
    h = fromRaw<std::uint16_t>(t.raw_data(), p.n);
  } else {
    p.checkCount(t.int32_data_size());
    for (const auto v : t.int32_data())
      h.push_back(static_cast<std::uint16_t>(v));
  }
  for (const auto v : h)
    out.floats.push_back(halfToFloat(v));
}

/// Reads an INT64 tensor's values into `out.ints`.
void decodeOnnxInt64Values(const OnnxTensorPayload& p, OnnxTensor& out) {
  const auto& t = p.t;
  out.isFloat = false;
  if (p.raw) {
    p.checkRaw(8);
    out.ints = fromRaw<std::int64_t>(t.raw_data(), p.n);
  } else {
    p.checkCount(t.int64_data_size());
    out.ints.assign(t.int64_data().begin(), t.int64_data().end());
  }
}

/// Reads an INT32, INT8, UINT8 or BOOL tensor's values into `out.ints`, widened to 64 bits.
void decodeOnnxNarrowIntValues(const OnnxTensorPayload& p, OnnxTensor& out) {
  const auto& t = p.t;
  out.isFloat = false;
  if (p.raw) {
    const std::int64_t size = t.data_type() == onnx::TensorProto::INT32 ? 4 : 1;
    p.checkRaw(size);
    for (std::int64_t k = 0; k < p.n; ++k) {
      if (size == 4) {
        std::int32_t v = 0;
        std::memcpy(&v, t.raw_data().data() + 4 * k, 4);
        out.ints.push_back(v);
      } else {
        const auto byte = static_cast<unsigned char>(t.raw_data()[static_cast<std::size_t>(k)]);
        out.ints.push_back(t.data_type() == onnx::TensorProto::INT8
                               ? std::int64_t(static_cast<signed char>(byte))
                               : std::int64_t(byte));
      }
    }
  } else {
    p.checkCount(t.int32_data_size());
    out.ints.assign(t.int32_data().begin(), t.int32_data().end());
  }
}

/// Reads the values of `p.t` into `out` by its data type; a type not read is refused.
void decodeOnnxTensorValues(const OnnxTensorPayload& p, OnnxTensor& out) {
  switch (p.t.data_type()) {
    case onnx::TensorProto::FLOAT:
      decodeOnnxFloatValues(p, out);
      break;
    case onnx::TensorProto::DOUBLE:
      decodeOnnxDoubleValues(p, out);
      break;
    case onnx::TensorProto::FLOAT16:
      decodeOnnxHalfValues(p, out);
      break;
    case onnx::TensorProto::INT64:
      decodeOnnxInt64Values(p, out);
      break;
    case onnx::TensorProto::INT32:
    case onnx::TensorProto::INT8:
    case onnx::TensorProto::UINT8:
    case onnx::TensorProto::BOOL:
      decodeOnnxNarrowIntValues(p, out);
      break;
    default:
      throw Error(p.where + ": tensor \"" + p.t.name() + "\" has data type " +
                  std::to_string(p.t.data_type()) +
                  ", which is not read (float, double, "
                  "float16 and integer tensors are)");
  }
}

/// What this tensor takes is counted against `budget`, and a tensor that would pass it is
/// refused before its values are read.
OnnxTensor readTensor(const onnx::TensorProto& t, const std::string& where, TensorBudget& budget) {
  OnnxTensor out;
  out.name = t.name();
  const std::int64_t n = readOnnxTensorDims(t, where, out);
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    throw Error(where + ": tensor \"" + t.name() +
                "\" keeps its data in an external file, which is not read; save the model with "
                "its weights inside (onnx.save(model, path, save_as_external_data=False))");
  }
  const bool isInteger = isOnnxIntegerTensor(t);
  if (isInteger && n > kMaxOnnxIntElements) {
    // Not a shape or a setting: its values are never needed, so they are not widened.
    out.isFloat = false;
    out.undecoded = true;
    return out;
  }
  chargeOnnxTensorBudget(t, where, n, isInteger, budget);
  const OnnxTensorPayload payload{t, where, n, t.has_raw_data(),
                                  static_cast<std::int64_t>(t.raw_data().size())};
  decodeOnnxTensorValues(payload, out);
  return out;
}

OnnxAttribute readAttribute(const onnx::AttributeProto& a, const std::string& where,
                            TensorBudget& budget) {
  OnnxAttribute out;
  switch (a.type()) {
    case onnx::AttributeProto::INT:
      out.kind = OnnxAttribute::Kind::Int;
      out.i = a.i();
      break;
    case onnx::AttributeProto::FLOAT:
      out.kind = OnnxAttribute::Kind::Float;
      out.f = a.f();
      break;
    case onnx::AttributeProto::INTS:
      out.kind = OnnxAttribute::Kind::Ints;
      out.ints.assign(a.ints().begin(), a.ints().end());
      break;
    case onnx::AttributeProto::FLOATS:
      out.kind = OnnxAttribute::Kind::Floats;
      out.floats.assign(a.floats().begin(), a.floats().end());
      break;
    case onnx::AttributeProto::STRING:
      out.kind = OnnxAttribute::Kind::String;
      out.s = a.s();
      break;
    case onnx::AttributeProto::TENSOR:
      out.kind = OnnxAttribute::Kind::Tensor;
      out.t = readTensor(a.t(), where, budget);
      break;
    default:
      out.kind = OnnxAttribute::Kind::Other;  // graphs, sparse tensors: the op is refused
      break;
  }
  return out;
}

/// Parses `bytes` into `proto`, refusing more than 1 GiB, bytes that are not a ModelProto and a
/// model without a graph or graph outputs.
void parseOnnxModelProto(const std::string& bytes, const std::string& source,
                         onnx::ModelProto& proto) {
  if (static_cast<std::int64_t>(bytes.size()) > kMaxOnnxBytes)
    throw Error(source + ": larger than the 1 GiB an ONNX model may have here");
  if (bytes.empty() || !proto.ParseFromString(bytes))
    throw Error(source + ": not an ONNX model (the file does not parse as an ONNX ModelProto)");
  if (!proto.has_graph() || proto.graph().output_size() == 0)
    throw Error(source + ": not an ONNX model with a graph (no graph, or a graph without outputs)");
}

/// Copies the producer, the default domain's opset and the metadata of `proto` to `g`.
void readOnnxModelInfo(const onnx::ModelProto& proto, OnnxGraph& g) {
  g.producer = proto.producer_name() +
               (proto.producer_version().empty() ? "" : " " + proto.producer_version());
  for (const auto& op : proto.opset_import()) {
    if (op.domain().empty() || op.domain() == "ai.onnx") g.opset = op.version();
  }
  for (const auto& p : proto.metadata_props())
    g.metadata.emplace_back(p.key(), p.value());
}

/// Adds the graph's inputs that are not initializers to `g.inputs`, -1 for a symbolic dim.
void readOnnxInputs(const onnx::GraphProto& graph, OnnxGraph& g) {
  for (const auto& in : graph.input()) {
    if (g.constants.count(in.name())) continue;  // older exporters list initializers as inputs
    OnnxValue v;
    v.name = in.name();
    if (in.type().has_tensor_type() && in.type().tensor_type().has_shape()) {
      for (const auto& d : in.type().tensor_type().shape().dim())
        v.dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
    }
    g.inputs.push_back(std::move(v));
  }
}

/// Reads node `n` (the `index`th) with its attributes, their tensors counted against `budget`.
OnnxNode readOnnxNode(const onnx::NodeProto& n, const std::string& source, std::size_t index,
                      TensorBudget& budget) {
  OnnxNode node;
  node.name = n.name();
  node.opType = n.op_type();
  node.domain = n.domain();
  node.inputs.assign(n.input().begin(), n.input().end());
  node.outputs.assign(n.output().begin(), n.output().end());
  const std::string where = source + ": node " + node.label(index);
  for (const auto& a : n.attribute())
    node.attributes[a.name()] = readAttribute(a, where, budget);
  return node;
}

/// Moves the value of Constant node `node` into `t`; false when it has none of the value
/// attributes read here.
bool takeOnnxConstantValue(OnnxNode& node, OnnxTensor& t) {
  auto& attrs = node.attributes;
  if (auto it = attrs.find("value");
      it != attrs.end() && it->second.kind == OnnxAttribute::Kind::Tensor) {
    t = std::move(it->second.t);
  } else if (auto f = attrs.find("value_float"); f != attrs.end()) {
    t.floats = {f->second.f};
  } else if (auto fs = attrs.find("value_floats"); fs != attrs.end()) {
    t.floats = fs->second.floats;
    t.dims = {static_cast<std::int64_t>(t.floats.size())};
  } else if (auto i = attrs.find("value_int"); i != attrs.end()) {
    t.isFloat = false;
    t.ints = {i->second.i};
  } else if (auto is = attrs.find("value_ints"); is != attrs.end()) {
    t.isFloat = false;
    t.ints = is->second.ints;
    t.dims = {static_cast<std::int64_t>(t.ints.size())};
  } else {
    return false;
  }
  return true;
}

/// Adds `node` to `g`: as a constant when it is an Identity of a constant or a Constant, else
/// to `g.nodes`.
void addOnnxNode(OnnxGraph& g, OnnxNode node) {
  // torch.onnx shares equal initializers through Identity nodes: the output is that constant,
  // the same tensor (200 Identities of one initializer hold it once).
  if (node.opType == "Identity" && node.domain.empty() && node.inputs.size() == 1 &&
      node.outputs.size() == 1 && g.constants.count(node.inputs[0])) {
    g.constants[node.outputs[0]] = g.constants.at(node.inputs[0]);
    return;
  }
  if (node.opType == "Constant" && node.domain.empty() && node.outputs.size() == 1) {
    // A constant's value becomes a constant like an initializer.
    OnnxTensor t;
    if (!takeOnnxConstantValue(node, t)) {
      g.nodes.push_back(std::move(node));  // refused later, with the other unsupported ops
      return;
    }
    t.name = node.outputs[0];
    auto shared = std::make_shared<OnnxTensor>(std::move(t));
    g.constants[shared->name] = std::move(shared);
    return;
  }
  g.nodes.push_back(std::move(node));
}

}  // namespace

std::int64_t OnnxTensor::numel() const {
  std::int64_t n = 1;
  for (const auto d : dims)
    n *= d;  // bounded when read (kMaxTensorElements)
  return n;
}

std::string OnnxNode::label(std::size_t index) const {
  return (name.empty() ? "#" + std::to_string(index) : "\"" + name + "\"") + " (" + opType + ")";
}

OnnxGraph parseOnnxGraph(const std::string& bytes, const std::string& source,
                         std::int64_t tensorBytes) {
  onnx::ModelProto proto;
  parseOnnxModelProto(bytes, source, proto);
  OnnxGraph g;
  readOnnxModelInfo(proto, g);
  const auto& graph = proto.graph();
  if (static_cast<std::size_t>(graph.node_size()) > kMaxOnnxNodes) {
    throw Error(source + ": has " + std::to_string(graph.node_size()) + " nodes; at most " +
                std::to_string(kMaxOnnxNodes) + " are imported");
  }
  TensorBudget budget{tensorBytes, tensorBytes};
  for (const auto& t : graph.initializer()) {
    auto tensor = std::make_shared<OnnxTensor>(readTensor(t, source, budget));
    const std::string name = tensor->name;
    g.constants[name] = std::move(tensor);
  }
  readOnnxInputs(graph, g);
  for (const auto& out : graph.output())
    g.outputs.push_back(out.name());
  std::size_t index = 0;
  for (const auto& n : graph.node()) {
    addOnnxNode(g, readOnnxNode(n, source, index, budget));
    ++index;
  }
  return g;
}

OnnxGraph readOnnxGraph(const std::string& path) {
  // A FIFO would block the open below for ever, a device read without end.
  requireRegularFile(path);
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw Error(path + ": cannot open");
  const auto size = static_cast<std::int64_t>(in.tellg());
  if (size < 0) throw Error(path + ": cannot read");
  if (size > kMaxOnnxBytes)
    throw Error(path + ": larger than the 1 GiB an ONNX model may have here");
  std::string bytes(static_cast<std::size_t>(size), '\0');
  in.seekg(0);
  if (size > 0 && !in.read(bytes.data(), size)) throw Error(path + ": cannot read");
  return parseOnnxGraph(bytes, path);
}

}  // namespace netsmith::import
