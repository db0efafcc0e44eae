#pragma once

// A standalone, readable model.py: an nn.Module with one attribute per node (named after the
// node ids, so the safetensors weights load with strict=True), a forward that follows the
// graph, the preprocessing constants, and a few-line safetensors reader.
#include <string>

#include "export/export_model.h"

namespace netsmith::exporting {

/// The text of model.py. Throws netsmith::Error naming a node that has no PyTorch emitter.
std::string generatePyTorch(const ExportModel& model);

}  // namespace netsmith::exporting
