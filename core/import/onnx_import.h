#pragma once

// ONNX classifier -> Netsmith model graph + weights (core/import, shared by the CLI's `import`
// and the studio's File > Import model). See docs/architecture.md, "Import".
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/safetensors.h"
#include "graph/model_graph.h"
#include "import/onnx_graph.h"
#include "ops/op_registry.h"
#include "project/project.h"

namespace netsmith::import {

struct ImportOptions {
  /// The model input (channels x height x width) when the file's is symbolic or to override it.
  std::optional<graph::InputSpec> input;
  /// The class count, when the file does not say (only checked against the output).
  std::int64_t classes = 0;
};

struct ImportResult {
  graph::ModelGraph model;
  checkpoint::NamedTensors weights;  ///< "<node>.weight", "<node>.running_mean", ...
  std::vector<std::string> notes;    ///< what the import rewrote ("Clip(0, 6) -> ReLU6: 35 nodes")
  std::int64_t opset = 0;
  std::string producer;
  std::int64_t outputs = 0;          ///< the output's width (classes)
  std::vector<std::string> classes;  ///< from Netsmith's own metadata, when present
  std::vector<double> mean, std;     ///< likewise
};

/// Converts a read ONNX graph. Throws UnsupportedOps, or netsmith::Error for a graph that is
/// not a single-input image classifier (with the reason). The model is laid out top to bottom.
ImportResult importOnnxGraph(const OnnxGraph& graph, const std::string& source,
                             const ImportOptions& options, const ops::OpRegistry& registry);
ImportResult importOnnx(const std::string& path, const ImportOptions& options,
                        const ops::OpRegistry& registry);

/// A project around an imported model: its weights file as train.init_from (a path relative to
/// the project file), and the data section left to the user (the default project's data when
/// the input is 1x28x28). `weightsFile` is written by the caller.
project::Project importedProject(const ImportResult& result, const std::string& name,
                                 const std::string& weightsFile);

}  // namespace netsmith::import
