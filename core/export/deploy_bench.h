#pragma once

// What a model costs where it is deployed: an ONNX file's latency at batch 1 (median and 95th
// percentile), throughput at batch N and memory, in ONNX Runtime and in OpenCV DNN, with its
// size, parameters and MACs (onnx_cost.h). For `netsmith-cli bench MODEL.onnx`. Prints nothing;
// the figures are for a person to read, not for tests to assert.
#include <cstdint>
#include <string>
#include <vector>

#include "common/json.h"
#include "export/onnx_cost.h"

namespace netsmith::exporting {

struct DeployBenchOptions {
  std::int64_t batch = 32;  ///< the throughput batch
  int threads = 1;          ///< each runtime's intra-op threads
  int warmup = 5;
  int runs = 50;         ///< at least this many timed runs at batch 1 ...
  double seconds = 2.0;  ///< ... and at least this long
};

/// One runtime's figures; `error` says why there are none.
struct RuntimeBench {
  std::string runtime;  ///< "ONNX Runtime 1.31.1", "OpenCV DNN 4.6.0"
  std::string error;
  std::vector<double> batch1Ms;  ///< every timed run, in order
  double p50Ms = 0, p95Ms = 0;   ///< numpy's percentile (linear) of batch1Ms
  double imagesPerSecond = 0;    ///< at DeployBenchOptions::batch
  std::int64_t throughputRuns = 0;
  std::int64_t memoryKiB = -1;  ///< the rise of the peak resident set loading and running it
};

struct DeployBench {
  std::string path;
  OnnxCost cost;
  DeployBenchOptions options;
  std::vector<RuntimeBench> runtimes;
  Json toJson() const;
};

/// numpy.percentile(values, q) with its default (linear) interpolation; 0 for no values.
double percentile(std::vector<double> values, double q);

/// Benchmarks the file in every runtime found (ONNX Runtime first, then OpenCV DNN in this
/// process). Throws netsmith::Error when the file is no ONNX model of one image input
/// (onnxCost); a runtime that cannot run it has its `error` instead.
DeployBench benchOnnxModel(const std::string& path, const DeployBenchOptions& options);

}  // namespace netsmith::exporting
