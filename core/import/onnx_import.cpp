#include "import/onnx_import.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include <torch/torch.h>

#include "graph/graph_analysis.h"
#include "import/onnx_import_support.h"
#include "ops/shape_rules.h"

namespace netsmith::import {

namespace {

/// One ONNX node that cannot be imported as it is, and why.
struct Refusal : std::exception {
  explicit Refusal(std::string why) : reason(std::move(why)) {}
  const char* what() const noexcept override { return reason.c_str(); }
  std::string reason;
};

/// A node reading a value that no imported node computes (`value`).
struct Unfed : std::exception {
  explicit Unfed(std::string name) : value(std::move(name)) {}
  const char* what() const noexcept override { return value.c_str(); }
  std::string value;
};

/// A ConvTranspose node's settings, from its attributes and weights.
struct TransposedConv {
  std::array<std::int64_t, 2> kernel{}, strides{}, dilations{}, outputPadding{};
  std::vector<std::int64_t> pads;  ///< top, left, bottom, right
  std::int64_t groups = 1;
};

class Importer {
 public:
  Importer(const OnnxGraph& g, std::string source, const ImportOptions& o,
           const ops::OpRegistry& registry)
      : m_g(g), m_source(std::move(source)), m_options(o), m_registry(registry) {}

  ImportResult run();

 private:
  // Helpers over ONNX values.
  const OnnxTensor* constant(const std::string& value) const {
    auto it = m_g.constants.find(value);
    return it == m_g.constants.end() ? nullptr : it->second.get();
  }
  std::int64_t intAttr(const OnnxNode& n, const std::string& name, std::int64_t def) const {
    auto it = n.attributes.find(name);
    return it == n.attributes.end() ? def : it->second.i;
  }
  float floatAttr(const OnnxNode& n, const std::string& name, float def) const {
    auto it = n.attributes.find(name);
    return it == n.attributes.end() ? def : it->second.f;
  }
  std::vector<std::int64_t> intsAttr(const OnnxNode& n, const std::string& name) const {
    auto it = n.attributes.find(name);
    return it == n.attributes.end() ? std::vector<std::int64_t>{} : it->second.ints;
  }
  std::string stringAttr(const OnnxNode& n, const std::string& name) const {
    auto it = n.attributes.find(name);
    return it == n.attributes.end() ? std::string() : it->second.s;
  }
  /// The integers of a constant input or of an attribute (Squeeze's axes moved to an input).
  std::optional<std::vector<std::int64_t>> intsOf(const OnnxNode& n, std::size_t input,
                                                  const std::string& attr) const {
    if (n.inputs.size() > input && !n.inputs[input].empty()) {
      const auto* t = constant(n.inputs[input]);
      if (!t || t->isFloat || t->undecoded) return std::nullopt;
      return t->ints;
    }
    if (n.attributes.count(attr)) return intsAttr(n, attr);
    return std::vector<std::int64_t>{};
  }
  std::optional<float> scalarOf(const OnnxNode& n, std::size_t input) const {
    if (n.inputs.size() <= input || n.inputs[input].empty()) return std::nullopt;
    const auto* t = constant(n.inputs[input]);
    if (!t || t->numel() != 1) return std::nullopt;
    return t->isFloat ? t->floats[0] : float(t->ints[0]);
  }

  /// The per-sample shape of an imported value, for settings an ONNX node gives as sizes:
  /// the graph imported so far is analysed up to the node that computes it.
  Shape shapeOf(const std::string& value) const {
    const auto it = m_node.find(value);
    if (it == m_node.end()) throw Unfed{value};
    graph::ModelGraph sofar = m_model;
    sofar.output = it->second;
    const auto analysis = graph::analyseGraph(sofar, m_registry);
    const auto* info = analysis.find(it->second);
    if (!info || !info->valid) throw Refusal{"an input whose shape is not known"};
    return info->outputShape;
  }

  std::string uniqueId(const OnnxNode& n) {
    const std::string base = idFromName(n);
    if (m_usedIds.insert(base).second) return base;
    // Each base remembers the suffix it reached (every one below it is taken): 300,000 unnamed
    // Relu nodes take one try each, not k tries for the k-th.
    int& k = m_nextSuffix[base];
    k = std::max(k, 2);
    std::string id;
    do {
      id = base + "_" + std::to_string(k++);
    } while (!m_usedIds.insert(id).second);
    return id;
  }
  /// Adds a Netsmith node reading the given ONNX values (or Netsmith ids when `ids`).
  graph::Node& add(const OnnxNode& n, const std::string& op, Json params,
                   const std::vector<std::string>& inputs) {
    for (const auto& v : inputs)
      if (!m_node.count(v)) throw Unfed{v};
    graph::Node node;
    node.id = uniqueId(n);
    node.op = op;
    node.params = std::move(params);
    for (const auto& v : inputs)
      node.inputs.push_back(m_node.at(v));
    m_model.nodes.push_back(std::move(node));
    return m_model.nodes.back();
  }
  void produces(const std::string& value, const std::string& id) { m_node[value] = id; }
  void weight(const std::string& name, torch::Tensor t) {
    m_weights.emplace_back(name, std::move(t));
  }
  void note(const std::string& what) { ++m_notes[what]; }

  void convert(const OnnxNode& n, std::size_t index);
  void conv(const OnnxNode& n);
  void convTranspose(const OnnxNode& n);
  void resize(const OnnxNode& n);
  void batchNorm(const OnnxNode& n);
  void pool(const OnnxNode& n, bool isMax);
  void gemm(const OnnxNode& n);
  void matMul(const OnnxNode& n, std::size_t index);
  void mul(const OnnxNode& n);
  void clip(const OnnxNode& n);
  void flattenLike(const OnnxNode& n);
  /// Pad with zeros on H and W -> ZeroPad2d.
  void zeroPad(const OnnxNode& n);
  /// Sigmoid or HardSigmoid, deferred as the gate of a SiLU or Hardswish when one follows.
  void sigmoid(const OnnxNode& n);
  /// ReduceMean over H and W -> GlobalAvgPool (and a Flatten without keepdims).
  void reduceMean(const OnnxNode& n);
  void checkFlattenWidths(const graph::GraphAnalysis& analysis);

  /// ConvTranspose's kernel, strides, dilations, output_padding, pads and group, checked.
  TransposedConv transposedConvSettings(const OnnxNode& n, const OnnxTensor& w) const;
  /// Refuses an output_shape other than the size the pads and output_padding give.
  void checkTransposedOutputShape(const OnnxNode& n, const TransposedConv& c) const;
  /// Resize's or Upsample's mode ("nearest" or "linear"), refused unless nn.Upsample's.
  std::string resizeMode(const OnnxNode& n, bool legacy) const;
  /// The largest factor Netsmith's Upsample takes.
  std::int64_t upsampleMaxFactor() const;
  /// A Resize's or Upsample's four constant scales (N, C, H, W); empty when the sizes say.
  std::vector<float> resizeScales(const OnnxNode& n, bool legacy) const;
  /// The whole H and W factors of constant sizes (N, C, H, W) that scale the input by them.
  std::array<std::int64_t, 2> factorsFromSizes(const OnnxNode& n, bool legacy, std::int64_t most,
                                               const std::string& range);

  /// Refuses a graph of another opset, or of other than one input and one output.
  void checkGraphInterface() const;
  /// Adds the Input node, its C x H x W from the file or the options.
  void addInput();
  /// Counts each ONNX value's readers and notes which nodes read it.
  void indexReaders();
  /// Converts every ONNX node in file order, each refused one listed in m_refused.
  void convertNodes();
  /// The import's result from the checked graph; refuses a head of other than the classes given.
  ImportResult buildResult(const graph::GraphAnalysis& analysis);

  const OnnxGraph& m_g;
  std::string m_source;
  ImportOptions m_options;
  const ops::OpRegistry& m_registry;
  graph::ModelGraph m_model;
  checkpoint::NamedTensors m_weights;
  std::map<std::string, std::string> m_node;  // ONNX value -> Netsmith node id
  std::set<std::string> m_usedIds;
  std::map<std::string, int> m_nextSuffix;  // id base -> the next suffix to try
  std::map<std::string, int> m_notes;
  std::map<std::string, int> m_uses;                          // ONNX value -> nodes reading it
  std::map<std::string, std::vector<std::size_t>> m_readers;  // ONNX value -> node indices
  // A deferred Sigmoid / HardSigmoid (its output -> its input and the op x * it becomes).
  std::map<std::string, std::pair<std::string, std::string>> m_gateOf;
  std::set<std::size_t> m_consumed;                    // ONNX nodes folded into an earlier one
  std::map<std::string, std::int64_t> m_flattenWidth;  // Netsmith id -> width a Reshape fixed
  std::vector<std::string> m_refused;
};

void Importer::conv(const OnnxNode& n) {
  const auto* w = n.inputs.size() > 1 ? constant(n.inputs[1]) : nullptr;
  if (!w || w->dims.size() != 4) throw Refusal{"only 2-D convolutions with constant weights"};
  const auto* b = n.inputs.size() > 2 && !n.inputs[2].empty() ? constant(n.inputs[2]) : nullptr;
  if (n.inputs.size() > 2 && !n.inputs[2].empty() && !b)
    throw Refusal{"a bias that is not a constant"};
  const auto strides = intsAttr(n, "strides");
  const auto dil = intsAttr(n, "dilations");
  auto pads = intsAttr(n, "pads");
  const std::string autoPad = stringAttr(n, "auto_pad");
  const std::int64_t kh = w->dims[2], kw = w->dims[3];
  const std::int64_t sh = strides.size() == 2 ? strides[0] : 1,
                     sw = strides.size() == 2 ? strides[1] : 1;
  const std::int64_t dh = dil.size() == 2 ? dil[0] : 1, dw = dil.size() == 2 ? dil[1] : 1;
  if (autoPad == "VALID") {
    pads = {0, 0, 0, 0};
  } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    if (sh != 1 || sw != 1 || ((kh - 1) * dh) % 2 || ((kw - 1) * dw) % 2)
      throw Refusal{"auto_pad " + autoPad + " with a stride or an even kernel (asymmetric)"};
    pads = {(kh - 1) * dh / 2, (kw - 1) * dw / 2, (kh - 1) * dh / 2, (kw - 1) * dw / 2};
  } else if (!autoPad.empty() && autoPad != "NOTSET") {
    throw Refusal{"auto_pad " + autoPad};
  }
  if (pads.empty()) pads = {0, 0, 0, 0};
  if (pads.size() != 4) throw Refusal{"pads of other than 2-D (" + Json(pads).dump() + ")"};
  std::string input = n.inputs[0];
  if (pads[0] != pads[2] || pads[1] != pads[3]) {
    // Asymmetric (TensorFlow's SAME at a stride): zeros first, then an unpadded convolution.
    if (!m_node.count(input)) throw Unfed{input};
    graph::Node pad;
    pad.id = idFromName(n) + "_pad";
    for (int k = 2; m_usedIds.count(pad.id); ++k)
      pad.id = idFromName(n) + "_pad_" + std::to_string(k);
    m_usedIds.insert(pad.id);
    pad.op = "ZeroPad2d";
    pad.params = Json{{"left", pads[1]}, {"right", pads[3]}, {"top", pads[0]}, {"bottom", pads[2]}};
    pad.inputs = {m_node.at(input)};
    m_model.nodes.push_back(pad);
    input = n.outputs[0] + "#padded";
    produces(input, pad.id);
    pads = {0, 0, 0, 0};
    note("asymmetric Conv pads -> ZeroPad2d + Conv");
  }
  const std::int64_t groups = intAttr(n, "group", 1);
  Json p{{"out_channels", w->dims[0]},
         {"kernel_size", Json::array({kh, kw})},
         {"stride", Json::array({sh, sw})},
         {"padding", Json::array({pads[0], pads[1]})},
         {"dilation", Json::array({dh, dw})},
         {"groups", groups},
         {"bias", b != nullptr}};
  auto& node = add(n, "Conv2d", p, {input});
  weight(node.id + ".weight", toTensor(*w));
  if (b) weight(node.id + ".bias", toTensor(*b));
  produces(n.outputs[0], node.id);
}

TransposedConv Importer::transposedConvSettings(const OnnxNode& n, const OnnxTensor& w) const {
  // The weights are C_in x C_out/group x kH x kW, as in PyTorch.
  const std::array<std::int64_t, 2> kernel{w.dims[2], w.dims[3]};
  if (const auto k = intsAttr(n, "kernel_shape");
      !k.empty() && k != std::vector<std::int64_t>{kernel[0], kernel[1]}) {
    throw Refusal{"kernel_shape " + Json(k).dump() + " other than the weights' " +
                  Json(kernel).dump()};
  }
  const auto pairOf = [&](const std::string& attr, std::int64_t def) {
    const auto v = intsAttr(n, attr);
    if (v.empty()) return std::array<std::int64_t, 2>{def, def};
    if (v.size() != 2) throw Refusal{attr + " of other than 2-D (" + Json(v).dump() + ")"};
    return std::array<std::int64_t, 2>{v[0], v[1]};
  };
  const auto strides = pairOf("strides", 1);
  const auto dilations = pairOf("dilations", 1);
  const auto outputPadding = pairOf("output_padding", 0);
  auto pads = intsAttr(n, "pads");
  if (pads.empty()) pads = {0, 0, 0, 0};
  if (pads.size() != 4) throw Refusal{"pads of other than 2-D (" + Json(pads).dump() + ")"};
  if (pads[0] != pads[2] || pads[1] != pads[3])
    throw Refusal{"asymmetric pads " + Json(pads).dump() +
                  " (ConvTranspose2d takes the same off both sides)"};
  for (const auto v : pads)
    if (v < 0) throw Refusal{"negative pads " + Json(pads).dump()};
  const std::int64_t groups = intAttr(n, "group", 1);
  if (groups < 1 || groups > 65536) throw Refusal{"group " + std::to_string(groups)};
  // The weights' dims are the file's: bounded before they are multiplied (an empty weight
  // would let any dimension through the reader's size check).
  for (const auto d : w.dims)
    if (d < 1 || d > 65536) throw Refusal{"weights of shape " + Json(w.dims).dump()};
  if (w.dims[1] * groups > 65536)
    throw Refusal{"more than 65536 output channels (" + std::to_string(w.dims[1]) + " x group " +
                  std::to_string(groups) + ")"};
  return TransposedConv{kernel, strides, dilations, outputPadding, std::move(pads), groups};
}

void Importer::checkTransposedOutputShape(const OnnxNode& n, const TransposedConv& c) const {
  const auto& kernel = c.kernel;
  const auto& strides = c.strides;
  const auto& dilations = c.dilations;
  const auto& outputPadding = c.outputPadding;
  const auto& pads = c.pads;
  // output_shape overrides the pads (ONNX derives them from it): imported only when it is the
  // size the pads give, so that nothing is lost.
  if (const auto shape = intsAttr(n, "output_shape"); !shape.empty()) {
    if (shape.size() != 2 && shape.size() != 4)
      throw Refusal{"output_shape " + Json(shape).dump() + " that is not (H, W)"};
    // Numbers from the file are bounded before any arithmetic with them (ConvTranspose2d's own
    // limits, which the graph's check would apply later).
    for (const std::int64_t v : {kernel[0], kernel[1], strides[0], strides[1], pads[0], pads[1],
                                 outputPadding[0], outputPadding[1], dilations[0], dilations[1]}) {
      if (v < 0 || v > 1024) throw Refusal{"a kernel, stride, padding or dilation over 1024"};
    }
    const Shape in = shapeOf(n.inputs[0]);
    if (in.size() != 3) throw Refusal{"an input that is not an image"};
    std::vector<std::int64_t> computed;
    for (std::size_t a = 0; a < 2; ++a) {
      computed.push_back(ops::transposedConvOutputSize(in[1 + a], kernel[a], strides[a], pads[a],
                                                       outputPadding[a], dilations[a]));
    }
    const std::vector<std::int64_t> given(shape.end() - 2, shape.end());
    if (given != computed) {
      throw Refusal{"output_shape " + Json(given).dump() + " other than the " +
                    Json(computed).dump() +
                    " its pads and output_padding give (only those are imported)"};
    }
  }
}

void Importer::convTranspose(const OnnxNode& n) {
  const auto* w = n.inputs.size() > 1 ? constant(n.inputs[1]) : nullptr;
  if (!w || w->dims.size() != 4)
    throw Refusal{"only 2-D transposed convolutions with constant weights"};
  const auto* b = n.inputs.size() > 2 && !n.inputs[2].empty() ? constant(n.inputs[2]) : nullptr;
  if (n.inputs.size() > 2 && !n.inputs[2].empty() && !b)
    throw Refusal{"a bias that is not a constant"};
  const std::string autoPad = stringAttr(n, "auto_pad");
  if (!autoPad.empty() && autoPad != "NOTSET")
    throw Refusal{"auto_pad " + printable(autoPad) + " (only explicit pads)"};
  const TransposedConv c = transposedConvSettings(n, *w);
  checkTransposedOutputShape(n, c);
  // in_channels from the weights, so the graph's check names a weight that does not fit the input.
  Json p{{"in_channels", w->dims[0]},
         {"out_channels", w->dims[1] * c.groups},
         {"kernel_size", Json::array({c.kernel[0], c.kernel[1]})},
         {"stride", Json::array({c.strides[0], c.strides[1]})},
         {"padding", Json::array({c.pads[0], c.pads[1]})},
         {"output_padding", Json::array({c.outputPadding[0], c.outputPadding[1]})},
         {"dilation", Json::array({c.dilations[0], c.dilations[1]})},
         {"groups", c.groups},
         {"bias", b != nullptr}};
  auto& node = add(n, "ConvTranspose2d", p, {n.inputs[0]});
  weight(node.id + ".weight", toTensor(*w));
  if (b) weight(node.id + ".bias", toTensor(*b));
  produces(n.outputs[0], node.id);
}

std::string Importer::resizeMode(const OnnxNode& n, bool legacy) const {
  const std::string mode = n.attributes.count("mode") ? stringAttr(n, "mode") : "nearest";
  if (mode != "nearest" && mode != "linear")
    throw Refusal{"mode \"" + printable(mode) + "\" (only nearest and linear, as nn.Upsample)"};
  if (legacy && mode != "nearest") {
    throw Refusal{
        "mode \"linear\" of the Upsample op (asymmetric, unlike PyTorch's bilinear; "
        "export with Resize)"};
  }
  if (!legacy) {
    const std::string ctm = n.attributes.count("coordinate_transformation_mode")
                                ? stringAttr(n, "coordinate_transformation_mode")
                                : "half_pixel";
    if (mode == "nearest") {
      if (ctm != "asymmetric") {
        throw Refusal{"coordinate_transformation_mode \"" + printable(ctm) +
                      "\" with mode nearest (only \"asymmetric\" with nearest_mode \"floor\", "
                      "PyTorch's nearest)"};
      }
      const std::string nearest =
          n.attributes.count("nearest_mode") ? stringAttr(n, "nearest_mode") : "round_prefer_floor";
      if (nearest != "floor") {
        throw Refusal{"nearest_mode \"" + printable(nearest) +
                      "\" (only \"floor\", PyTorch's nearest)"};
      }
    } else if (ctm != "half_pixel" && ctm != "pytorch_half_pixel") {
      throw Refusal{"coordinate_transformation_mode \"" + printable(ctm) +
                    "\" with mode linear (only \"half_pixel\" or \"pytorch_half_pixel\", "
                    "PyTorch's bilinear with align_corners=False)"};
    }
    if (intAttr(n, "exclude_outside", 0) != 0) throw Refusal{"exclude_outside 1"};
  }
  return mode;
}

std::int64_t Importer::upsampleMaxFactor() const {
  const auto* def = m_registry.find("Upsample");
  if (!def) throw Refusal{"no such Netsmith op"};
  std::int64_t most = 1;
  for (const auto& spec : def->schema)
    if (spec.name == "scale_factor" && spec.max) most = static_cast<std::int64_t>(*spec.max);
  return most;
}

std::vector<float> Importer::resizeScales(const OnnxNode& n, bool legacy) const {
  // Resize: X, roi, scales, sizes (X, scales at opset 10); Upsample: X, scales.
  const std::size_t scalesAt = legacy || n.inputs.size() == 2 ? 1 : 2;
  const OnnxTensor* scales = nullptr;
  if (n.inputs.size() > scalesAt && !n.inputs[scalesAt].empty()) {
    scales = constant(n.inputs[scalesAt]);
    if (!scales) throw Refusal{"scales that are not a constant"};
  }
  std::vector<float> s;
  if (scales && scales->numel() > 0) {  // empty: the sizes say
    if (!scales->isFloat || scales->numel() != 4)
      throw Refusal{"scales that are not four floats (N, C, H, W)"};
    s = scales->floats;
  } else if (legacy && n.attributes.count("scales")) {
    s = n.attributes.at("scales").floats;
    if (s.size() != 4) throw Refusal{"scales that are not four floats (N, C, H, W)"};
  }
  return s;
}

/// The whole H and W factors of scales (N, C, H, W) that keep N and C, each from 1 to `most`.
std::array<std::int64_t, 2> factorsFromScales(const std::vector<float>& s, std::int64_t most,
                                              const std::string& range) {
  std::array<std::int64_t, 2> factor{1, 1};
  if (s[0] != 1.0f || s[1] != 1.0f)
    throw Refusal{"scales " + Json(s).dump() + " that resize the batch or the channels"};
  for (std::size_t a = 0; a < 2; ++a) {
    const float v = s[2 + a];
    if (!(v >= 1.0f && v <= static_cast<float>(most) && std::floor(v) == v)) {
      throw Refusal{"a scale of " + Json(double(v)).dump() + " on " + (a == 0 ? "H" : "W") +
                    " (only " + range + ")"};
    }
    factor[a] = static_cast<std::int64_t>(v);
  }
  return factor;
}

std::array<std::int64_t, 2> Importer::factorsFromSizes(const OnnxNode& n, bool legacy,
                                                       std::int64_t most,
                                                       const std::string& range) {
  std::array<std::int64_t, 2> factor{1, 1};
  if (legacy || n.inputs.size() < 4 || n.inputs[3].empty())
    throw Refusal{"neither constant scales nor sizes"};
  const auto* sizes = constant(n.inputs[3]);
  if (!sizes) throw Refusal{"sizes that are not a constant"};
  if (sizes->isFloat || sizes->undecoded || sizes->ints.size() != 4)
    throw Refusal{"sizes that are not four integers (N, C, H, W)"};
  const auto& v = sizes->ints;
  const Shape in = shapeOf(n.inputs[0]);
  if (in.size() != 3) throw Refusal{"an input that is not an image"};
  if (v[1] != in[0]) {
    throw Refusal{"sizes " + Json(v).dump() + " that change the channels of the input " +
                  formatShape(in)};
  }
  for (std::size_t a = 0; a < 2; ++a) {
    const std::int64_t out = v[2 + a], from = in[1 + a];
    if (out < from || out % from != 0 || out / from > most) {
      throw Refusal{"sizes " + Json(v).dump() + " that do not scale the input " + formatShape(in) +
                    " by " + range + " on " + (a == 0 ? "H" : "W")};
    }
    factor[a] = out / from;
  }
  note("Resize to constant sizes -> Upsample by whole factors");
  return factor;
}

void Importer::resize(const OnnxNode& n) {
  // Resize (and opset 9's Upsample) as nn.Upsample writes them: whole scales on H and W,
  // nearest as floor(x / scale), linear with half-pixel centres (align_corners=False).
  const bool legacy = n.opType == "Upsample";
  const std::string mode = resizeMode(n, legacy);
  // The largest factor Netsmith's Upsample takes.
  const std::int64_t most = upsampleMaxFactor();
  const std::string range = "whole numbers from 1 to " + std::to_string(most);

  const std::vector<float> s = resizeScales(n, legacy);
  const std::array<std::int64_t, 2> factor =
      !s.empty() ? factorsFromScales(s, most, range) : factorsFromSizes(n, legacy, most, range);
  auto& node = add(n, "Upsample",
                   Json{{"scale_factor", Json::array({factor[0], factor[1]})},
                        {"mode", mode == "linear" ? "bilinear" : "nearest"}},
                   {n.inputs[0]});
  produces(n.outputs[0], node.id);
}

void Importer::batchNorm(const OnnxNode& n) {
  if (n.inputs.size() < 5) throw Refusal{"fewer than five inputs"};
  if (n.outputs.size() > 1 && !n.outputs[1].empty()) throw Refusal{"training-mode outputs"};
  const OnnxTensor* t[4];
  for (int k = 0; k < 4; ++k) {
    t[k] = constant(n.inputs[std::size_t(k) + 1]);
    if (!t[k] || t[k]->dims.size() != 1) throw Refusal{"statistics that are not constant vectors"};
  }
  Json p{{"eps", floatAttr(n, "epsilon", 1e-5f)},
         {"momentum", 1.0 - double(floatAttr(n, "momentum", 0.9f))}};
  auto& node = add(n, "BatchNorm2d", p, {n.inputs[0]});
  weight(node.id + ".weight", toTensor(*t[0]));
  weight(node.id + ".bias", toTensor(*t[1]));
  weight(node.id + ".running_mean", toTensor(*t[2]));
  weight(node.id + ".running_var", toTensor(*t[3]));
  weight(node.id + ".num_batches_tracked", torch::zeros({}, torch::kInt64));
  produces(n.outputs[0], node.id);
}

void Importer::pool(const OnnxNode& n, bool isMax) {
  const auto k = intsAttr(n, "kernel_shape");
  if (k.size() != 2) throw Refusal{"only 2-D pooling"};
  auto strides = intsAttr(n, "strides");
  if (strides.empty()) strides = {1, 1};
  auto pads = intsAttr(n, "pads");
  if (pads.empty()) pads = {0, 0, 0, 0};
  const std::string autoPad = stringAttr(n, "auto_pad");
  if (!autoPad.empty() && autoPad != "NOTSET" && autoPad != "VALID")
    throw Refusal{"auto_pad " + autoPad};
  if (pads.size() != 4 || pads[0] != pads[2] || pads[1] != pads[3])
    throw Refusal{"asymmetric padding (pads " + Json(pads).dump() + ")"};
  if (n.outputs.size() > 1 && !n.outputs[1].empty()) throw Refusal{"the indices output"};
  Json p{{"kernel_size", Json::array({k[0], k[1]})},
         {"stride", Json::array({strides[0], strides[1]})},
         {"padding", Json::array({pads[0], pads[1]})},
         {"ceil_mode", intAttr(n, "ceil_mode", 0) != 0}};
  if (isMax) {
    const auto dil = intsAttr(n, "dilations");
    if (dil.size() == 2) p["dilation"] = Json::array({dil[0], dil[1]});
  } else {
    p["count_include_pad"] = intAttr(n, "count_include_pad", 0) != 0;
  }
  auto& node = add(n, isMax ? "MaxPool2d" : "AvgPool2d", p, {n.inputs[0]});
  produces(n.outputs[0], node.id);
}

void Importer::gemm(const OnnxNode& n) {
  const auto* w = n.inputs.size() > 1 ? constant(n.inputs[1]) : nullptr;
  if (!w || w->dims.size() != 2) throw Refusal{"weights that are not a constant matrix"};
  if (intAttr(n, "transA", 0) != 0) throw Refusal{"transA"};
  const float alpha = floatAttr(n, "alpha", 1.0f), beta = floatAttr(n, "beta", 1.0f);
  auto weightT = toTensor(*w);
  if (intAttr(n, "transB", 0) == 0) weightT = weightT.t().contiguous();
  weightT = weightT * alpha;
  const auto* c = n.inputs.size() > 2 && !n.inputs[2].empty() ? constant(n.inputs[2]) : nullptr;
  if (n.inputs.size() > 2 && !n.inputs[2].empty() && (!c || c->numel() != weightT.size(0)))
    throw Refusal{"a bias that is not a constant vector of the output's width"};
  auto& node = add(n, "Linear", Json{{"out_features", weightT.size(0)}, {"bias", c != nullptr}},
                   {n.inputs[0]});
  weight(node.id + ".weight", weightT);
  if (c) weight(node.id + ".bias", toTensor(*c).reshape({-1}) * beta);
  produces(n.outputs[0], node.id);
}

void Importer::matMul(const OnnxNode& n, std::size_t index) {
  const auto* w = n.inputs.size() > 1 ? constant(n.inputs[1]) : nullptr;
  if (!w || w->dims.size() != 2)
    throw Refusal{"a product with something other than a constant matrix"};
  const auto weightT = toTensor(*w).t().contiguous();  // [K, N] -> [N, K]
  // MatMul followed by Add of a constant vector: one Linear with a bias.
  const OnnxTensor* bias = nullptr;
  std::size_t addIndex = 0;
  // Its one reader (indexed before: no scan of the rest of the graph per MatMul).
  if (const auto& readers = m_readers[n.outputs[0]]; readers.size() == 1 && readers[0] > index) {
    const std::size_t k = readers[0];
    const auto& a = m_g.nodes[k];
    const int at = a.opType != "Add" || a.inputs.size() != 2
                       ? -1
                       : (a.inputs[0] == n.outputs[0] ? 1 : (a.inputs[1] == n.outputs[0] ? 0 : -1));
    const auto* c = at < 0 ? nullptr : constant(a.inputs[std::size_t(at)]);
    if (c && c->isFloat && c->numel() == weightT.size(0)) {
      bias = c;
      addIndex = k;
    }
  }
  auto& node = add(n, "Linear", Json{{"out_features", weightT.size(0)}, {"bias", bias != nullptr}},
                   {n.inputs[0]});
  weight(node.id + ".weight", weightT);
  produces(n.outputs[0], node.id);
  if (bias) {
    weight(node.id + ".bias", toTensor(*bias).reshape({-1}));
    m_consumed.insert(addIndex);
    produces(m_g.nodes[addIndex].outputs[0], node.id);
    note("MatMul + Add -> Linear");
  }
}

void Importer::mul(const OnnxNode& n) {
  if (n.inputs.size() != 2) throw Refusal{"other than two inputs"};
  // x * sigmoid(x) -> SiLU; x * hardsigmoid(x) -> Hardswish.
  for (int k = 0; k < 2; ++k) {
    const std::string& x = n.inputs[std::size_t(k)];
    const auto it = m_gateOf.find(n.inputs[std::size_t(1 - k)]);
    if (it != m_gateOf.end() && it->second.first == x) {
      auto& node = add(n, it->second.second, Json::object(), {x});
      produces(n.outputs[0], node.id);
      note(std::string(it->second.second == "SiLU" ? "x * Sigmoid(x) -> SiLU"
                                                   : "x * HardSigmoid(x) -> Hardswish"));
      return;
    }
  }
  for (const auto& in : n.inputs) {
    if (constant(in)) throw Refusal{"a constant factor (only tensors of the network multiply)"};
  }
  auto& node = add(n, "Mul", Json::object(), n.inputs);
  produces(n.outputs[0], node.id);
}

void Importer::clip(const OnnxNode& n) {
  // Bounds: inputs 1 and 2 from opset 11, attributes before.
  float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
  if (n.attributes.count("min")) lo = floatAttr(n, "min", lo);
  if (n.attributes.count("max")) hi = floatAttr(n, "max", hi);
  if (n.inputs.size() > 1 && !n.inputs[1].empty()) {
    const auto v = scalarOf(n, 1);
    if (!v) throw Refusal{"a lower bound that is not a constant"};
    lo = *v;
  }
  if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
    const auto v = scalarOf(n, 2);
    if (!v) throw Refusal{"an upper bound that is not a constant"};
    hi = *v;
  }
  std::string op;
  if (lo == 0.0f && hi == 6.0f) {
    op = "ReLU6";
    note("Clip(0, 6) -> ReLU6");
  } else if (lo == 0.0f && std::isinf(hi) && hi > 0) {
    op = "ReLU";
    note("Clip(0, inf) -> ReLU");
  } else {
    throw Refusal{"bounds other than (0, 6) or (0, inf): " + std::to_string(lo) + ", " +
                  std::to_string(hi)};
  }
  auto& node = add(n, op, Json::object(), {n.inputs[0]});
  produces(n.outputs[0], node.id);
}

void Importer::flattenLike(const OnnxNode& n) {
  // Flatten(axis 1), Reshape to (N, -1 or K), Squeeze of H and W: each one sample's values as a
  // vector, which is Netsmith's Flatten. A Reshape's fixed width is checked once shapes are known.
  std::int64_t width = -1;
  if (n.opType == "Flatten") {
    if (intAttr(n, "axis", 1) != 1) throw Refusal{"an axis other than 1"};
  } else if (n.opType == "Reshape") {
    const auto shape = intsOf(n, 1, "shape");
    if (!shape || shape->size() != 2 || !((*shape)[0] == 0 || (*shape)[0] == -1 || (*shape)[0] > 0))
      throw Refusal{"a target shape that is not a constant (N, features)"};
    if ((*shape)[0] == -1 && (*shape)[1] == -1) throw Refusal{"a target shape of (-1, -1)"};
    if ((*shape)[0] == -1) {
      width = (*shape)[1];
      if (width <= 0) throw Refusal{"a target shape of (-1, " + std::to_string(width) + ")"};
    } else if ((*shape)[1] > 0) {
      width = (*shape)[1];
    } else if ((*shape)[1] != -1) {
      throw Refusal{"a target shape with 0 features"};
    }
  } else {  // Squeeze
    auto axes = intsOf(n, 1, "axes");
    if (!axes) throw Refusal{"axes that are not constant"};
    std::vector<std::int64_t> a = *axes;
    for (auto& v : a)
      v = v < 0 ? v + 4 : v;
    std::sort(a.begin(), a.end());
    if (a != std::vector<std::int64_t>{2, 3}) throw Refusal{"axes other than H and W"};
  }
  auto& node = add(n, "Flatten", Json::object(), {n.inputs[0]});
  if (width > 0) m_flattenWidth[node.id] = width;
  produces(n.outputs[0], node.id);
}

void Importer::zeroPad(const OnnxNode& n) {
  const std::string mode = stringAttr(n, "mode");
  if (!mode.empty() && mode != "constant") throw Refusal{"mode \"" + mode + "\" (only zeros)"};
  const auto pads = intsOf(n, 1, "pads");
  if (!pads || pads->size() != 8) throw Refusal{"pads that are not constant for N, C, H and W"};
  const auto& v = *pads;
  if (v[0] || v[1] || v[4] || v[5]) throw Refusal{"padding of the batch or channels"};
  for (const auto x : v)
    if (x < 0) throw Refusal{"negative pads (a crop)"};
  if (const auto c = scalarOf(n, 2); c && *c != 0.0f) throw Refusal{"a value other than 0"};
  if (n.attributes.count("value") && floatAttr(n, "value", 0.0f) != 0.0f)
    throw Refusal{"a value other than 0"};
  auto& node =
      add(n, "ZeroPad2d", Json{{"left", v[3]}, {"right", v[7]}, {"top", v[2]}, {"bottom", v[6]}},
          {n.inputs[0]});
  produces(n.outputs[0], node.id);
}

void Importer::sigmoid(const OnnxNode& n) {
  const bool hard = n.opType == "HardSigmoid";
  if (hard) {
    const float alpha = floatAttr(n, "alpha", 0.2f), beta = floatAttr(n, "beta", 0.5f);
    if (std::abs(alpha - 1.0f / 6.0f) > 1e-6f || std::abs(beta - 0.5f) > 1e-6f)
      throw Refusal{"alpha and beta other than 1/6 and 1/2 (PyTorch's Hardsigmoid)"};
  }
  // Deferred when its only reader multiplies it by its own input (SiLU, Hardswish).
  const auto& readers = m_readers[n.outputs[0]];
  if (readers.size() == 1) {
    const auto& r = m_g.nodes[readers[0]];
    if (r.opType == "Mul" && r.inputs.size() == 2 &&
        (r.inputs[0] == n.inputs[0] || r.inputs[1] == n.inputs[0])) {
      m_gateOf[n.outputs[0]] = {n.inputs[0], hard ? "Hardswish" : "SiLU"};
      return;
    }
  }
  auto& node = add(n, hard ? "Hardsigmoid" : "Sigmoid", Json::object(), {n.inputs[0]});
  produces(n.outputs[0], node.id);
}

void Importer::reduceMean(const OnnxNode& n) {
  const auto axes = intsOf(n, 1, "axes");
  std::vector<std::int64_t> a = axes ? *axes : std::vector<std::int64_t>{};
  for (auto& v : a)
    v = v < 0 ? v + 4 : v;
  std::sort(a.begin(), a.end());
  if (a != std::vector<std::int64_t>{2, 3}) throw Refusal{"axes other than H and W"};
  auto& pool = add(n, "GlobalAvgPool", Json::object(), {n.inputs[0]});
  produces(n.outputs[0], pool.id);
  if (intAttr(n, "keepdims", 1) == 0) {
    const std::string poolId = pool.id;
    graph::Node flat;
    flat.id = poolId + "_flat";
    for (int k = 2; m_usedIds.count(flat.id); ++k)
      flat.id = poolId + "_flat_" + std::to_string(k);
    m_usedIds.insert(flat.id);
    flat.op = "Flatten";
    flat.inputs = {poolId};
    m_model.nodes.push_back(flat);
    produces(n.outputs[0], flat.id);
  }
  note("ReduceMean over H, W -> GlobalAvgPool");
}

void Importer::convert(const OnnxNode& n, std::size_t index) {
  if (!n.domain.empty() && n.domain != "ai.onnx")
    throw Refusal{"an op of domain \"" + n.domain + "\""};
  if (n.outputs.empty()) throw Refusal{"no output"};
  // Every activation input must come from an imported node (constants are read as settings).
  const auto& op = n.opType;
  if (op == "Conv") return conv(n);
  if (op == "ConvTranspose") return convTranspose(n);
  if (op == "Resize" || op == "Upsample") return resize(n);
  if (op == "BatchNormalization") return batchNorm(n);
  if (op == "MaxPool") return pool(n, true);
  if (op == "AveragePool") return pool(n, false);
  if (op == "Gemm") return gemm(n);
  if (op == "MatMul") return matMul(n, index);
  if (op == "Mul") return mul(n);
  if (op == "Clip") return clip(n);
  if (op == "Flatten" || op == "Reshape" || op == "Squeeze") return flattenLike(n);
  if (op == "Pad") return zeroPad(n);
  static const std::map<std::string, std::string> unary{{"Relu", "ReLU"},
                                                        {"Tanh", "Tanh"},
                                                        {"Identity", "Identity"},
                                                        {"HardSwish", "Hardswish"},
                                                        {"GlobalAveragePool", "GlobalAvgPool"}};
  if (auto it = unary.find(op); it != unary.end()) {
    auto& node = add(n, it->second, Json::object(), {n.inputs[0]});
    produces(n.outputs[0], node.id);
    return;
  }
  if (op == "Sigmoid" || op == "HardSigmoid") return sigmoid(n);
  if (op == "LeakyRelu") {
    auto& node =
        add(n, "LeakyReLU", Json{{"negative_slope", floatAttr(n, "alpha", 0.01f)}}, {n.inputs[0]});
    produces(n.outputs[0], node.id);
    return;
  }
  if (op == "Dropout") {
    float ratio = floatAttr(n, "ratio", 0.5f);
    if (const auto r = scalarOf(n, 1)) ratio = *r;
    auto& node = add(n, "Dropout", Json{{"p", ratio}}, {n.inputs[0]});
    produces(n.outputs[0], node.id);
    return;
  }
  if (op == "Softmax") {
    const auto axis = intAttr(n, "axis", m_g.opset >= 13 ? -1 : 1);
    if (axis != 1 && axis != -1) throw Refusal{"an axis other than the features"};
    auto& node = add(n, "Softmax", Json::object(), {n.inputs[0]});
    produces(n.outputs[0], node.id);
    return;
  }
  if (op == "ReduceMean") return reduceMean(n);
  if (op == "Add" || op == "Concat") {
    for (const auto& in : n.inputs) {
      if (constant(in)) throw Refusal{"a constant input (only tensors of the network add up)"};
    }
    if (op == "Concat" && intAttr(n, "axis", 1) != 1)
      throw Refusal{"an axis other than the channels"};
    auto& node = add(n, op, Json::object(), n.inputs);
    produces(n.outputs[0], node.id);
    return;
  }
  throw Refusal{"no such Netsmith op"};
}

void Importer::checkFlattenWidths(const graph::GraphAnalysis& analysis) {
  for (const auto& info : analysis.nodes) {
    auto it = m_flattenWidth.find(info.id);
    if (it == m_flattenWidth.end() || info.outputShape.empty()) continue;
    if (info.outputShape[0] != it->second) {
      throw Error(m_source + ": node \"" + info.id + "\" reshapes " +
                  formatShape(info.inputShapes.at(0)) + " to " + std::to_string(it->second) +
                  " features per sample, which is not a flatten; not imported");
    }
  }
}

void Importer::checkGraphInterface() const {
  if (m_g.opset < 11 || m_g.opset > 17) {
    throw Error(m_source + ": opset " + std::to_string(m_g.opset) +
                " is not imported (opsets 11 to 17 are); re-export the model with one of them");
  }
  if (m_g.inputs.size() != 1) {
    throw Error(m_source + ": the model has " + std::to_string(m_g.inputs.size()) +
                " inputs; an image classifier has one");
  }
  if (m_g.outputs.size() != 1) {
    throw Error(m_source + ": the model has " + std::to_string(m_g.outputs.size()) +
                " outputs; an image classifier has one");
  }
}

void Importer::addInput() {
  // The input: N x C x H x W, from the file or the options.
  const auto& in = m_g.inputs[0];
  if (m_options.input) {
    m_model.input = *m_options.input;
  } else if (in.dims.size() == 4 && in.dims[1] > 0 && in.dims[2] > 0 && in.dims[3] > 0) {
    m_model.input = {in.dims[1], in.dims[2], in.dims[3]};
  } else {
    throw Error(m_source + ": the input \"" + in.name + "\" has no fixed C x H x W (" +
                Json(in.dims).dump() + "); give it, e.g. --input 3x224x224");
  }
  graph::Node input;
  input.id = "input";
  input.op = "Input";
  m_model.nodes.push_back(input);
  m_usedIds.insert("input");
  m_node[in.name] = "input";
}

void Importer::indexReaders() {
  for (std::size_t k = 0; k < m_g.nodes.size(); ++k) {
    for (const auto& v : m_g.nodes[k].inputs) {
      ++m_uses[v];
      m_readers[v].push_back(k);
    }
  }
}

void Importer::convertNodes() {
  for (std::size_t k = 0; k < m_g.nodes.size(); ++k) {
    if (m_consumed.count(k)) continue;
    const auto& n = m_g.nodes[k];
    try {
      convert(n, k);
    } catch (const Refusal& r) {
      m_refused.push_back(n.label(k) + ": " + r.reason);
    } catch (const Error& e) {  // a constant it reads cannot be used (integer weights)
      m_refused.push_back(n.label(k) + ": " + e.what());
    } catch (const Unfed& u) {
      // After a refusal, its readers follow from it: only the refused node is listed.
      if (m_refused.empty())
        m_refused.push_back(n.label(k) + ": reads \"" + u.value + "\", which no node computes");
    }
  }
}

ImportResult Importer::buildResult(const graph::GraphAnalysis& analysis) {
  ImportResult r;
  noteFoldedBatchNorm(m_model, r.notes);
  r.model = m_model;
  r.weights = std::move(m_weights);
  for (const auto& [what, count] : m_notes)
    r.notes.push_back(what + " (" + std::to_string(count) + (count == 1 ? " node)" : " nodes)"));
  r.opset = m_g.opset;
  r.producer = m_g.producer;
  r.outputs = analysis.outputShape.empty() ? 0 : analysis.outputShape[0];
  readNetsmithMetadata(m_g.metadata, r);
  if (m_options.classes > 0 && r.outputs != m_options.classes) {
    throw Error(m_source + ": the model ends in " + std::to_string(r.outputs) +
                " outputs, not the " + std::to_string(m_options.classes) +
                " classes given; import it as it is and replace its head");
  }
  return r;
}

ImportResult Importer::run() {
  checkGraphInterface();
  addInput();
  indexReaders();
  convertNodes();
  if (!m_refused.empty()) throw UnsupportedOps(m_source, m_refused);
  const auto out = m_node.find(m_g.outputs[0]);
  if (out == m_node.end())
    throw Error(m_source + ": the output \"" + m_g.outputs[0] +
                "\" is not computed by an imported node");
  m_model.output = out->second;
  // Drop nodes that do not lead to the output (a deferred pattern's leftovers).
  const auto analysis = graph::analyseGraph(m_model, m_registry);
  if (!analysis.ok()) {
    throw Error(m_source +
                ": the imported graph does not check: " + formatProblems(analysis.problems));
  }
  checkFlattenWidths(analysis);
  graph::layoutRows(m_model, 190.0, 80.0);
  return buildResult(analysis);
}

}  // namespace

ImportResult importOnnxGraph(const OnnxGraph& graph, const std::string& source,
                             const ImportOptions& options, const ops::OpRegistry& registry) {
  return Importer(graph, source, options, registry).run();
}

ImportResult importOnnx(const std::string& path, const ImportOptions& options,
                        const ops::OpRegistry& registry) {
  return importOnnxGraph(readOnnxGraph(path), path, options, registry);
}

}  // namespace netsmith::import
