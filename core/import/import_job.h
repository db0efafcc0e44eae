#pragma once

// The whole import as one call, shared by `netsmith-cli import` and the studio's File > Import
// model: read and convert the ONNX file, apply the fine-tuning edits, then write the weights
// and the project (nothing is written when any step fails). No LibTorch in this header.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "graph/model_graph.h"
#include "import/onnx_graph.h"
#include "ops/op_registry.h"

namespace netsmith::import {

struct ImportRequest {
  std::string model;    ///< the .onnx file
  std::string project;  ///< the .netsmith.json to write
  std::string weights;  ///< "" : next to the project, <stem>.safetensors
  std::optional<graph::InputSpec> input;
  std::int64_t classes = 0;      ///< 0: not checked
  std::int64_t replaceHead = 0;  ///< 0: keep the head; N: N outputs, new weights
  std::string freezeTo;          ///< "" : nothing frozen
  std::string lrMultTo;          ///< "" : every node at the base rate; else this node and those
  double lrMult = 1.0;           ///< before it train at lrMult x the rate
  bool overwrite = false;        ///< replace existing files
};

struct ImportSummary {
  std::string projectPath, weightsPath;  ///< absolute
  std::string producer;
  std::int64_t opset = 0;
  std::int64_t nodes = 0, params = 0, trainable = 0, outputs = 0;
  graph::InputSpec input;
  std::string head;                 ///< the replaced head, if any
  std::vector<std::string> frozen;  ///< ids frozen
  std::vector<std::string> notes;   ///< what was rewritten
};

/// Throws UnsupportedOps (every refused node) or netsmith::Error (the file, the edits, or an
/// existing file without `overwrite`), in both cases before anything is written.
ImportSummary runImportJob(const ImportRequest& request, const ops::OpRegistry& registry);

/// "resnet18.netsmith.json" -> "resnet18".
std::string projectStem(const std::string& projectPath);

}  // namespace netsmith::import
