#pragma once

// ONNX export: the graph serialised op by op with the ONNX protobuf classes (Debian's
// libonnx-dev), checked with onnx::checker. Protobuf stays inside onnx_export.cpp.
#include <string>

#include "export/export_model.h"

namespace netsmith::exporting {

struct OnnxOptions {
  int opset = 13;                 ///< 11 to 17
  bool softmax = false;           ///< also output "probabilities" (an appended Softmax)
  std::string output = "logits";  ///< the output's name (the task's ExportNotes::output)
  /// metadata_props after the model's own (the task and how to read its output).
  std::vector<std::pair<std::string, std::string>> metadata;
};

/// The ONNX file's bytes, checked. Throws netsmith::Error naming the node (and the opset that
/// would work) when a node cannot be exported at `options.opset`.
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
