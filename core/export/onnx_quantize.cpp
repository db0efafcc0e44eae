#include "export/onnx_quantize.h"

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <set>

#include "common/error.h"

namespace netsmith::exporting {

namespace {

const std::set<std::string> kWeighted{"Conv", "ConvTranspose", "Gemm"};
/// Nodes whose output may be quantised: integer kernels exist for them, or Q/DQ passes
/// through them unchanged.
const std::set<std::string> kQuantisable{
    "Conv",        "ConvTranspose",     "Gemm", "Relu",   "LeakyRelu",   "MaxPool",
    "AveragePool", "GlobalAveragePool", "Add",  "Concat", "Flatten",     "Reshape",
    "Resize",      "Sigmoid",           "Mul",  "Clip",   "HardSigmoid", "HardSwish",
    "Transpose"};

std::vector<float> floatsOf(const onnx::TensorProto& t) {
  std::int64_t n = 1;
  for (const auto d : t.dims())
    n *= d;
  std::vector<float> v(static_cast<std::size_t>(n));
  if (t.data_type() != onnx::TensorProto::FLOAT)
    throw Error("int8 export: \"" + t.name() + "\" is not float");
  if (t.has_raw_data()) {
    if (t.raw_data().size() != v.size() * sizeof(float))
      throw Error("int8 export: \"" + t.name() + "\" has the wrong size");
    std::memcpy(v.data(), t.raw_data().data(), t.raw_data().size());
  } else {
    if (t.float_data_size() != n)
      throw Error("int8 export: \"" + t.name() + "\" has the wrong size");
    std::copy(t.float_data().begin(), t.float_data().end(), v.begin());
  }
  return v;
}

void setFloats(onnx::TensorProto* t, const std::string& name, const std::vector<float>& v,
               const std::vector<std::int64_t>& dims) {
  t->Clear();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (const auto d : dims)
    t->add_dims(d);
  t->set_raw_data(std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float)));
}

template <typename T>
void setRaw(onnx::TensorProto* t, const std::string& name, int type, const std::vector<T>& v,
            const std::vector<std::int64_t>& dims) {
  t->Clear();
  t->set_name(name);
  t->set_data_type(type);
  for (const auto d : dims)
    t->add_dims(d);
  t->set_raw_data(std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T)));
}

onnx::ModelProto parseModel(const std::string& bytes) {
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) throw Error("int8 export: not an ONNX model");
  return model;
}

std::string serialise(const onnx::ModelProto& model) {
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    throw Error(std::string("int8 export: the model fails onnx::checker: ") + e.what());
  }
  std::string bytes;
  if (!model.SerializeToString(&bytes)) throw Error("int8 export: serialisation failed");
  return bytes;
}

onnx::TensorProto* findInitializer(onnx::GraphProto& g, const std::string& name) {
  for (auto& t : *g.mutable_initializer())
    if (t.name() == name) return &t;
  return nullptr;
}

/// How many nodes read each value (graph outputs count as readers).
std::map<std::string, int> readers(const onnx::GraphProto& g) {
  std::map<std::string, int> n;
  for (const auto& node : g.node())
    for (const auto& i : node.input())
      ++n[i];
  for (const auto& o : g.output())
    ++n[o.name()];
  return n;
}

/// Folds every BatchNormalization whose input is a Conv's output read by it alone into the Conv.
void foldBatchNorms(onnx::GraphProto& g) {
  auto count = readers(g);
  std::map<std::string, int> producer;
  for (int i = 0; i < g.node_size(); ++i)
    for (const auto& o : g.node(i).output())
      producer[o] = i;
  std::set<int> removed;
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& bn = g.node(i);
    if (bn.op_type() != "BatchNormalization" || bn.input_size() != 5) continue;
    const auto p = producer.find(bn.input(0));
    if (p == producer.end() || count[bn.input(0)] != 1) continue;
    auto& conv = *g.mutable_node(p->second);
    if (conv.op_type() != "Conv" || conv.input_size() < 2) continue;
    auto* w = findInitializer(g, conv.input(1));
    const onnx::TensorProto* params[4];
    bool ok = w != nullptr;
    for (int k = 0; k < 4 && ok; ++k) {
      params[k] = findInitializer(g, bn.input(k + 1));
      ok = params[k] != nullptr;
    }
    if (!ok) continue;
    float eps = 1e-5f;
    for (const auto& a : bn.attribute())
      if (a.name() == "epsilon") eps = a.f();
    const auto gamma = floatsOf(*params[0]), beta = floatsOf(*params[1]);
    const auto mean = floatsOf(*params[2]), var = floatsOf(*params[3]);
    auto weights = floatsOf(*w);
    const std::size_t c = gamma.size();
    if (c == 0 || weights.size() % c != 0 || w->dims(0) != std::int64_t(c)) continue;
    std::vector<float> bias(c, 0.f);
    if (conv.input_size() > 2 && !conv.input(2).empty()) {
      const auto* b = findInitializer(g, conv.input(2));
      if (!b) continue;
      bias = floatsOf(*b);
    }
    const std::size_t per = weights.size() / c;
    for (std::size_t k = 0; k < c; ++k) {
      const double s = double(gamma[k]) / std::sqrt(double(var[k]) + double(eps));
      for (std::size_t j = 0; j < per; ++j)
        weights[k * per + j] = float(double(weights[k * per + j]) * s);
      bias[k] = float((double(bias[k]) - double(mean[k])) * s + double(beta[k]));
    }
    const std::vector<std::int64_t> dims(w->dims().begin(), w->dims().end());
    const std::string wName = conv.name() + "/folded_weight", bName = conv.name() + "/folded_bias";
    setFloats(g.add_initializer(), wName, weights, dims);
    setFloats(g.add_initializer(), bName, bias, {std::int64_t(c)});
    conv.set_input(1, wName);
    if (conv.input_size() > 2)
      conv.set_input(2, bName);
    else
      conv.add_input(bName);
    conv.set_output(0, bn.output(0));
    removed.insert(i);
  }
  if (removed.empty()) return;
  google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
  for (int i = 0; i < g.node_size(); ++i)
    if (!removed.count(i)) *kept.Add() = g.node(i);
  g.mutable_node()->Swap(&kept);
  // Initializers nothing reads any more (the BN's and the unfolded weights) go.
  count = readers(g);
  google::protobuf::RepeatedPtrField<onnx::TensorProto> used;
  for (const auto& t : g.initializer())
    if (count[t.name()] > 0) *used.Add() = t;
  g.mutable_initializer()->Swap(&used);
}

/// The values to quantise (see the header), in graph order.
std::vector<std::string> valuesToQuantise(const onnx::GraphProto& g) {
  std::set<std::string> initializers;
  for (const auto& t : g.initializer())
    initializers.insert(t.name());
  // Values from which a weighted node's data input is reached through quantisable nodes.
  std::set<std::string> feeding;
  for (int i = g.node_size() - 1; i >= 0; --i) {
    const auto& n = g.node(i);
    bool outputFeeds = false;
    for (const auto& o : n.output())
      outputFeeds = outputFeeds || feeding.count(o);
    if (kWeighted.count(n.op_type())) {
      if (n.input_size() > 0) feeding.insert(n.input(0));
    } else if (outputFeeds && kQuantisable.count(n.op_type())) {
      for (const auto& in : n.input())
        if (!initializers.count(in)) feeding.insert(in);
    }
  }
  std::set<std::string> graphOutputs;
  for (const auto& o : g.output())
    graphOutputs.insert(o.name());
  // A value read only by a Relu whose own output is quantised gets no pair of its own: ONNX
  // Runtime then folds the Relu into the node before it (a QLinearConv or QLinearAdd with the
  // Relu's output range) instead of requantising between them.
  std::map<std::string, std::vector<const onnx::NodeProto*>> consumers;
  for (const auto& n : g.node())
    for (const auto& in : n.input())
      consumers[in].push_back(&n);
  const auto readByReluOnly = [&](const std::string& v) {
    const auto it = consumers.find(v);
    if (it == consumers.end() || it->second.size() != 1) return false;
    const auto& relu = *it->second.front();
    return relu.op_type() == "Relu" && relu.output_size() == 1 && feeding.count(relu.output(0)) &&
           !graphOutputs.count(relu.output(0));
  };
  std::vector<std::string> out;
  for (const auto& in : g.input())
    if (feeding.count(in.name()) && !initializers.count(in.name())) out.push_back(in.name());
  for (const auto& n : g.node()) {
    if (!kQuantisable.count(n.op_type()) || n.output_size() != 1) continue;
    const auto& o = n.output(0);
    if (feeding.count(o) && !graphOutputs.count(o) && !readByReluOnly(o)) out.push_back(o);
  }
  return out;
}

void addFloatOutput(onnx::GraphProto& g, const std::string& name) {
  auto* v = g.add_output();
  v->set_name(name);
  v->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
}

onnx::NodeProto* addNode(google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes,
                         const std::string& op, const std::string& name,
                         const std::vector<std::string>& inputs, const std::string& output,
                         int axis = -1) {
  auto* n = nodes.Add();
  n->set_op_type(op);
  n->set_name(name);
  for (const auto& i : inputs)
    n->add_input(i);
  n->add_output(output);
  if (axis >= 0) {
    auto* a = n->add_attribute();
    a->set_name("axis");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(axis);
  }
  return n;
}

/// The weights' levels either side of 0: 7 bits, not 8. An x86 CPU without VNNI (AVX2 only)
/// runs uint8 x int8 products with an instruction that adds each pair of them in 16 bits; with
/// activations up to 255 and weights up to 63 a pair stays under 32767, where full-range
/// weights saturate it (ONNX Runtime's own tools call this reduce_range). The file then gives
/// the same answer on every CPU.
constexpr float kWeightLevels = 63.f;

/// The int8 weights of one weighted node, per output channel (axis 0) or per tensor.
struct QuantisedWeight {
  std::vector<std::int8_t> values;
  std::vector<float> scales;
};

QuantisedWeight quantiseWeight(const std::vector<float>& w, std::size_t channels) {
  QuantisedWeight q;
  q.values.resize(w.size());
  const std::size_t per = w.size() / channels;
  for (std::size_t c = 0; c < channels; ++c) {
    float most = 0;
    for (std::size_t j = 0; j < per; ++j)
      most = std::max(most, std::abs(w[c * per + j]));
    const float scale = most > 0 ? most / kWeightLevels : 1.f;
    q.scales.push_back(scale);
    for (std::size_t j = 0; j < per; ++j) {
      const float v = std::nearbyint(w[c * per + j] / scale);
      q.values[c * per + j] =
          static_cast<std::int8_t>(std::clamp(v, -kWeightLevels, kWeightLevels));
    }
  }
  return q;
}

/// Replaces weighted node `n`'s float weight with int8 values per output channel (ConvTranspose:
/// per tensor) and a DequantizeLinear, and its bias with int32 values at the input's scale
/// (`inScale`) times the weight's; the DequantizeLinear nodes go into `nodes`.
void quantiseWeights(onnx::GraphProto& g,
                     google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes, onnx::NodeProto& n,
                     float inScale) {
  // Weights int8 per output channel (ConvTranspose: per tensor), the bias int32 at the
  // input's scale times the weight's.
  auto* w = findInitializer(g, n.input(1));
  const auto wf = floatsOf(*w);
  const std::vector<std::int64_t> dims(w->dims().begin(), w->dims().end());
  bool transB = false;
  for (const auto& a : n.attribute())
    if (a.name() == "transB") transB = a.i() != 0;
  const bool perChannel = n.op_type() == "Conv" || (n.op_type() == "Gemm" && transB);
  const std::size_t channels = perChannel ? std::size_t(dims.at(0)) : 1;
  const auto q = quantiseWeight(wf, channels);
  const std::string base = n.name() + "/weight";
  setRaw(g.add_initializer(), base + "_int8", onnx::TensorProto::INT8, q.values, dims);
  setFloats(
      g.add_initializer(), base + "_scale", q.scales,
      perChannel ? std::vector<std::int64_t>{std::int64_t(channels)} : std::vector<std::int64_t>{});
  setRaw(
      g.add_initializer(), base + "_zero_point", onnx::TensorProto::INT8,
      std::vector<std::int8_t>(channels, 0),
      perChannel ? std::vector<std::int64_t>{std::int64_t(channels)} : std::vector<std::int64_t>{});
  addNode(nodes, "DequantizeLinear", base + "_dequantize",
          {base + "_int8", base + "_scale", base + "_zero_point"}, base + "_dequantized",
          perChannel ? 0 : -1);
  n.set_input(1, base + "_dequantized");
  if (n.input_size() > 2 && !n.input(2).empty()) {
    if (const auto* b = findInitializer(g, n.input(2))) {
      const auto bf = floatsOf(*b);
      std::vector<std::int32_t> bq(bf.size());
      std::vector<float> bs(bf.size());
      for (std::size_t k = 0; k < bf.size(); ++k) {
        bs[k] = inScale * q.scales[perChannel ? k : 0];
        bq[k] = static_cast<std::int32_t>(
            std::clamp(std::nearbyint(double(bf[k]) / double(bs[k])), -2147483647.0, 2147483647.0));
      }
      const std::string bias = n.name() + "/bias";
      const std::vector<std::int64_t> bdims{std::int64_t(bf.size())};
      setRaw(g.add_initializer(), bias + "_int32", onnx::TensorProto::INT32, bq, bdims);
      setFloats(g.add_initializer(), bias + "_scale", bs, bdims);
      setRaw(g.add_initializer(), bias + "_zero_point", onnx::TensorProto::INT32,
             std::vector<std::int32_t>(bf.size(), 0), bdims);
      addNode(nodes, "DequantizeLinear", bias + "_dequantize",
              {bias + "_int32", bias + "_scale", bias + "_zero_point"}, bias + "_dequantized", 0);
      n.set_input(2, bias + "_dequantized");
    }
  }
}

}  // namespace

QuantParams uint8Params(const ActivationRange& range) {
  double lo = std::min(range.lo, 0.0), hi = std::max(range.hi, 0.0);
  if (!(hi - lo > 1e-12)) hi = lo + 1e-6;
  QuantParams p;
  p.scale = float((hi - lo) / 255.0);
  p.zeroPoint =
      static_cast<std::uint8_t>(std::clamp(std::nearbyint(-lo / double(p.scale)), 0.0, 255.0));
  return p;
}

ActivationRange clippedRange(std::vector<float> samples, double percentile) {
  ActivationRange r;
  if (samples.empty()) return r;
  // numpy's percentile (linear), with two selections instead of a sort.
  const auto at = [&](double q) {
    const double rank = q / 100.0 * double(samples.size() - 1);
    const auto low = static_cast<std::size_t>(std::floor(rank));
    const std::size_t high = std::min(low + 1, samples.size() - 1);
    std::nth_element(samples.begin(), samples.begin() + std::ptrdiff_t(low), samples.end());
    const double a = samples[low];
    const double b =
        high == low
            ? a
            : double(*std::min_element(samples.begin() + std::ptrdiff_t(low) + 1, samples.end()));
    return a + (b - a) * (rank - double(low));
  };
  r.lo = std::min(0.0, at(100.0 - percentile));
  r.hi = std::max(0.0, at(percentile));
  return r;
}

QuantizePlan planQuantization(const std::string& floatBytes) {
  auto model = parseModel(floatBytes);
  for (const auto& o : model.opset_import())
    if ((o.domain().empty() || o.domain() == "ai.onnx") && o.version() < 13)
      throw Error(
          "int8 export needs opset 13 or newer (per-channel DequantizeLinear); use --opset 13");
  auto& g = *model.mutable_graph();
  foldBatchNorms(g);
  QuantizePlan plan;
  plan.values = valuesToQuantise(g);
  std::set<std::string> quantised(plan.values.begin(), plan.values.end());
  for (const auto& n : g.node()) {
    if (kWeighted.count(n.op_type()) && n.input_size() > 0 && quantised.count(n.input(0)))
      ++plan.weightedNodes;
    else if (!kQuantisable.count(n.op_type()) || n.output_size() != 1 ||
             !quantised.count(n.output(0)))
      plan.floatNodes.push_back(n.name() + " (" + n.op_type() + ")");
  }
  if (plan.weightedNodes == 0)
    throw Error("int8 export: the model has no Conv, ConvTranspose or Gemm to quantise");
  plan.preparedBytes = serialise(model);
  for (const auto& v : plan.values)
    addFloatOutput(g, v);
  if (!model.SerializeToString(&plan.calibrationBytes))
    throw Error("int8 export: serialisation failed");
  return plan;
}

std::string quantizeQdq(const QuantizePlan& plan,
                        const std::map<std::string, ActivationRange>& ranges,
                        const std::vector<std::pair<std::string, std::string>>& metadata) {
  auto model = parseModel(plan.preparedBytes);
  auto& g = *model.mutable_graph();
  std::map<std::string, QuantParams> params;
  for (const auto& v : plan.values) {
    const auto it = ranges.find(v);
    if (it == ranges.end()) throw Error("int8 export: no calibrated range for \"" + v + "\"");
    params[v] = uint8Params(it->second);
  }
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  std::map<std::string, std::string> dequantised;  // value -> its DequantizeLinear output
  const auto quantiseValue = [&](const std::string& v) {
    const auto& p = params.at(v);
    setFloats(g.add_initializer(), v + "/scale", {p.scale}, {});
    setRaw<std::uint8_t>(g.add_initializer(), v + "/zero_point", onnx::TensorProto::UINT8,
                         {p.zeroPoint}, {});
    addNode(nodes, "QuantizeLinear", v + "/quantize", {v, v + "/scale", v + "/zero_point"},
            v + "/quantized");
    addNode(nodes, "DequantizeLinear", v + "/dequantize",
            {v + "/quantized", v + "/scale", v + "/zero_point"}, v + "/dequantized");
    dequantised[v] = v + "/dequantized";
  };
  for (const auto& in : g.input())
    if (params.count(in.name())) quantiseValue(in.name());
  for (const auto& original : g.node()) {
    onnx::NodeProto n = original;
    for (int i = 0; i < n.input_size(); ++i) {
      const auto it = dequantised.find(n.input(i));
      if (it != dequantised.end()) n.set_input(i, it->second);
    }
    const bool weighted = kWeighted.count(n.op_type()) && n.input_size() > 1 &&
                          params.count(original.input(0)) && findInitializer(g, n.input(1));
    if (weighted) quantiseWeights(g, nodes, n, params.at(original.input(0)).scale);
    *nodes.Add() = n;
    for (const auto& o : original.output())
      if (params.count(o) && !dequantised.count(o)) quantiseValue(o);
  }
  g.mutable_node()->Swap(&nodes);
  // The float weights the DequantizeLinear nodes replaced go.
  const auto count = readers(g);
  google::protobuf::RepeatedPtrField<onnx::TensorProto> used;
  for (const auto& t : g.initializer())
    if (count.count(t.name()) && count.at(t.name()) > 0) *used.Add() = t;
  g.mutable_initializer()->Swap(&used);
  for (const auto& [key, value] : metadata) {
    bool replaced = false;
    for (auto& p : *model.mutable_metadata_props()) {
      if (p.key() == key) {
        p.set_value(value);
        replaced = true;
      }
    }
    if (!replaced) {
      auto* p = model.add_metadata_props();
      p->set_key(key);
      p->set_value(value);
    }
  }
  return serialise(model);
}

}  // namespace netsmith::exporting
