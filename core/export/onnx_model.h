#pragma once

// An ONNX file that Netsmith exported (float or int8), loaded to use: what its metadata records
// (the project snapshot, classes, normalisation, the data's fit, the task's state as it applies
// to the file's output) as a checkpoint::LoadedModel whose forward() runs the file in ONNX
// Runtime (export/onnx_runtime.h). `predict` and `eval --onnx` use it, and the studio's Predict
// page, so an exported file is judged by the same preprocessing and task code as its checkpoint.
#include <functional>
#include <string>

#include <torch/torch.h>

#include "checkpoint/loaded_model.h"
#include "registries/registries_fwd.h"

namespace netsmith::exporting {

/// Whether `path` names an ONNX file (by its extension, as the CLI and the studio choose).
bool isOnnxPath(const std::string& path);

/// What an exported file records, read from its metadata_props. Throws netsmith::Error naming
/// the file: not an ONNX model, no Netsmith metadata (a file exported elsewhere: import it
/// first), a project snapshot with problems, a model larger than the file could hold.
struct OnnxModelFile {
  checkpoint::LoadedModel model;  ///< net null; forward() is not set up (see loadOnnxModel)
  std::string output;             ///< the output that holds the model's own output
};
OnnxModelFile readOnnxModelFile(const std::string& path, const RegistriesPtr& registries);

/// The file ready to run: readOnnxModelFile's model, its forward() running each batch in ONNX
/// Runtime (one child process per call) and returning the output named in the metadata.
/// Throws netsmith::Error naming the file, or saying why ONNX Runtime cannot be found.
checkpoint::LoadedModel loadOnnxModel(const std::string& path, const RegistriesPtr& registries);

/// A checkpoint, a project with its init_from's weights, or an exported ONNX file.
checkpoint::LoadedModel loadAnyModel(const std::string& path, const RegistriesPtr& registries);

}  // namespace netsmith::exporting
