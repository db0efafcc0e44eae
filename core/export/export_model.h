#pragma once

// What every exporter works from: a checkpoint's model, weights and preprocessing, loaded
// (checkpoint::loadModel), with the metadata the exports write.
#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "checkpoint/loaded_model.h"
#include "common/json.h"
#include "graph/graph_module.h"
#include "ops/op_registry.h"
#include "project/project.h"

namespace netsmith::exporting {

/// A trained model ready to export (checkpoint/loaded_model.h) and what the exports record
/// about it.
struct ExportModel : checkpoint::LoadedModel {
  /// metadata_props / safetensors __metadata__: classes, input size, channel order, mean/std.
  std::vector<std::pair<std::string, std::string>> metadata() const;
};

/// Loads a checkpoint for export, or a project whose weights come from its init_from (an
/// imported model, before any training); throws netsmith::Error naming the file.
ExportModel loadExportModel(const std::string& checkpointPath, const RegistriesPtr& registries);
/// Wraps a project's model with its current weights (e.g. a freshly built module).
ExportModel exportModelFrom(const project::Project& project, graph::GraphModule net,
                            std::shared_ptr<const ops::OpRegistry> registry);

}  // namespace netsmith::exporting
