#include "export/onnx_export.h"

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/error.h"
#include "graph/graph_analysis.h"
#include "netsmith/version.h"
#include "task/detection_head.h"

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

/// The metadata that says what the detection decoder's outputs hold.
std::string decoderDescription(const OnnxOptions& options) {
  const auto& d = options.decoder;
  std::string text =
      "boxes: N x L x 4, per location [x0, y0, x1, y1] in input pixels, clipped to the input "
      "(L = H x W locations of the head's map, row-major); scores: N x K x L, sqrt(sigmoid(class) "
      "x sigmoid(centre-ness))";
  if (d.nms) {
    text +=
        "; selected: num x 3 (batch, class, box index) from class-aware NonMaxSuppression at "
        "IoU " +
        ops::pyNumber(d.nmsIou) + " of the scores >= " + ops::pyNumber(d.scoreThreshold) +
        ", at most " + std::to_string(d.maxPerClass) +
        " per class and image: take boxes[batch, index] and scores[batch, class, index] and "
        "keep the 100 best per image";
  }
  return text;
}

/// The value the last node added produces gets the name `name` (a graph output's).
void nameLastOutput(onnx::GraphProto& graph, const std::string& name) {
  graph.mutable_node(graph.node_size() - 1)->set_output(0, name);
}

/// The detection head's map, as the decoder reads it.
struct DecoderMap {
  std::int64_t k = 0;                ///< classes
  std::int64_t stride = 0;           ///< input pixels per map cell
  std::int64_t h = 0, w = 0, l = 0;  ///< rows, columns and locations (h x w) of the map
};

/// Checks that the model's output is a detection head the decoder can follow, its outputs'
/// names free; throws netsmith::Error saying why not.
DecoderMap checkDecoderHead(const onnx::GraphProto& graph, const OnnxOptions& options,
                            const Shape& outputShape, std::int64_t inputHeight,
                            std::int64_t inputWidth) {
  const auto& d = options.decoder;
  if (outputShape.size() != 3 || outputShape[0] < 6) {
    throw Error(
        "ONNX export: the detection decoder needs a detection head, a map of K + 5 "
        "channels (K >= 1) x H x W; the model outputs " +
        formatShape(outputShape));
  }
  const std::int64_t k = d.classes > 0 ? d.classes : outputShape[0] - 5;
  std::int64_t stride = 0;
  if (const auto problem =
          task::detectionOutputProblem(outputShape, k, inputHeight, inputWidth, &stride)) {
    // The problem is a phrase to follow "the model" or, about the map, a clause of its own.
    throw Error("ONNX export: the detection decoder needs a detection head; " +
                (problem->rfind("a ", 0) == 0 ? *problem : "the model " + *problem));
  }
  if (d.stride > 0 && d.stride != stride) {
    throw Error("ONNX export: the detection decoder was given stride " + std::to_string(d.stride) +
                ", but the model's " + formatShape(outputShape) + " map of its " +
                std::to_string(inputHeight) + "x" + std::to_string(inputWidth) +
                " input has stride " + std::to_string(stride));
  }
  const std::int64_t h = outputShape[1], w = outputShape[2], l = h * w;
  // The decoding clamps a raw distance at 10 (exp(10) x stride pixels) before exp; a distance
  // that long reaches past the input from every location of a map of at most 22026 cells a
  // side, and the box is clipped to the input, so the graph leaves the clamp out (Min and Clip
  // do not run in OpenCV DNN 4.6) and gives the same boxes.
  if (h > 22026 || w > 22026)
    throw Error(
        "ONNX export: the detection decoder needs a map of at most 22026x22026 cells; "
        "the model's is " +
        std::to_string(h) + "x" + std::to_string(w));
  for (const auto& n : graph.node())
    for (const auto& o : n.output())
      if (o == "boxes" || o == "scores" || o == "selected")
        throw Error("node \"" + o + "\": the detection decoder's output \"" + o +
                    "\" has that name; rename the node to export with the decoder");
  return DecoderMap{k, stride, h, w, l};
}

/// A Slice node of the head's channels [from, to): head[:, from:to].
std::string headChannels(ops::OnnxEmitter& e, const std::string& head, std::int64_t from,
                         std::int64_t to) {
  return e.node("Slice", {head, e.constantInts({from}), e.constantInts({to}), e.constantInts({1})});
}

/// Appends the decoder's "scores" value: N x K x L, sqrt(sigmoid(class) x sigmoid(centre-ness)).
void appendDecoderScores(onnx::GraphProto& graph, ProtoEmitter& emitter, const std::string& head,
                         const DecoderMap& map) {
  ops::OnnxEmitter& e = emitter;  // the interface's default arguments
  const std::int64_t k = map.k;
  const auto axis1 = std::vector<ops::OnnxAttr>{ops::OnnxAttr::integer("axis", 1)};
  emitter.setNode("decoder/scores");
  const auto classProb = e.node("Sigmoid", {headChannels(e, head, 0, k)});
  auto centreProb = e.node("Sigmoid", {headChannels(e, head, k + 4, k + 5)});
  // OpenCV DNN 4.6 multiplies two computed tensors only of one shape (a 1-channel one would
  // not broadcast over the classes): the centre-ness goes once per class.
  if (k > 1)
    centreProb = e.node("Concat", std::vector<std::string>(std::size_t(k), centreProb), axis1);
  const auto score = e.node("Sqrt", {e.node("Mul", {classProb, centreProb})});
  e.node("Reshape", {score, e.constantInts({-1, k, map.l})});
  nameLastOutput(graph, "scores");
}

/// Appends the decoder's "boxes" value: N x L x 4, [x0, y0, x1, y1] clipped to the input.
void appendDecoderBoxes(onnx::GraphProto& graph, ProtoEmitter& emitter, const std::string& head,
                        const DecoderMap& map, std::int64_t inputHeight, std::int64_t inputWidth) {
  ops::OnnxEmitter& e = emitter;  // the interface's default arguments
  const std::int64_t k = map.k, stride = map.stride, h = map.h, w = map.w, l = map.l;
  const auto axis1 = std::vector<ops::OnnxAttr>{ops::OnnxAttr::integer("axis", 1)};
  emitter.setNode("decoder/boxes");
  // Each location's point: channel 0 (j + 0.5) x stride, channel 1 (i + 0.5) x stride.
  std::vector<float> points(std::size_t(2 * l));
  for (std::int64_t i = 0; i < h; ++i) {
    for (std::int64_t j = 0; j < w; ++j) {
      points[std::size_t(i * w + j)] = float((double(j) + 0.5) * double(stride));
      points[std::size_t(l + i * w + j)] = float((double(i) + 0.5) * double(stride));
    }
  }
  const auto point = e.constant(points, {2, h, w});
  const auto distances = [&](std::int64_t from) {  // (l, t) or (r, b) in pixels
    return e.node("Mul", {e.node("Exp", {headChannels(e, head, from, from + 2)}),
                          e.constant({float(stride)})});
  };
  // clamp(v, 0, limit) = limit - relu(limit - relu(v)): exact at and beyond both ends (an
  // infinite distance included), within half a unit in the last place of `limit` between.
  const auto limit = inputWidth == inputHeight
                         ? e.constant({float(inputWidth)})
                         : e.constant({float(inputWidth), float(inputHeight)}, {2, 1, 1});
  const auto clip = [&](const std::string& v) {
    const auto room = e.node("Sub", {limit, e.node("Relu", {v})});
    return e.node("Sub", {limit, e.node("Relu", {room})});
  };
  const auto topLeft = clip(e.node("Sub", {point, distances(k)}));          // x0, y0
  const auto bottomRight = clip(e.node("Add", {point, distances(k + 2)}));  // x1, y1
  const auto corners = e.node("Concat", {topLeft, bottomRight}, axis1);     // N x 4 x H x W
  const auto rows = e.node("Reshape", {corners, e.constantInts({-1, 4, l})});
  e.node("Transpose", {rows}, {ops::OnnxAttr::integers("perm", {0, 2, 1})});
  nameLastOutput(graph, "boxes");
}

/// Appends the decoder's class-aware NonMaxSuppression and its "selected" output.
void appendDecoderNms(onnx::GraphProto& graph, ProtoEmitter& emitter,
                      const OnnxOptions::DetectionDecoder& d) {
  ops::OnnxEmitter& e = emitter;  // the interface's default arguments
  // ONNX's NonMaxSuppression: boxes [N, L, 4], scores [N, K, L]; with center_point_box 0 a box
  // is any two opposite corners, so [x0, y0, x1, y1] gives the IoU of [y0, x0, y1, x1].
  // OpenCV DNN 4.6 has no such layer: this node is checked by onnx::checker alone.
  emitter.setNode("decoder/nms");
  auto* most = graph.add_initializer();  // a scalar, as the operator's inputs are
  most->set_name("decoder/nms_max_output_boxes_per_class");
  most->set_data_type(onnx::TensorProto::INT64);
  most->add_int64_data(d.maxPerClass);
  const std::string mostName = most->name();
  const auto iou = e.constant({float(d.nmsIou)});
  const auto threshold = e.constant({float(d.scoreThreshold)});
  e.node("NonMaxSuppression", {"boxes", "scores", mostName, iou, threshold},
         {ops::OnnxAttr::integer("center_point_box", 0)});
  nameLastOutput(graph, "selected");
  auto* selected = graph.add_output();
  selected->set_name("selected");
  auto* type = selected->mutable_type()->mutable_tensor_type();
  type->set_elem_type(onnx::TensorProto::INT64);
  type->mutable_shape()->add_dim()->set_dim_param("selected");
  type->mutable_shape()->add_dim()->set_dim_value(3);
}

/// The detection decoder (OnnxOptions::DetectionDecoder) after the head `options.output`, an
/// N x (K + 5) x H x W map (`outputShape` per sample) of an `inputHeight` x `inputWidth` input.
/// Only ops OpenCV DNN 4.6 runs, in the forms it reads: Min, Max and Clip with bound inputs
/// are not among them (it reads Clip's attributes of opset < 11 only, and Min and Max of two
/// computed tensors only), and it adds or multiplies a constant only without a batch
/// dimension (C x H x W, C x 1 x 1 or a scalar) and two computed tensors only of one shape.
void appendDetectionDecoder(onnx::GraphProto& graph, ProtoEmitter& emitter,
                            const OnnxOptions& options, const Shape& outputShape,
                            std::int64_t inputHeight, std::int64_t inputWidth) {
  const auto map = checkDecoderHead(graph, options, outputShape, inputHeight, inputWidth);
  const std::string& head = options.output;
  appendDecoderScores(graph, emitter, head, map);
  appendDecoderBoxes(graph, emitter, head, map, inputHeight, inputWidth);
  addValueInfo(graph.add_output(), "boxes", Shape{map.l, 4});
  addValueInfo(graph.add_output(), "scores", Shape{map.k, map.l});
  if (!options.decoder.nms) return;
  appendDecoderNms(graph, emitter, options.decoder);
}

/// Sets the model's IR version, producer, opset and metadata_props.
void writeModelHeader(onnx::ModelProto& proto, const ExportModel& model,
                      const OnnxOptions& options) {
  proto.set_ir_version(irVersionFor(options.opset));
  proto.set_producer_name("Netsmith");
  proto.set_producer_version(NETSMITH_VERSION);
  proto.set_model_version(1);
  auto* opset = proto.add_opset_import();
  opset->set_domain("");
  opset->set_version(options.opset);
  auto metadata = model.metadata();
  metadata.insert(metadata.end(), options.metadata.begin(), options.metadata.end());
  if (options.decoder.enabled) metadata.emplace_back("decoder", decoderDescription(options));
  for (const auto& [key, value] : metadata) {
    auto* p = proto.add_metadata_props();
    p->set_key(key);
    p->set_value(value);
  }
}

/// Emits every node's ONNX nodes in topological order; returns the model output's value name.
std::string emitModelNodes(ProtoEmitter& emitter, const ExportModel& model,
                           const graph::GraphAnalysis& analysis, const OnnxOptions& options) {
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
  return valueOf.at(analysis.outputId);
}

/// Gives the value `out` the output's name `output`, in the node that produces it and in those
/// that read it (an Identity makes it when no node does).
void nameModelOutput(onnx::GraphProto& graph, const std::string& out, const std::string& output) {
  bool renamed = false;
  for (auto& n : *graph.mutable_node()) {
    for (auto& o : *n.mutable_output()) {
      if (o == out) {
        o = output;
        renamed = true;
      }
    }
    for (auto& i : *n.mutable_input())
      if (i == out) i = output;
  }
  if (!renamed) {  // the model is its input: an Identity makes the output
    auto* n = graph.add_node();
    n->set_op_type("Identity");
    n->set_name("output");
    n->add_input(out);
    n->add_output(output);
  }
}

/// Renames the output `output`_unscaled and appends a Div by the "temperature" initializer.
void appendTemperatureScaling(onnx::GraphProto& graph, const std::string& output,
                              double temperature) {
  // Temperature scaling: the output is the model's over T (before the optional softmax).
  const std::string unscaled = output + "_unscaled";
  for (auto& n : *graph.mutable_node())
    for (auto& o : *n.mutable_output())
      if (o == output) o = unscaled;
  auto* t = graph.add_initializer();
  t->set_name("temperature");
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_float_data(static_cast<float>(temperature));
  auto* n = graph.add_node();
  n->set_op_type("Div");
  n->set_name("temperature_scaling");
  n->add_input(unscaled);
  n->add_input("temperature");
  n->add_output(output);
}

/// Appends the "probabilities" output, a Softmax of the output (one score per class).
void appendSoftmax(onnx::GraphProto& graph, const std::string& output, const Shape& outputShape) {
  if (outputShape.size() != 1)
    throw Error("--softmax needs a model that outputs one score per class");
  auto* n = graph.add_node();
  n->set_op_type("Softmax");
  n->set_name("probabilities");
  n->add_input(output);
  n->add_output("probabilities");
  auto* a = n->add_attribute();
  a->set_name("axis");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(1);
  addValueInfo(graph.add_output(), "probabilities", outputShape);
}

/// The model's bytes once onnx::checker passes it.
std::string checkedBytes(const onnx::ModelProto& proto) {
  try {
    onnx::checker::check_model(proto);
  } catch (const std::exception& e) {
    throw Error(std::string("the exported ONNX model fails onnx::checker: ") + e.what());
  }
  std::string bytes;
  if (!proto.SerializeToString(&bytes)) throw Error("ONNX export: serialisation failed");
  return bytes;
}

}  // namespace

std::string buildOnnx(const ExportModel& model, const OnnxOptions& options) {
  if (options.opset < 11 || options.opset > 17)
    throw Error("ONNX opset " + std::to_string(options.opset) + " is not supported; use 11 to 17");
  const auto analysis = graph::analyseGraph(model.project.model, *model.registry);
  if (!analysis.ok()) throw Error("the model has problems; fix them before exporting");

  onnx::ModelProto proto;
  writeModelHeader(proto, model, options);
  auto& graph = *proto.mutable_graph();
  graph.set_name(model.project.name.empty() ? "netsmith" : model.project.name);
  const auto& in = model.project.model.input;
  addValueInfo(graph.add_input(), "input", Shape{in.channels, in.height, in.width});

  ProtoEmitter emitter(graph, options.opset, model.weights);
  // Name the output as the task says (classification: "logits"): rename the value in the node that
  // produces it.
  const std::string out = emitModelNodes(emitter, model, analysis, options);
  nameModelOutput(graph, out, options.output);
  if (model.temperature != 1) appendTemperatureScaling(graph, options.output, model.temperature);
  addValueInfo(graph.add_output(), options.output, analysis.outputShape);
  if (options.softmax) appendSoftmax(graph, options.output, analysis.outputShape);
  if (options.decoder.enabled)
    appendDetectionDecoder(graph, emitter, options, analysis.outputShape, in.height, in.width);
  return checkedBytes(proto);
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
