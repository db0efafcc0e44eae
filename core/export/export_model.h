#pragma once

// What every exporter works from: a checkpoint's model, weights and preprocessing, loaded.
#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "checkpoint/safetensors.h"
#include "common/json.h"
#include "graph/graph_module.h"
#include "ops/op_registry.h"
#include "project/project.h"

namespace netsmith::exporting {

/// A trained model ready to export: the graph, its LibTorch module (eval mode, weights
/// loaded) and what a consumer needs to preprocess inputs.
struct ExportModel {
  project::Project project;
  std::string baseDir;  ///< relative data paths resolve from here (data::checkpointBaseDir)
  std::shared_ptr<ops::OpRegistry> registry;
  mutable graph::GraphModule net{nullptr};  ///< forward() runs it (eval mode)
  checkpoint::NamedTensors weights;         ///< moduleState(net)
  std::vector<std::string> classes;
  std::vector<double> mean, std;  ///< empty when unknown
  std::string source;             ///< the checkpoint path (or the project's)
  bool dataNamed = false;         ///< loaded from a project file the user named: so is its data

  /// LibTorch's output for `input` (N x C x H x W), no gradients.
  torch::Tensor forward(const torch::Tensor& input) const;
  /// metadata_props / safetensors __metadata__: classes, input size, channel order, mean/std.
  std::vector<std::pair<std::string, std::string>> metadata() const;
};

/// Loads a checkpoint for export, or a project whose weights come from its init_from (an
/// imported model, before any training); throws netsmith::Error naming the file.
ExportModel loadExportModel(const std::string& checkpointPath);
/// Wraps a project's model with its current weights (e.g. a freshly built module).
ExportModel exportModelFrom(const project::Project& project, graph::GraphModule net,
                            std::shared_ptr<ops::OpRegistry> registry);

}  // namespace netsmith::exporting
