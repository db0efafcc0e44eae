#include "export/onnx_parity.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <opencv2/dnn.hpp>

#include "common/error.h"
#include "export/onnx_runtime.h"
#include "task/detection_head.h"

namespace netsmith::exporting {

Json ParityReport::toJson() const {
  Json j{{"passed", passed()},
         {"samples", samples},
         {"max_abs_diff", maxAbsDiff},
         {"max_rel_diff", maxRelDiff},
         {"mean_abs_diff", meanAbsDiff()},
         {"top1_agreement", top1Agreement},
         {"tolerance", tolerance},
         {"runtime", runtime},
         {"batches", batches}};
  if (decoder) {
    j["decoder"] = Json{{"boxes_max_abs_diff", boxesMaxAbsDiff},
                        {"boxes_tolerance", boxesTolerance},
                        {"scores_max_abs_diff", scoresMaxAbsDiff},
                        {"scores_tolerance", tolerance}};
    if (selectedRows >= 0)
      j["decoder"]["selected"] = Json{{"rows", selectedRows}, {"valid", selectedValid}};
  }
  return j;
}

std::string ParityReport::summary() const {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "parity %s (%s vs LibTorch): %lld samples, max abs diff %.3g, max rel "
                "diff %.3g, top-1 agreement %.2f%% (tolerance %.0e)",
                passed() ? "passed" : "FAILED", runtime.c_str(), static_cast<long long>(samples),
                maxAbsDiff, maxRelDiff, 100 * top1Agreement, tolerance);
  std::string out = buf;
  if (decoder) {
    std::snprintf(buf, sizeof buf,
                  "; decoder: boxes max abs diff %.3g px (tolerance %.2g), scores %.3g "
                  "(tolerance %.0e)",
                  boxesMaxAbsDiff, boxesTolerance, scoresMaxAbsDiff, tolerance);
    out += buf;
    if (selectedRows >= 0) {
      out += "; selected: " + std::to_string(selectedRows) + " rows" +
             (selectedValid ? ", each within the boxes and over the score threshold"
                            : ", SOME OUTSIDE the boxes or under the score threshold");
    }
  }
  return out;
}

namespace {

/// The largest |got - want| of two float arrays of `count` values; a value the runtime gives
/// that is not finite counts as infinitely far.
double largestDiff(const float* got, const float* want, std::int64_t count) {
  double most = 0;
  for (std::int64_t i = 0; i < count; ++i) {
    const double g = got[i];
    most = std::max(most, std::isfinite(g) ? std::abs(g - double(want[i])) : INFINITY);
  }
  return most;
}

/// Reads the exported bytes into an OpenCV DNN net; OpenCV's refusal becomes a netsmith::Error.
cv::dnn::Net readParityNet(const std::string& onnxBytes) {
  cv::dnn::Net net;
  try {
    net = cv::dnn::readNetFromONNX(onnxBytes.data(), onnxBytes.size());
  } catch (const cv::Exception& e) {
    throw Error(std::string("OpenCV DNN cannot read the exported model: ") + e.what());
  }
  return net;
}

/// Whether the model has a Mul, which OpenCV DNN 4.6 runs only one sample at a time.
bool parityRunsOneAtATime(const ExportModel& model) {
  bool oneAtATime = false;
  for (const auto& node : model.project.model.nodes)
    oneAtATime = oneAtATime || node.op == "Mul";
  return oneAtATime;
}

/// Runs batch `x` in `net` (sample by sample when `oneAtATime`): the outputs `names`, in their
/// order, a row per sample.
std::vector<cv::Mat> runParityNet(cv::dnn::Net& net, const torch::Tensor& x,
                                  const std::vector<std::string>& names, bool oneAtATime) {
  std::vector<int> dims(x.sizes().begin(), x.sizes().end());
  cv::Mat blob(static_cast<int>(dims.size()), dims.data(), CV_32F,
               const_cast<float*>(x.data_ptr<float>()));
  std::vector<cv::Mat> outs(names.size());  // per name, in names' order
  try {
    if (oneAtATime && dims[0] > 1) {
      // OpenCV DNN 4.6 broadcasts a Mul of two tensors (a Cx1x1 gate times a CxHxW map)
      // only for a batch of one: the samples go in one by one, and the rows are stacked.
      std::vector<int> one = dims;
      one[0] = 1;
      const std::size_t per = x[0].numel();
      for (int i = 0; i < dims[0]; ++i) {
        cv::Mat sample(static_cast<int>(one.size()), one.data(), CV_32F,
                       const_cast<float*>(x.data_ptr<float>()) + per * std::size_t(i));
        net.setInput(sample.clone(), "input");
        std::vector<cv::Mat> rows;
        net.forward(rows, names);
        for (std::size_t j = 0; j < names.size(); ++j)
          outs[j].push_back(rows.at(j).reshape(1, 1));
      }
    } else {
      net.setInput(blob.clone(), "input");
      net.forward(outs, names);
    }
  } catch (const cv::Exception& e) {
    throw Error(std::string("OpenCV DNN cannot run the exported model: ") + e.what());
  }
  return outs;
}

/// Compares a runtime's output `got` (`count` values) with LibTorch's `expected` (`n` rows of
/// `k`) into `report`'s largest differences; returns how many of the samples have the same
/// arg-max in both.
std::int64_t compareParityLogits(const float* got, std::int64_t count,
                                 const torch::Tensor& expected, const std::string& batchName,
                                 std::int64_t n, std::int64_t k, ParityReport& report) {
  if (count != n * k) {
    throw Error(report.runtime + " returned " + std::to_string(count) + " values for batch \"" +
                batchName + "\", LibTorch " + std::to_string(n * k));
  }
  std::int64_t agree = 0;
  const float* ref = expected.data_ptr<float>();
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t a = 0, b = 0;
    for (std::int64_t j = 0; j < k; ++j) {
      const double g = got[i * k + j], r = ref[i * k + j];
      const double diff = std::isfinite(g) ? std::abs(g - r) : INFINITY;
      report.maxAbsDiff = std::max(report.maxAbsDiff, diff);
      report.sumAbsDiff += diff;
      report.sumAbsExpected += std::abs(r);
      ++report.values;
      report.maxRelDiff = std::max(report.maxRelDiff, diff / std::max(std::abs(r), 1e-3));
      if (got[i * k + j] > got[i * k + a]) a = j;
      if (ref[i * k + j] > ref[i * k + b]) b = j;
    }
    agree += a == b;
  }
  return agree;
}

/// A runtime's values of one output: `count` floats at `data`.
struct RuntimeValues {
  const float* data = nullptr;
  std::int64_t count = 0;
};

/// Compares the decoder's "boxes" and "scores" from a runtime (`outs` 1 and 2, named `names`)
/// with the decoding of LibTorch's output `raw`, into `report`'s largest differences.
void compareParityDecoder(const torch::Tensor& raw, const ExportModel& model,
                          const std::vector<RuntimeValues>& outs,
                          const std::vector<std::string>& names, const std::string& batchName,
                          ParityReport& report) {
  const auto& in = model.project.model.input;
  if (raw.dim() != 4 || raw.size(1) < 6 || raw.size(2) < 1 || raw.size(3) < 1)
    throw Error(
        "ONNX parity check: the detection decoder needs an N x (K + 5) x H x W output; "
        "LibTorch's is " +
        formatShape(std::vector<std::int64_t>(raw.sizes().begin(), raw.sizes().end())));
  const auto want =
      task::decodeHead(raw, in.height / raw.size(2), double(in.width), double(in.height));
  const auto compare = [&](std::size_t j, const torch::Tensor& t, double& most) {
    const RuntimeValues& m = outs.at(j);
    if (m.count != t.numel()) {
      throw Error(report.runtime + " returned " + std::to_string(m.count) + " values of \"" +
                  names[j] + "\" for batch \"" + batchName + "\", the decoding of " +
                  "LibTorch's output " + std::to_string(t.numel()));
    }
    most = std::max(most, largestDiff(m.data, t.data_ptr<float>(), t.numel()));
  };
  compare(1, want.boxes, report.boxesMaxAbsDiff);
  compare(2, want.scores, report.scoresMaxAbsDiff);
}

}  // namespace

std::vector<ParityBatch> randomParityBatches(const ExportModel& model, std::uint64_t seed) {
  const auto& in = model.project.model.input;
  auto gen = at::detail::createCPUGenerator(seed);
  std::vector<ParityBatch> out;
  for (std::int64_t n : {7, 1}) {
    out.push_back({"random x" + std::to_string(n),
                   torch::randn({n, in.channels, in.height, in.width}, gen, torch::kFloat)});
  }
  return out;
}

namespace {

/// A runtime's outputs of batch `index` (input `x`), in the order of the names compared.
using RuntimeRun =
    std::function<std::vector<RuntimeValues>(std::size_t index, const torch::Tensor& x)>;

/// Runs every batch in LibTorch and through `run`, and compares the outputs `names` (the
/// model's output, then the decoder's "boxes" and "scores" when `decoder`). `describe` says how
/// a batch ran ("random x7").
ParityReport compareWithLibTorch(
    const ExportModel& model, const std::vector<ParityBatch>& batches, double tolerance,
    const std::vector<std::string>& names, bool decoder, const std::string& runtime,
    const RuntimeRun& run,
    const std::function<std::string(const ParityBatch&, std::int64_t)>& describe) {
  ParityReport report;
  report.runtime = runtime;
  report.tolerance = tolerance;
  const auto& in = model.project.model.input;
  report.decoder = decoder;
  report.boxesTolerance = std::max(1e-3, tolerance * double(std::max(in.height, in.width)));
  std::int64_t agree = 0;
  for (std::size_t b = 0; b < batches.size(); ++b) {
    const auto& batch = batches[b];
    const auto x = batch.input.to(torch::kCPU, torch::kFloat).contiguous();
    const auto raw = model.forward(x).to(torch::kFloat);
    const auto expected = raw.reshape({x.size(0), -1}).contiguous();
    const std::vector<RuntimeValues> outs = run(b, x);
    const std::int64_t n = x.size(0), k = expected.size(1);
    agree +=
        compareParityLogits(outs.at(0).data, outs.at(0).count, expected, batch.name, n, k, report);
    if (decoder) compareParityDecoder(raw, model, outs, names, batch.name, report);
    report.samples += n;
    report.batches.push_back(describe(batch, n));
  }
  report.top1Agreement = report.samples ? double(agree) / double(report.samples) : 1.0;
  return report;
}

std::vector<std::string> parityOutputs(const std::string& output, bool decoder) {
  std::vector<std::string> names{output};
  if (decoder) {
    names.push_back("boxes");
    names.push_back("scores");
  }
  return names;
}

/// Whether every row of NonMaxSuppression's "selected" (batch, class, box) lies within "boxes"
/// (N x L x 4) and "scores" (N x K x L) and scores at least `threshold`.
bool selectedRowsValid(const HostTensor& selected, const HostTensor& boxes,
                       const HostTensor& scores, double threshold) {
  if (!selected.isInt || selected.dims.size() != 2 || selected.dims[1] != 3 ||
      scores.dims.size() != 3 || boxes.dims.size() != 3)
    return false;
  const std::int64_t n = scores.dims[0], k = scores.dims[1], l = scores.dims[2];
  for (std::int64_t r = 0; r < selected.dims[0]; ++r) {
    const std::int64_t b = selected.ints[std::size_t(3 * r)];
    const std::int64_t c = selected.ints[std::size_t(3 * r + 1)];
    const std::int64_t i = selected.ints[std::size_t(3 * r + 2)];
    if (b < 0 || b >= n || c < 0 || c >= k || i < 0 || i >= l || boxes.dims[1] != l) return false;
    if (scores.values[std::size_t((b * k + c) * l + i)] < float(threshold)) return false;
  }
  return true;
}

}  // namespace

ParityReport checkOnnxParity(const std::string& onnxBytes, const ExportModel& model,
                             const std::vector<ParityBatch>& batches, double tolerance,
                             const std::string& output, bool decoder) {
  cv::dnn::Net net = readParityNet(onnxBytes);
  const bool oneAtATime = parityRunsOneAtATime(model);
  const auto names = parityOutputs(output, decoder);
  std::vector<cv::Mat> mats;  // the batch's outputs, alive while they are compared
  const RuntimeRun run = [&](std::size_t, const torch::Tensor& x) {
    mats = runParityNet(net, x, names, oneAtATime);
    std::vector<RuntimeValues> values;
    for (const auto& m : mats)
      values.push_back({m.ptr<float>(), static_cast<std::int64_t>(m.total())});
    return values;
  };
  // Say how it ran: "random x7" run as one batch would claim what OpenCV could not do.
  const auto describe = [&](const ParityBatch& batch, std::int64_t n) {
    return oneAtATime && n > 1 ? batch.name + " (" + std::to_string(n) +
                                     " samples one at a time: a batch of 2 or more with Mul "
                                     "does not run in OpenCV DNN 4.6)"
                               : batch.name;
  };
  return compareWithLibTorch(model, batches, tolerance, names, decoder,
                             std::string("OpenCV DNN ") + CV_VERSION, run, describe);
}

HostTensor toHostTensor(const torch::Tensor& tensor) {
  const auto x = tensor.to(torch::kCPU, torch::kFloat).contiguous();
  HostTensor t;
  t.dims.assign(x.sizes().begin(), x.sizes().end());
  t.values.assign(x.data_ptr<float>(), x.data_ptr<float>() + x.numel());
  return t;
}

std::vector<HostTensor> toHostTensors(const std::vector<ParityBatch>& batches) {
  std::vector<HostTensor> out;
  out.reserve(batches.size());
  for (const auto& b : batches)
    out.push_back(toHostTensor(b.input));
  return out;
}

ParityReport checkOnnxRuntimeParity(const OnnxRuntimeLocation& ort, const std::string& onnxBytes,
                                    const ExportModel& model,
                                    const std::vector<ParityBatch>& batches, double tolerance,
                                    const std::string& output, bool decoder, bool nms,
                                    double scoreThreshold) {
  auto names = parityOutputs(output, decoder);
  std::vector<OnnxRuntimeFeed> feeds;
  for (const auto& batch : batches) {
    OnnxRuntimeFeed feed;
    feed.inputs.emplace("input", toHostTensor(batch.input));
    feed.outputs = names;
    if (decoder && nms) feed.outputs.push_back("selected");
    feeds.push_back(std::move(feed));
  }
  const auto results = runOnnxRuntimeOnBytes(ort, onnxBytes, feeds);
  const RuntimeRun run = [&](std::size_t index, const torch::Tensor&) {
    std::vector<RuntimeValues> values;
    for (const auto& name : names) {
      const auto& t = results.at(index).at(name);
      if (t.isInt) throw Error(ort.name() + ": output \"" + name + "\" holds integers");
      values.push_back({t.values.data(), std::int64_t(t.values.size())});
    }
    return values;
  };
  const auto describe = [](const ParityBatch& batch, std::int64_t) { return batch.name; };
  ParityReport report =
      compareWithLibTorch(model, batches, tolerance, names, decoder, ort.name(), run, describe);
  if (decoder && nms) {
    report.selectedRows = 0;
    for (const auto& r : results) {
      const auto& selected = r.at("selected");
      report.selectedRows += selected.dims.empty() ? 0 : selected.dims[0];
      report.selectedValid =
          report.selectedValid &&
          selectedRowsValid(selected, r.at("boxes"), r.at("scores"), scoreThreshold);
    }
  }
  return report;
}

}  // namespace netsmith::exporting
