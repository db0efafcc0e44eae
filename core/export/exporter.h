#pragma once

// The exporters behind one small interface, in a registry: the GUI's Export menu and
// `netsmith-cli export` list what the registry holds.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/named_registry.h"
#include "export/export_model.h"
#include "export/onnx_export.h"
#include "export/onnx_parity.h"
#include "task/task_registry.h"

namespace netsmith::exporting {

struct ExportRequest {
  std::string path;
  /// The model's task and what an export adds for it (the ONNX output's name, metadata and
  /// report).
  std::string task = task::kClassification;
  task::ExportNotes notes = task::classificationExportNotes();
  OnnxOptions onnx;                  ///< output and metadata come from `task` and `notes`
  bool keepFailed = false;           ///< keep a file whose verification failed
  std::vector<ParityBatch> samples;  ///< real samples for the ONNX parity check
  /// Images of the training split that calibrate an int8 export ("onnx-int8").
  std::vector<ParityBatch> calibration;
  double int8Percentile = 99.99;  ///< the activations' range rule (onnx_quantize.h)
};

struct ExportResult {
  std::string format;  ///< "onnx"
  std::string path;
  bool written = false;  ///< the file is on disk
  bool verified = false;
  std::string message;                 ///< what was checked, or why it failed
  std::optional<ParityReport> parity;  ///< in OpenCV DNN
  /// In ONNX Runtime, where findOnnxRuntime() finds it; otherwise `runtimeNote` says why not.
  std::optional<ParityReport> runtimeParity;
  std::string runtimeNote;
  /// An int8 export: the float file's size it is compared with, and calibration images used.
  std::int64_t floatBytes = 0, calibrationImages = 0;
  Json toJson() const;
};

struct Exporter {
  std::string name;       ///< "onnx", "safetensors", "pytorch"
  std::string title;      ///< menu text: "ONNX (.onnx)"
  std::string extension;  ///< ".onnx"
  std::string help;
  std::string group = "Export";
  /// Writes the file atomically (nothing partial on failure); throws netsmith::Error when the
  /// model cannot be exported at all.
  std::function<ExportResult(const ExportModel& model, const ExportRequest& request)> run;
};

class ExporterRegistry : public NamedRegistry<Exporter> {
 public:
  static ExporterRegistry withBuiltins();
};

}  // namespace netsmith::exporting
