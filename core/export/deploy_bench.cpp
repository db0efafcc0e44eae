#include "export/deploy_bench.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <opencv2/core.hpp>
#include <opencv2/core/utils/logger.hpp>
#include <opencv2/dnn.hpp>
#include <string>

#include "common/error.h"
#include "export/onnx_runtime.h"

namespace netsmith::exporting {

namespace {

/// A field of /proc/self/status in KiB ("VmRSS", "VmHWM"), -1 where it cannot be read.
std::int64_t statusKiB(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) {
      try {
        return std::stoll(line.substr(field.size() + 1));
      } catch (const std::exception&) {
        return -1;
      }
    }
  }
  return -1;
}

/// Resets this process's peak resident set to its current one (Linux's clear_refs 5); the
/// resident set then, or -1.
std::int64_t resetPeakMemory() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
  out.flush();
  return out ? statusKiB("VmRSS") : -1;
}

/// OpenCV's reason without its source file and line, on one line: "Node [NonMaxSuppression@...".
std::string openCvReason(const cv::Exception& e) {
  std::string why;
  for (const char c : e.err) {
    if (c == '\n' || c == '>') {
      if (!why.empty() && why.back() != ' ') why += ' ';
    } else if (c != ' ' || (!why.empty() && why.back() != ' ')) {
      why += c;
    }
  }
  while (!why.empty() && why.back() == ' ')
    why.pop_back();
  return why;
}

/// Deterministic inputs in [-1, 1).
cv::Mat benchInput(const std::vector<int>& dims) {
  cv::Mat m(static_cast<int>(dims.size()), dims.data(), CV_32F);
  cv::RNG rng(12345);
  rng.fill(m, cv::RNG::UNIFORM, -1.0, 1.0);
  return m;
}

RuntimeBench benchOpenCv(const std::string& path, const OnnxCost& cost,
                         const DeployBenchOptions& o) {
  RuntimeBench r;
  r.runtime = std::string("OpenCV DNN ") + CV_VERSION;
  const int threadsBefore = cv::getNumThreads();
  cv::setNumThreads(o.threads);
  try {
    const std::int64_t before = resetPeakMemory();
    // OpenCV logs a refusal to standard error itself, node names and all: the file's text
    // reaches the terminal only through this function's error, made printable by the caller.
    const auto level = cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_SILENT);
    cv::dnn::Net net;
    try {
      net = cv::dnn::readNetFromONNX(path);
    } catch (...) {
      cv::utils::logging::setLogLevel(level);
      throw;
    }
    cv::utils::logging::setLogLevel(level);
    using Clock = std::chrono::steady_clock;
    const auto run = [&](const cv::Mat& input) {
      net.setInput(input, cost.inputName);
      const auto start = Clock::now();
      net.forward();
      return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    };
    std::vector<int> dims{1};
    for (const auto d : cost.inputDims)
      dims.push_back(static_cast<int>(d));
    const cv::Mat one = benchInput(dims);
    for (int i = 0; i < o.warmup; ++i)
      run(one);
    const auto start = Clock::now();
    while (r.batch1Ms.size() < 100000 &&
           (int(r.batch1Ms.size()) < o.runs ||
            std::chrono::duration<double>(Clock::now() - start).count() < o.seconds))
      r.batch1Ms.push_back(run(one));
    dims[0] = static_cast<int>(o.batch);
    const cv::Mat batch = benchInput(dims);
    run(batch);  // warm-up at this size
    double total = 0;
    const auto throughputStart = Clock::now();
    while (r.throughputRuns < 3 ||
           std::chrono::duration<double>(Clock::now() - throughputStart).count() < o.seconds / 2) {
      total += run(batch);
      ++r.throughputRuns;
    }
    r.imagesPerSecond = double(o.batch * r.throughputRuns) / (total / 1000.0);
    const std::int64_t peak = statusKiB("VmHWM");
    r.memoryKiB = before >= 0 && peak >= 0 ? peak - before : -1;
  } catch (const cv::Exception& e) {
    r.error = "OpenCV DNN cannot run the model: " + openCvReason(e);
  }
  cv::setNumThreads(threadsBefore);
  return r;
}

RuntimeBench benchOrt(const std::string& path, const OnnxCost& cost, const DeployBenchOptions& o) {
  RuntimeBench r;
  std::string whyNot;
  const auto ort = findOnnxRuntime(&whyNot);
  if (!ort) {
    r.runtime = "ONNX Runtime";
    r.error = whyNot;
    return r;
  }
  r.runtime = ort->name();
  std::vector<std::int64_t> dims{1};
  dims.insert(dims.end(), cost.inputDims.begin(), cost.inputDims.end());
  try {
    const auto one =
        timeOnnxRuntime(*ort, path, cost.inputName, dims, o.threads, o.warmup, o.runs, o.seconds);
    r.batch1Ms = one.ms;
    r.memoryKiB = one.memoryKiB;
    dims[0] = o.batch;
    const auto many =
        timeOnnxRuntime(*ort, path, cost.inputName, dims, o.threads, 1, 3, o.seconds / 2);
    double total = 0;
    for (const double ms : many.ms)
      total += ms;
    r.throughputRuns = static_cast<std::int64_t>(many.ms.size());
    r.imagesPerSecond = double(o.batch * r.throughputRuns) / (total / 1000.0);
    r.memoryKiB = std::max(r.memoryKiB, many.memoryKiB);
  } catch (const Error& e) {
    r.error = e.what();
  }
  return r;
}

}  // namespace

double percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double rank = q / 100.0 * double(values.size() - 1);
  const auto low = static_cast<std::size_t>(std::floor(rank));
  const std::size_t high = std::min(low + 1, values.size() - 1);
  return values[low] + (values[high] - values[low]) * (rank - double(low));
}

DeployBench benchOnnxModel(const std::string& path, const DeployBenchOptions& options) {
  if (options.batch < 1 || options.threads < 1 || options.runs < 1 || options.warmup < 0)
    throw Error("bench: the batch, threads and runs must be at least 1");
  DeployBench b;
  b.path = path;
  b.options = options;
  b.cost = onnxCost(path);
  for (auto r : {benchOrt(path, b.cost, options), benchOpenCv(path, b.cost, options)}) {
    r.p50Ms = percentile(r.batch1Ms, 50);
    r.p95Ms = percentile(r.batch1Ms, 95);
    b.runtimes.push_back(std::move(r));
  }
  return b;
}

Json DeployBench::toJson() const {
  Json runtimesJson = Json::array();
  for (const auto& r : runtimes) {
    Json j{{"runtime", r.runtime}};
    if (!r.error.empty()) {
      j["error"] = r.error;
    } else {
      j["batch1_p50_ms"] = r.p50Ms;
      j["batch1_p95_ms"] = r.p95Ms;
      j["batch1_ms"] = r.batch1Ms;
      j["images_per_second"] = r.imagesPerSecond;
      j["throughput_batch"] = options.batch;
      j["throughput_runs"] = r.throughputRuns;
      j["memory_kib"] = r.memoryKiB;
    }
    runtimesJson.push_back(std::move(j));
  }
  return Json{{"model", path},
              {"file_bytes", cost.fileBytes},
              {"parameters", cost.parameters},
              {"quantized_parameters", cost.quantizedWeights},
              {"macs_per_image", cost.macs},
              {"input", cost.inputName},
              {"input_dims", cost.inputDims},
              {"threads", options.threads},
              {"runtimes", runtimesJson}};
}

}  // namespace netsmith::exporting
