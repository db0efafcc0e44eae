#include "export/onnx_parity.h"

#include <cmath>
#include <cstdio>
#include <opencv2/dnn.hpp>

#include "common/error.h"

namespace netsmith::exporting {

Json ParityReport::toJson() const {
  return Json{{"passed", passed()},
              {"samples", samples},
              {"max_abs_diff", maxAbsDiff},
              {"max_rel_diff", maxRelDiff},
              {"top1_agreement", top1Agreement},
              {"tolerance", tolerance},
              {"runtime", std::string("OpenCV DNN ") + CV_VERSION},
              {"batches", batches}};
}

std::string ParityReport::summary() const {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "parity %s (OpenCV DNN %s vs LibTorch): %lld samples, max abs diff %.3g, max rel "
                "diff %.3g, top-1 agreement %.2f%% (tolerance %.0e)",
                passed() ? "passed" : "FAILED", CV_VERSION, static_cast<long long>(samples),
                maxAbsDiff, maxRelDiff, 100 * top1Agreement, tolerance);
  return buf;
}

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
                             const std::string& output) {
  ParityReport report;
  report.tolerance = tolerance;
  cv::dnn::Net net;
  try {
    net = cv::dnn::readNetFromONNX(onnxBytes.data(), onnxBytes.size());
  } catch (const cv::Exception& e) {
    throw Error(std::string("OpenCV DNN cannot read the exported model: ") + e.what());
  }
  bool oneAtATime = false;
  for (const auto& node : model.project.model.nodes)
    oneAtATime = oneAtATime || node.op == "Mul";
  std::int64_t agree = 0;
  for (const auto& batch : batches) {
    const auto x = batch.input.to(torch::kCPU, torch::kFloat).contiguous();
    const auto expected = model.forward(x).to(torch::kFloat).reshape({x.size(0), -1}).contiguous();
    std::vector<int> dims(x.sizes().begin(), x.sizes().end());
    cv::Mat blob(static_cast<int>(dims.size()), dims.data(), CV_32F,
                 const_cast<float*>(x.data_ptr<float>()));
    cv::Mat out;
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
          const cv::Mat row = net.forward(output);
          out.push_back(row.reshape(1, 1));
        }
      } else {
        net.setInput(blob.clone(), "input");
        out = net.forward(output);
      }
    } catch (const cv::Exception& e) {
      throw Error(std::string("OpenCV DNN cannot run the exported model: ") + e.what());
    }
    const std::int64_t n = x.size(0), k = expected.size(1);
    if (static_cast<std::int64_t>(out.total()) != n * k) {
      throw Error("OpenCV DNN returned " + std::to_string(out.total()) + " values for batch \"" +
                  batch.name + "\", LibTorch " + std::to_string(n * k));
    }
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
