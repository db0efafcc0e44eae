#pragma once

// ONNX Runtime, the runtime most users deploy ONNX files with, as the second runtime that checks
// an export and times a model. Its CPU build comes from npm's onnxruntime-node package and runs in
// Node.js: a short script of ours (written to a private temporary folder) loads the model, runs
// the inputs given as raw float32 files and writes the outputs back the same way, in a child
// process with a time limit. Nothing is linked: where node or the package is missing, the
// callers say so and go on with OpenCV DNN alone. No LibTorch here.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace netsmith::exporting {

/// Where ONNX Runtime was found.
struct OnnxRuntimeLocation {
  std::string node;     ///< the Node.js program (absolute path)
  std::string package;  ///< the onnxruntime-node package's folder
  std::string version;  ///< its package.json's version: "1.31.1"
  std::string name() const { return "ONNX Runtime " + version; }
};

/// The folder the installer (installer/deps-debian.sh) puts the package under.
std::string defaultOnnxRuntimePrefix();

/// Finds node (NETSMITH_NODE, else node or nodejs on PATH) and the package (NETSMITH_ONNXRUNTIME:
/// the package's folder or one holding node_modules/onnxruntime-node; "off" turns ONNX Runtime
/// off; unset: defaultOnnxRuntimePrefix()). Nothing found: nullopt, and `whyNot` says what is
/// missing and how to install it.
std::optional<OnnxRuntimeLocation> findOnnxRuntime(std::string* whyNot = nullptr);

/// A dense tensor crossing to and from the runtime: float32 values, or int64 ones (`ints`, for
/// outputs such as NonMaxSuppression's "selected").
struct HostTensor {
  std::vector<std::int64_t> dims;
  std::vector<float> values;
  std::vector<std::int64_t> ints;
  bool isInt = false;
  std::int64_t count() const;  ///< the product of dims
};

/// One run of the model: its inputs by name, and the outputs wanted.
struct OnnxRuntimeFeed {
  std::map<std::string, HostTensor> inputs;
  std::vector<std::string> outputs;
};

/// Runs the ONNX file at `modelPath` on every feed in one session; the outputs of each feed by
/// name. Throws netsmith::Error when node cannot start, ONNX Runtime refuses the file or an input
/// (its message, made printable), an output is not float32 or int64, or the whole takes longer
/// than `timeoutSeconds`.
std::vector<std::map<std::string, HostTensor>> runOnnxRuntime(
    const OnnxRuntimeLocation& ort, const std::string& modelPath,
    const std::vector<OnnxRuntimeFeed>& feeds, double timeoutSeconds = 300);

/// The same on the file's bytes (written to the private folder first).
std::vector<std::map<std::string, HostTensor>> runOnnxRuntimeOnBytes(
    const OnnxRuntimeLocation& ort, const std::string& onnxBytes,
    const std::vector<OnnxRuntimeFeed>& feeds, double timeoutSeconds = 300);

/// Latency of one input shape: `warmup` runs, then runs until both `runs` runs and `seconds`
/// seconds are done (at most 100000); every run's time in milliseconds, in order.
struct OnnxRuntimeTiming {
  std::vector<double> ms;
  std::int64_t threads = 1;
  /// The rise of the process's peak resident set from just before the model was loaded to the
  /// end of the runs (Linux's VmHWM, reset by clear_refs), -1 where it cannot be read.
  std::int64_t memoryKiB = -1;
};
OnnxRuntimeTiming timeOnnxRuntime(const OnnxRuntimeLocation& ort, const std::string& modelPath,
                                  const std::string& inputName,
                                  const std::vector<std::int64_t>& inputDims, int threads,
                                  int warmup, int runs, double seconds,
                                  double timeoutSeconds = 600);

}  // namespace netsmith::exporting
