#pragma once

// What an ONNX file costs to run, read from the file alone (any producer's): its size, the
// parameters of its weighted nodes and the multiply-accumulates of one image, from ONNX's own
// shape inference. No LibTorch, no protobuf here.
#include <cstdint>
#include <string>
#include <vector>

namespace netsmith::exporting {

struct OnnxCost {
  std::int64_t fileBytes = 0;
  std::string inputName;
  std::vector<std::int64_t> inputDims;  ///< per image (C, H, W): the batch dimension left out
  /// Elements of the weights and biases of Conv, ConvTranspose, Gemm, MatMul, PRelu and
  /// BatchNormalization's scale and shift (a running mean or variance is no parameter), read
  /// through a DequantizeLinear where the weight is stored quantised.
  std::int64_t parameters = 0;
  /// Multiply-accumulates of one image in Conv, ConvTranspose, Gemm and MatMul; -1 when shape
  /// inference left a weighted node's shapes unknown.
  std::int64_t macs = 0;
  std::int64_t quantizedWeights = 0;  ///< of the parameters, those stored as int8 or uint8
  std::vector<std::string> outputs;
};

/// Reads the file (at most 2 GiB) and works out its cost. Throws netsmith::Error naming the file
/// when it is no ONNX model or its input is not one image of fixed C x H x W.
OnnxCost onnxCost(const std::string& path);

}  // namespace netsmith::exporting
