#include "graph/model_summary.h"

#include <cstdio>
#include <sstream>

namespace netsmith::graph {

ModelSummary makeSummary(const GraphAnalysis& analysis, std::int64_t batchSize,
                         const std::string& optimizer, double momentum) {
  ModelSummary s;
  s.analysis = &analysis;
  s.batchSize = batchSize;
  s.optimizer = optimizer;
  s.memory = estimateTrainingMemory(analysis, batchSize, optimizerStateSlots(optimizer, momentum));
  return s;
}

Json summaryToJson(const ModelSummary& s) {
  const GraphAnalysis& a = *s.analysis;
  Json layers = Json::array();
  for (const auto& n : a.nodes) {
    layers.push_back(Json{{"id", n.id},
                          {"op", n.op},
                          {"input_shapes", n.inputShapes},
                          {"output_shape", n.outputShape},
                          {"params", n.paramCount},
                          {"trainable_params", n.trainableParams},
                          {"macs", n.macs},
                          {"activation_bytes", n.activationBytes}});
  }
  Json out = Json::object();
  out["layers"] = std::move(layers);
  out["input_shape"] = a.inputShape;
  out["output_shape"] = a.outputShape;
  out["total_params"] = a.totalParams;
  out["trainable_params"] = a.trainableParams;
  out["total_macs"] = a.totalMacs;
  out["activation_bytes_per_sample"] = a.activationBytes;
  out["batch_size"] = s.batchSize;
  out["optimizer"] = s.optimizer;
  out["training_memory_bytes"] = s.memory.total();
  out["training_memory"] = Json{{"weights", s.memory.weights},
                                {"gradients", s.memory.gradients},
                                {"optimizer_state", s.memory.optimizerState},
                                {"activations", s.memory.activations},
                                {"input_batch", s.memory.inputBatch}};
  return out;
}

std::string formatCount(std::int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

std::string formatBytes(std::int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    ++u;
  }
  char buf[32];
  if (u == 0) {
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
  } else {
    std::snprintf(buf, sizeof buf, "%.2f %s", v, units[u]);
  }
  return buf;
}

namespace {
std::string pad(const std::string& s, std::size_t width, bool right = false) {
  if (s.size() >= width) return s;
  const std::string fill(width - s.size(), ' ');
  return right ? fill + s : s + fill;
}
}  // namespace

std::string formatSummaryTable(const ModelSummary& s) {
  const GraphAnalysis& a = *s.analysis;
  std::size_t wId = 4, wOp = 2, wShape = 12;
  for (const auto& n : a.nodes) {
    wId = std::max(wId, n.id.size());
    wOp = std::max(wOp, n.op.size());
    wShape = std::max(wShape, formatShape(n.outputShape).size());
  }
  const std::size_t wNum = 14;
  std::ostringstream os;
  const std::string header = pad("Node", wId) + "  " + pad("Op", wOp) + "  " +
                             pad("Output shape", wShape) + "  " + pad("Params", wNum, true) + "  " +
                             pad("MACs", wNum, true);
  const std::string rule(header.size(), '=');
  os << rule << '\n' << header << '\n' << rule << '\n';
  for (const auto& n : a.nodes) {
    os << pad(n.id, wId) << "  " << pad(n.op, wOp) << "  "
       << pad(formatShape(n.outputShape), wShape) << "  "
       << pad(formatCount(n.paramCount), wNum, true) << "  " << pad(formatCount(n.macs), wNum, true)
       << '\n';
  }
  os << rule << '\n';
  os << "Input shape:            " << formatShape(a.inputShape) << '\n';
  os << "Output shape:           " << formatShape(a.outputShape) << '\n';
  os << "Total params:           " << formatCount(a.totalParams) << '\n';
  os << "Trainable params:       " << formatCount(a.trainableParams) << '\n';
  os << "Non-trainable params:   " << formatCount(a.totalParams - a.trainableParams) << '\n';
  os << "MACs per sample:        " << formatCount(a.totalMacs) << '\n';
  os << "Activations per sample: " << formatBytes(a.activationBytes) << '\n';
  os << "Training memory (est., batch " << s.batchSize << ", " << s.optimizer
     << "): " << formatBytes(s.memory.total()) << '\n';
  os << "  weights " << formatBytes(s.memory.weights) << ", gradients "
     << formatBytes(s.memory.gradients) << ", optimizer state "
     << formatBytes(s.memory.optimizerState) << ", activations "
     << formatBytes(s.memory.activations) << ", input " << formatBytes(s.memory.inputBatch) << '\n';
  os << rule << '\n';
  return os.str();
}

}  // namespace netsmith::graph
