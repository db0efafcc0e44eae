#pragma once

// A standalone, readable model.py: an nn.Module with one attribute per node (named after the
// node ids, so the safetensors weights load with strict=True), a forward that follows the
// graph, the preprocessing constants, and a few-line safetensors reader.
#include <string>

#include "export/export_model.h"

namespace netsmith::exporting {

/// The text of model.py. Throws netsmith::Error naming a node that has no PyTorch emitter.
/// `boxDecoder` (the task's ExportNotes::boxDecoder): the module also gets decode().
std::string generatePyTorch(const ExportModel& model, bool boxDecoder = false);

}  // namespace netsmith::exporting
