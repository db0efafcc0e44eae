#pragma once

// Pieces of the ONNX importer shared by its files (not an API): node ids from ONNX names and
// constants as tensors.
#include <torch/torch.h>

#include <string>
#include <utility>
#include <vector>

#include "graph/model_graph.h"
#include "import/onnx_graph.h"

namespace netsmith::import {

/// "/layer1/layer1.0/conv1/Conv" -> "layer1_0_conv1"; "Conv_12" -> "conv_12"; "" -> "conv".
std::string idFromName(const OnnxNode& n);
/// A constant as a float tensor of its shape (integers converted).
torch::Tensor toTensor(const OnnxTensor& t);

struct ImportResult;

/// A note when the model has no BatchNorm but biased convolutions: an eval-mode export folded it.
void noteFoldedBatchNorm(const graph::ModelGraph& model, std::vector<std::string>& notes);
/// Netsmith's own export metadata (classes, mean/std) into `r`; unreadable keys become notes.
void readNetsmithMetadata(const std::vector<std::pair<std::string, std::string>>& metadata,
                          ImportResult& r);

}  // namespace netsmith::import
