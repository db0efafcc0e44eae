#include "export/onnx_export.h"

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include <map>
#include <set>

#include "common/error.h"
#include "graph/graph_analysis.h"
#include "netsmith/version.h"

namespace netsmith::exporting {

namespace {

std::int64_t irVersionFor(int opset) {
  if (opset <= 11) return 6;
  if (opset <= 14) return 7;
  return 8;
}

void setFloatTensor(onnx::TensorProto* t, const std::string& name, const float* data,
                    std::size_t count, const std::vector<std::int64_t>& dims) {
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (auto d : dims)
    t->add_dims(d);
  t->set_raw_data(std::string(reinterpret_cast<const char*>(data), count * sizeof(float)));
}

/// The ONNX graph under construction, for the ops' emitters.
class ProtoEmitter : public ops::OnnxEmitter {
 public:
  ProtoEmitter(onnx::GraphProto& graph, int opset, const checkpoint::NamedTensors& tensors)
      : m_graph(graph), m_opset(opset) {
    for (const auto& [name, t] : tensors)
      m_tensors.emplace(name, t);
  }
  void setNode(const std::string& id) {
    m_prefix = id;
    m_index = 0;
  }
  int opset() const override { return m_opset; }

  std::string node(const std::string& opType, const std::vector<std::string>& inputs,
                   const std::vector<ops::OnnxAttr>& attrs) override {
    auto* n = m_graph.add_node();
    const std::string name = m_prefix + (m_index ? "_" + std::to_string(m_index) : "");
    ++m_index;
    n->set_name(name);
    n->set_op_type(opType);
    for (const auto& in : inputs)
      n->add_input(in);
    n->add_output(name);
    for (const auto& a : attrs) {
      auto* p = n->add_attribute();
      p->set_name(a.name);
      switch (a.kind) {
        case ops::OnnxAttr::Kind::Int:
          p->set_type(onnx::AttributeProto::INT);
          p->set_i(a.i);
          break;
        case ops::OnnxAttr::Kind::Float:
          p->set_type(onnx::AttributeProto::FLOAT);
          p->set_f(a.f);
          break;
        case ops::OnnxAttr::Kind::Ints:
          p->set_type(onnx::AttributeProto::INTS);
          for (auto v : a.ints)
            p->add_ints(v);
          break;
        case ops::OnnxAttr::Kind::Floats:
          p->set_type(onnx::AttributeProto::FLOATS);
          for (auto v : a.floats)
            p->add_floats(v);
          break;
        case ops::OnnxAttr::Kind::String:
          p->set_type(onnx::AttributeProto::STRING);
          p->set_s(a.s);
          break;
      }
    }
    return name;
  }

  std::string tensor(const std::string& name) override {
    if (m_added.count(name)) return name;
    const auto it = m_tensors.find(name);
    if (it == m_tensors.end()) throw Error("ONNX export: the model has no tensor \"" + name + "\"");
    const auto t = it->second.detach().to(torch::kCPU, torch::kFloat).contiguous();
    setFloatTensor(m_graph.add_initializer(), name, t.data_ptr<float>(),
                   static_cast<std::size_t>(t.numel()),
                   std::vector<std::int64_t>(t.sizes().begin(), t.sizes().end()));
    m_added.insert(name);
    return name;
  }

  std::string constant(const std::vector<float>& values,
                       const std::vector<std::int64_t>& dims) override {
    const std::string name = m_prefix + "_const" + std::to_string(m_constants++);
    setFloatTensor(m_graph.add_initializer(), name, values.data(), values.size(), dims);
    return name;
  }

  std::string constantInts(const std::vector<std::int64_t>& values) override {
    const std::string name = m_prefix + "_const" + std::to_string(m_constants++);
    auto* t = m_graph.add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<std::int64_t>(values.size()));
    for (const auto v : values)
      t->add_int64_data(v);
    return name;
  }

 private:
  onnx::GraphProto& m_graph;
  int m_opset;
  std::map<std::string, torch::Tensor> m_tensors;
  std::set<std::string> m_added;
  std::string m_prefix;
  int m_index = 0;
  int m_constants = 0;
};

void addValueInfo(onnx::ValueInfoProto* v, const std::string& name, const Shape& perSample) {
  v->set_name(name);
  auto* type = v->mutable_type()->mutable_tensor_type();
  type->set_elem_type(onnx::TensorProto::FLOAT);
  auto* shape = type->mutable_shape();
  shape->add_dim()->set_dim_param("batch");
  for (auto d : perSample)
    shape->add_dim()->set_dim_value(d);
}

}  // namespace

std::string buildOnnx(const ExportModel& model, const OnnxOptions& options) {
  if (options.opset < 11 || options.opset > 17)
    throw Error("ONNX opset " + std::to_string(options.opset) + " is not supported; use 11 to 17");
  const auto analysis = graph::analyseGraph(model.project.model, *model.registry);
  if (!analysis.ok()) throw Error("the model has problems; fix them before exporting");

  onnx::ModelProto proto;
  proto.set_ir_version(irVersionFor(options.opset));
  proto.set_producer_name("Netsmith");
  proto.set_producer_version(NETSMITH_VERSION);
  proto.set_model_version(1);
  auto* opset = proto.add_opset_import();
  opset->set_domain("");
  opset->set_version(options.opset);
  auto metadata = model.metadata();
  metadata.insert(metadata.end(), options.metadata.begin(), options.metadata.end());
  for (const auto& [key, value] : metadata) {
    auto* p = proto.add_metadata_props();
    p->set_key(key);
    p->set_value(value);
  }
  auto& graph = *proto.mutable_graph();
  graph.set_name(model.project.name.empty() ? "netsmith" : model.project.name);
  const auto& in = model.project.model.input;
  addValueInfo(graph.add_input(), "input", Shape{in.channels, in.height, in.width});

  ProtoEmitter emitter(graph, options.opset, model.weights);
  std::map<std::string, std::string> valueOf;  // node id -> ONNX value name
  std::map<std::string, const graph::Node*> nodes;
  for (const auto& node : model.project.model.nodes)
    nodes[node.id] = &node;
  for (const auto& info : analysis.nodes) {
    const auto& node = *nodes.at(info.id);
    if (!info.def->toOnnx) {
      throw Error("node \"" + node.id + "\": " + info.def->name +
                  " has no ONNX export; remove it or replace it before exporting");
    }
    ops::EmitNode n{node.id, info.params, info.inputShapes, info.outputShape, {}};
    if (info.def->isSource) n.inputs.push_back("input");
    for (const auto& src : node.inputs)
      n.inputs.push_back(valueOf.at(src));
    emitter.setNode(node.id);
    try {
      valueOf[node.id] = info.def->toOnnx(emitter, n);
    } catch (const ops::NotExportable& e) {
      throw Error("node \"" + node.id + "\": " + e.message + " (exporting at opset " +
                  std::to_string(options.opset) + ")" +
                  (e.opsetNeeded ? "; use --opset " + std::to_string(e.opsetNeeded) + " or newer"
                                 : std::string()));
    }
  }
  // Name the output as the task says (classification: "logits"): rename the value in the node that
  // produces it.
  const std::string out = valueOf.at(analysis.outputId);
  bool renamed = false;
  for (auto& n : *graph.mutable_node()) {
    for (auto& o : *n.mutable_output()) {
      if (o == out) {
        o = options.output;
        renamed = true;
      }
    }
    for (auto& i : *n.mutable_input())
      if (i == out) i = options.output;
  }
  if (!renamed) {  // the model is its input: an Identity makes the output
    auto* n = graph.add_node();
    n->set_op_type("Identity");
    n->set_name("output");
    n->add_input(out);
    n->add_output(options.output);
  }
  addValueInfo(graph.add_output(), options.output, analysis.outputShape);
  if (options.softmax) {
    if (analysis.outputShape.size() != 1)
      throw Error("--softmax needs a model that outputs one score per class");
    auto* n = graph.add_node();
    n->set_op_type("Softmax");
    n->set_name("probabilities");
    n->add_input(options.output);
    n->add_output("probabilities");
    auto* a = n->add_attribute();
    a->set_name("axis");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(1);
    addValueInfo(graph.add_output(), "probabilities", analysis.outputShape);
  }

  try {
    onnx::checker::check_model(proto);
  } catch (const std::exception& e) {
    throw Error(std::string("the exported ONNX model fails onnx::checker: ") + e.what());
  }
  std::string bytes;
  if (!proto.SerializeToString(&bytes)) throw Error("ONNX export: serialisation failed");
  return bytes;
}

OnnxInfo inspectOnnx(const std::string& bytes) {
  onnx::ModelProto proto;
  if (!proto.ParseFromString(bytes)) throw Error("not an ONNX model");
  OnnxInfo info;
  info.irVersion = proto.ir_version();
  for (const auto& o : proto.opset_import())
    if (o.domain().empty()) info.opset = static_cast<int>(o.version());
  for (const auto& p : proto.metadata_props())
    info.metadata.emplace_back(p.key(), p.value());
  for (const auto& i : proto.graph().input())
    info.inputs.push_back(i.name());
  for (const auto& o : proto.graph().output())
    info.outputs.push_back(o.name());
  for (const auto& t : proto.graph().initializer())
    info.initializers.push_back(t.name());
  for (const auto& n : proto.graph().node())
    info.opTypes.push_back(n.op_type());
  return info;
}

}  // namespace netsmith::exporting
