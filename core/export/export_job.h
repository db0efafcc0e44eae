#pragma once

// Exporting a checkpoint in one call, for the CLI's `export` and the studio's Export menu. No
// LibTorch in this header: the UI includes it.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/json.h"
#include "registries/registries_fwd.h"

namespace netsmith::exporting {

/// One entry of the exporter registry, as a menu shows it.
struct ExporterInfo {
  std::string name;       ///< "onnx"
  std::string title;      ///< "ONNX (.onnx)"
  std::string extension;  ///< ".onnx"
  std::string help;
};
/// What the registries' exporters are, in their order.
std::vector<ExporterInfo> listExporters(const Registries& registries);

struct ExportJob {
  std::string checkpoint;
  /// (exporter name, output path); empty: every exporter into defaultExportFolder().
  std::vector<std::pair<std::string, std::string>> targets;
  int opset = 13;
  bool softmax = false;
  /// A detector's ONNX file also outputs "boxes" and "scores" (OnnxOptions::DetectionDecoder;
  /// classes and stride from the model's output); refused for another task.
  bool detectionDecoder = false;
  /// And "selected" from a NonMaxSuppression node (implies detectionDecoder).
  bool detectionNms = false;
  bool keepFailed = false;
  /// Temperature scaling (eval --fit-temperature): every export's output is the model's
  /// divided by it, before --softmax. Refused for a task without class scores.
  double temperature = 1;
  std::int64_t samples = 16;  ///< real samples (test split first) for the ONNX parity check
  /// Images of the training split (preprocessed as in evaluation) that calibrate an int8
  /// export's activation ranges (the "onnx-int8" exporter).
  std::int64_t calibration = 256;
  /// Take those samples from the checkpoint's data even where no project file the user has names
  /// it (see data/named_paths.h); otherwise such data is not read and random inputs are used.
  bool dataFromCheckpoint = false;
  /// The program's registries: its ops build the model, its exporters write the files, and
  /// the checkpoint's task among its tasks says what the exports add (TaskDef::exportNotes).
  RegistriesPtr registries;
};

/// One exporter's outcome, flattened for display.
struct ExportOutcome {
  std::string format;
  std::string path;
  bool written = false;
  bool verified = false;
  std::string message;
  bool hasParity = false;
  std::int64_t paritySamples = 0;
  double maxAbsDiff = 0;
  double top1Agreement = 0;
  double tolerance = 0;
  Json json;  ///< ExportResult::toJson()
};

struct ExportJobResult {
  std::vector<ExportOutcome> outcomes;
  std::string samplesNote;  ///< why the parity check used random inputs only (empty: real data)
  bool allVerified = true;  ///< every ONNX / safetensors file verified
};

/// The run's exports/ folder for a checkpoint under <run>/checkpoints/, else the checkpoint's
/// folder.
std::string defaultExportFolder(const std::string& checkpoint);
/// Default targets: <folder>/<stem>.onnx, <stem>-weights.safetensors, <stem>.py; or only
/// `only` when it names an exporter ("onnx-int8": <stem>-int8.onnx, never a default).
std::vector<std::pair<std::string, std::string>> defaultExportTargets(const std::string& checkpoint,
                                                                      const std::string& only = {});
/// The same file names in `folder` (the default folder when it is empty).
std::vector<std::pair<std::string, std::string>> exportTargetsIn(const std::string& folder,
                                                                 const std::string& checkpoint,
                                                                 const std::string& only = {});

/// Loads the checkpoint and runs the targets through the registry. Throws netsmith::Error when
/// the checkpoint cannot be read or the model cannot be exported at all; a failed verification
/// is reported in the outcome instead.
ExportJobResult runExportJob(const ExportJob& job);

}  // namespace netsmith::exporting
