#include "export/onnx_cost.h"

#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <exception>
#include <map>
#include <set>

#include "common/error.h"
#include "common/file_util.h"

namespace netsmith::exporting {

namespace {

using Dims = std::vector<std::int64_t>;

/// The dims of a value's type, or empty when any is unknown.
Dims knownDims(const onnx::TypeProto& type) {
  if (!type.has_tensor_type() || !type.tensor_type().has_shape()) return {};
  Dims dims;
  for (const auto& d : type.tensor_type().shape().dim()) {
    if (!d.has_dim_value()) return {};
    dims.push_back(d.dim_value());
  }
  return dims;
}

std::int64_t product(const Dims& dims, std::size_t from = 0) {
  std::int64_t n = 1;
  for (std::size_t i = from; i < dims.size(); ++i)
    n *= dims[i];
  return n;
}

bool isQuantizedType(int type) {
  return type == onnx::TensorProto::INT8 || type == onnx::TensorProto::UINT8;
}

/// The graph's values: initializers (and what DequantizeLinear makes of one) and shapes.
struct GraphValues {
  std::map<std::string, const onnx::TensorProto*> initializers;
  std::map<std::string, std::string> dequantizedFrom;  ///< DequantizeLinear output -> its input
  std::map<std::string, Dims> dims;

  /// The initializer a node input reads, directly or through a DequantizeLinear.
  const onnx::TensorProto* weight(const std::string& name) const {
    const auto dq = dequantizedFrom.find(name);
    const auto it = initializers.find(dq == dequantizedFrom.end() ? name : dq->second);
    return it == initializers.end() ? nullptr : it->second;
  }
  Dims shape(const std::string& name) const {
    if (const auto* w = weight(name)) return Dims(w->dims().begin(), w->dims().end());
    const auto it = dims.find(name);
    return it == dims.end() ? Dims{} : it->second;
  }
};

/// Multiply-accumulates of one image in `node`, -1 when its shapes are unknown, 0 for a node
/// that does none.
std::int64_t nodeMacs(const onnx::NodeProto& node, const GraphValues& values) {
  const auto& op = node.op_type();
  if (op != "Conv" && op != "ConvTranspose" && op != "Gemm" && op != "MatMul") return 0;
  if (node.input_size() < 2 || node.output_size() < 1) return -1;
  const Dims in = values.shape(node.input(0)), w = values.shape(node.input(1));
  const Dims out = values.shape(node.output(0));
  if (in.empty() || w.empty() || out.empty()) return -1;
  if (op == "Conv") return w.size() < 2 ? -1 : product(out, 1) * product(w, 1);
  if (op == "ConvTranspose") return w.size() < 2 ? -1 : product(in, 1) * product(w, 1);
  std::int64_t k = in.back();  // MatMul, and Gemm without transA
  if (op == "Gemm") {
    for (const auto& a : node.attribute())
      if (a.name() == "transA" && a.i() != 0) k = in.front();
  }
  return product(out, 1) * k;
}

/// Which inputs of a node are parameters.
std::vector<int> parameterInputs(const std::string& op) {
  if (op == "Conv" || op == "ConvTranspose" || op == "Gemm" || op == "BatchNormalization")
    return {1, 2};
  if (op == "MatMul" || op == "PRelu") return {1};
  return {};
}

}  // namespace

OnnxCost onnxCost(const std::string& path) {
  const std::string bytes = readTextFile(path, std::uint64_t(2) << 30);
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) throw Error(path + ": not an ONNX model");
  OnnxCost cost;
  cost.fileBytes = static_cast<std::int64_t>(bytes.size());
  auto& graph = *model.mutable_graph();
  GraphValues values;
  for (const auto& t : graph.initializer())
    values.initializers[t.name()] = &t;
  onnx::ValueInfoProto* input = nullptr;
  for (auto& i : *graph.mutable_input())
    if (!values.initializers.count(i.name()) && !input) input = &i;
  if (!input) throw Error(path + ": the model has no input");
  cost.inputName = input->name();
  auto* shape = input->mutable_type()->mutable_tensor_type()->mutable_shape();
  if (shape->dim_size() != 4)
    throw Error(path + ": the input \"" + input->name() +
                "\" is not a batch of images (N x C x H x W)");
  shape->mutable_dim(0)->set_dim_value(1);  // one image: every other shape follows
  for (int i = 1; i < 4; ++i) {
    if (!shape->dim(i).has_dim_value() || shape->dim(i).dim_value() <= 0)
      throw Error(path + ": the input \"" + input->name() + "\" has no fixed C x H x W");
    cost.inputDims.push_back(shape->dim(i).dim_value());
  }
  for (const auto& o : graph.output())
    cost.outputs.push_back(o.name());
  bool inferred = true;
  try {
    onnx::shape_inference::InferShapes(model);
  } catch (const std::exception&) {
    inferred = false;
  }
  for (const auto& list : {graph.input(), graph.value_info(), graph.output()})
    for (const auto& v : list)
      values.dims[v.name()] = knownDims(v.type());
  for (const auto& n : graph.node())
    if (n.op_type() == "DequantizeLinear" && n.input_size() > 0 && n.output_size() > 0)
      values.dequantizedFrom[n.output(0)] = n.input(0);

  std::set<std::string> counted;
  for (const auto& n : graph.node()) {
    for (const int i : parameterInputs(n.op_type())) {
      if (i >= n.input_size()) continue;
      const auto* w = values.weight(n.input(i));
      if (!w || !counted.insert(w->name()).second) continue;
      const std::int64_t count = product(Dims(w->dims().begin(), w->dims().end()));
      cost.parameters += count;
      if (isQuantizedType(w->data_type())) cost.quantizedWeights += count;
    }
    const std::int64_t macs = nodeMacs(n, values);
    if (macs < 0 || !inferred) cost.macs = -1;
    if (cost.macs >= 0) cost.macs += macs;
  }
  return cost;
}

}  // namespace netsmith::exporting
