#include "export/onnx_parity.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <opencv2/dnn.hpp>

#include "common/error.h"
#include "task/detection_head.h"

namespace netsmith::exporting {

Json ParityReport::toJson() const {
  Json j{{"passed", passed()},
         {"samples", samples},
         {"max_abs_diff", maxAbsDiff},
         {"max_rel_diff", maxRelDiff},
         {"top1_agreement", top1Agreement},
         {"tolerance", tolerance},
         {"runtime", std::string("OpenCV DNN ") + CV_VERSION},
         {"batches", batches}};
  if (decoder) {
    j["decoder"] = Json{{"boxes_max_abs_diff", boxesMaxAbsDiff},
                        {"boxes_tolerance", boxesTolerance},
                        {"scores_max_abs_diff", scoresMaxAbsDiff},
                        {"scores_tolerance", tolerance}};
  }
  return j;
}

std::string ParityReport::summary() const {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "parity %s (OpenCV DNN %s vs LibTorch): %lld samples, max abs diff %.3g, max rel "
                "diff %.3g, top-1 agreement %.2f%% (tolerance %.0e)",
                passed() ? "passed" : "FAILED", CV_VERSION, static_cast<long long>(samples),
                maxAbsDiff, maxRelDiff, 100 * top1Agreement, tolerance);
  std::string out = buf;
  if (decoder) {
    std::snprintf(buf, sizeof buf,
                  "; decoder: boxes max abs diff %.3g px (tolerance %.2g), scores %.3g "
                  "(tolerance %.0e)",
                  boxesMaxAbsDiff, boxesTolerance, scoresMaxAbsDiff, tolerance);
    out += buf;
  }
  return out;
}

namespace {

/// The largest |got - want| of two float arrays of `count` values; a value OpenCV gives that is
/// not finite counts as infinitely far.
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

/// Compares OpenCV's output `out` with LibTorch's `expected` (`n` rows of `k`) into `report`'s
/// largest differences; returns how many of the samples have the same arg-max in both.
std::int64_t compareParityLogits(const cv::Mat& out, const torch::Tensor& expected,
                                 const std::string& batchName, std::int64_t n, std::int64_t k,
                                 ParityReport& report) {
  if (static_cast<std::int64_t>(out.total()) != n * k) {
    throw Error("OpenCV DNN returned " + std::to_string(out.total()) + " values for batch \"" +
                batchName + "\", LibTorch " + std::to_string(n * k));
  }
  std::int64_t agree = 0;
  const float* got = out.ptr<float>();
  const float* ref = expected.data_ptr<float>();
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t a = 0, b = 0;
    for (std::int64_t j = 0; j < k; ++j) {
      const double g = got[i * k + j], r = ref[i * k + j];
      const double diff = std::isfinite(g) ? std::abs(g - r) : INFINITY;
      report.maxAbsDiff = std::max(report.maxAbsDiff, diff);
      report.maxRelDiff = std::max(report.maxRelDiff, diff / std::max(std::abs(r), 1e-3));
      if (got[i * k + j] > got[i * k + a]) a = j;
      if (ref[i * k + j] > ref[i * k + b]) b = j;
    }
    agree += a == b;
  }
  return agree;
}

/// Compares the decoder's "boxes" and "scores" from OpenCV (`outs` 1 and 2) with the decoding
/// of LibTorch's output `raw`, into `report`'s largest differences.
void compareParityDecoder(const torch::Tensor& raw, const ExportModel& model,
                          const std::vector<cv::Mat>& outs, const std::vector<std::string>& names,
                          const std::string& batchName, ParityReport& report) {
  const auto& in = model.project.model.input;
  if (raw.dim() != 4 || raw.size(1) < 6 || raw.size(2) < 1 || raw.size(3) < 1)
    throw Error(
        "ONNX parity check: the detection decoder needs an N x (K + 5) x H x W output; "
        "LibTorch's is " +
        formatShape(std::vector<std::int64_t>(raw.sizes().begin(), raw.sizes().end())));
  const auto want =
      task::decodeHead(raw, in.height / raw.size(2), double(in.width), double(in.height));
  const auto compare = [&](std::size_t j, const torch::Tensor& t, double& most) {
    const cv::Mat& m = outs.at(j);
    if (static_cast<std::int64_t>(m.total()) != t.numel()) {
      throw Error("OpenCV DNN returned " + std::to_string(m.total()) + " values of \"" + names[j] +
                  "\" for batch \"" + batchName + "\", the decoding of " + "LibTorch's output " +
                  std::to_string(t.numel()));
    }
    most = std::max(most, largestDiff(m.ptr<float>(), t.data_ptr<float>(), t.numel()));
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

ParityReport checkOnnxParity(const std::string& onnxBytes, const ExportModel& model,
                             const std::vector<ParityBatch>& batches, double tolerance,
                             const std::string& output, bool decoder) {
  ParityReport report;
  report.tolerance = tolerance;
  const auto& in = model.project.model.input;
  report.decoder = decoder;
  report.boxesTolerance = std::max(1e-3, tolerance * double(std::max(in.height, in.width)));
  cv::dnn::Net net = readParityNet(onnxBytes);
  const bool oneAtATime = parityRunsOneAtATime(model);
  std::vector<std::string> names{output};
  if (decoder) {
    names.push_back("boxes");
    names.push_back("scores");
  }
  std::int64_t agree = 0;
  for (const auto& batch : batches) {
    const auto x = batch.input.to(torch::kCPU, torch::kFloat).contiguous();
    const auto raw = model.forward(x).to(torch::kFloat);
    const auto expected = raw.reshape({x.size(0), -1}).contiguous();
    const std::vector<cv::Mat> outs = runParityNet(net, x, names, oneAtATime);
    const std::int64_t n = x.size(0), k = expected.size(1);
    agree += compareParityLogits(outs.at(0), expected, batch.name, n, k, report);
    if (decoder) compareParityDecoder(raw, model, outs, names, batch.name, report);
    report.samples += n;
    // Say how it ran: "random x7" run as one batch would claim what OpenCV could not do.
    report.batches.push_back(oneAtATime && n > 1
                                 ? batch.name + " (" + std::to_string(n) +
                                       " samples one at a time: a batch of 2 or more with Mul "
                                       "does not run in OpenCV DNN 4.6)"
                                 : batch.name);
  }
  report.top1Agreement = report.samples ? double(agree) / double(report.samples) : 1.0;
  return report;
}

}  // namespace netsmith::exporting
