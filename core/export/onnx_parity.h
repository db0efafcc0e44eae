#pragma once

// The proof of an ONNX export: independent runtimes (OpenCV DNN, and ONNX Runtime where it is
// installed) run the file and their outputs are compared with LibTorch's.
#include <torch/torch.h>

#include <string>
#include <vector>

#include "common/json.h"
#include "export/export_model.h"

namespace netsmith::exporting {

struct ParityReport {
  std::int64_t samples = 0;
  double maxAbsDiff = 0;
  double maxRelDiff = 0;  ///< |a - b| / max(|b|, 1e-3)
  double sumAbsDiff = 0;  ///< over `values` output values (meanAbsDiff())
  std::int64_t values = 0;
  double sumAbsExpected = 0;  ///< LibTorch's |b| over the same values
  double meanAbsDiff() const { return values ? sumAbsDiff / double(values) : 0.0; }
  /// The mean difference over the mean size of LibTorch's values (0 where those are all 0).
  double relativeMeanDiff() const { return sumAbsExpected > 0 ? sumAbsDiff / sumAbsExpected : 0.0; }
  double top1Agreement = 1.0;  ///< fraction of samples with the same arg-max
  double tolerance = 1e-4;
  std::vector<std::string> batches;  ///< "random x7", "random x1", "test data x16"
  /// The detection decoder's "boxes" and "scores" (OnnxOptions::decoder), compared with the same
  /// decoding of LibTorch's output: scores within `tolerance`, boxes within boxesTolerance
  /// pixels (a distance is exp(raw) x stride, so an output's error grows with the box).
  bool decoder = false;
  double boxesMaxAbsDiff = 0, scoresMaxAbsDiff = 0;
  double boxesTolerance = 0;  ///< `tolerance` x the input's longer side, at least 1e-3
  /// The runtime that ran the file: "OpenCV DNN 4.6.0", "ONNX Runtime 1.31.1".
  std::string runtime;
  /// Rows of the decoder's "selected" (NonMaxSuppression) checked, -1 when it was not run: each
  /// row's batch, class and box within the outputs, and its score at least the threshold.
  std::int64_t selectedRows = -1;
  bool selectedValid = true;
  bool passed() const {
    return maxAbsDiff <= tolerance && selectedValid &&
           (!decoder || (boxesMaxAbsDiff <= boxesTolerance && scoresMaxAbsDiff <= tolerance));
  }
  Json toJson() const;
  std::string summary() const;  ///< "parity passed: 39 samples, max abs diff 2.1e-06, ..."
};

/// A named batch of inputs (N x C x H x W float).
struct ParityBatch {
  std::string name;
  torch::Tensor input;
};

/// Runs the ONNX bytes in OpenCV DNN on every batch and compares with `model.forward`.
/// Throws netsmith::Error when OpenCV cannot read or run the file.
/// `output`: the ONNX output compared (OnnxOptions::output). `decoder`: the file also has the
/// detection decoder's "boxes" and "scores" (built without its NonMaxSuppression, which OpenCV
/// DNN 4.6 cannot run), compared too (task/detection_head.h's decoding before the score
/// threshold and NMS, of LibTorch's output).
ParityReport checkOnnxParity(const std::string& onnxBytes, const ExportModel& model,
                             const std::vector<ParityBatch>& batches, double tolerance = 1e-4,
                             const std::string& output = "logits", bool decoder = false);

struct OnnxRuntimeLocation;
struct HostTensor;

/// A tensor as ONNX Runtime takes it (export/onnx_runtime.h): float32 values on the CPU.
HostTensor toHostTensor(const torch::Tensor& tensor);
/// Each batch's input so.
std::vector<HostTensor> toHostTensors(const std::vector<ParityBatch>& batches);

/// The same check in ONNX Runtime (export/onnx_runtime.h), which runs every node, the decoder's
/// NonMaxSuppression too: with `nms` its "selected" rows are checked against "boxes" and
/// "scores" (within them, scores >= `scoreThreshold`). Every batch runs in one session.
ParityReport checkOnnxRuntimeParity(const OnnxRuntimeLocation& ort, const std::string& onnxBytes,
                                    const ExportModel& model,
                                    const std::vector<ParityBatch>& batches,
                                    double tolerance = 1e-4, const std::string& output = "logits",
                                    bool decoder = false, bool nms = false,
                                    double scoreThreshold = 0.05);

/// Random inputs of the model's shape: a batch of 7 and a batch of 1 (the dynamic batch).
std::vector<ParityBatch> randomParityBatches(const ExportModel& model, std::uint64_t seed = 0);

}  // namespace netsmith::exporting
