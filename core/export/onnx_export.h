#pragma once

// ONNX export: the graph serialised op by op with the ONNX protobuf classes (Debian's
// libonnx-dev), checked with onnx::checker. Protobuf stays inside onnx_export.cpp.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "export/export_model.h"

namespace netsmith::exporting {

struct OnnxOptions {
  int opset = 13;                 ///< 11 to 17
  bool softmax = false;           ///< also output "probabilities" (an appended Softmax)
  std::string output = "logits";  ///< the output's name (the task's ExportNotes::output)
  /// A detector's decoding (task/detection_head.h's conventions) after its raw output
  /// N x (K + 5) x H x W, two more outputs:
  ///   "boxes"  N x L x 4: per location [x0, y0, x1, y1] in input pixels, clipped to the input;
  ///            L = H x W locations in row-major order (location i x W + j is row i, column j)
  ///   "scores" N x K x L: sqrt(sigmoid(class logit) x sigmoid(centre-ness logit))
  /// in ops OpenCV DNN 4.6 runs, so the parity check compares them (checkOnnxParity). With
  /// `nms` also "selected" (num x 3 int64: batch, class, box index), a NonMaxSuppression over
  /// them (IoU nmsIou, scores >= scoreThreshold, maxPerClass per class and image): a consumer
  /// takes boxes[batch, index] and scores[batch, class, index] and keeps the 100 best per
  /// image (DetectionHeadParams::maxDetections; 100 per class leave none of them out). OpenCV
  /// DNN 4.6 cannot run NonMaxSuppression: that node is checked by onnx::checker only. Unlike
  /// the decoder in C++ (decodeDetections) the file keeps boxes of no width or height after
  /// clipping and has no pre-NMS limit.
  struct DetectionDecoder {
    bool enabled = false;
    /// 0: from the model (classes = the output's channels - 5, stride = input height / H);
    /// otherwise they must agree with it.
    std::int64_t classes = 0, stride = 0;
    double scoreThreshold = 0.05, nmsIou = 0.6;
    std::int64_t maxPerClass = 100;
    bool nms = false;
  } decoder;
  /// metadata_props after the model's own (the task and how to read its output).
  std::vector<std::pair<std::string, std::string>> metadata;
};

/// The ONNX file's bytes, checked. Throws netsmith::Error naming the node (and the opset that
/// would work) when a node cannot be exported at `options.opset`, and when the decoder is asked
/// for a model whose output is no detection head.
std::string buildOnnx(const ExportModel& model, const OnnxOptions& options);

/// Reads back an ONNX file's metadata_props and opset (for tests and reports).
struct OnnxInfo {
  int opset = 0;
  std::int64_t irVersion = 0;
  std::vector<std::pair<std::string, std::string>> metadata;
  std::vector<std::string> inputs, outputs, initializers;
  std::vector<std::string> opTypes;
};
OnnxInfo inspectOnnx(const std::string& bytes);

}  // namespace netsmith::exporting
