#pragma once

// Static post-training quantisation of a float ONNX file into a QDQ graph (the form ONNX
// Runtime fuses into integer kernels): weights int8 per output channel (symmetric, 7 bits so
// that CPUs without VNNI cannot saturate their 16-bit pair sums), biases int32
// at the input's scale times the weight's, activations uint8 per tensor from calibrated ranges.
// Works on the file's bytes, whoever wrote it; protobuf stays inside onnx_quantize.cpp.
//
// Which values are quantised: the graph input and every value on the way to a weighted node
// (Conv, ConvTranspose, Gemm) made by a node integer kernels take (those, Relu, pooling, Add,
// Concat, Flatten, Reshape...). What comes after the last weighted node (its output, a
// temperature, a softmax, a detector's decoder, a regression's scaling) stays float. A
// BatchNormalization right after a Conv is folded into it first, and a value read only by a
// Relu gets no pair of its own (ONNX Runtime folds the Relu into the node before it).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace netsmith::exporting {

/// The float model made ready: BatchNormalization folded, and the values to calibrate.
struct QuantizePlan {
  std::string preparedBytes;            ///< the float model with BN folded (same outputs)
  std::string calibrationBytes;         ///< the same with every value in `values` an output
  std::vector<std::string> values;      ///< the activations to quantise, in graph order
  std::int64_t weightedNodes = 0;       ///< Conv, ConvTranspose and Gemm nodes quantised
  std::vector<std::string> floatNodes;  ///< "decoder/boxes (Mul)": nodes left in float
};

/// Throws netsmith::Error when the bytes are no ONNX model, its opset is below 13 (per-channel
/// DequantizeLinear), or it has no weighted node to quantise.
QuantizePlan planQuantization(const std::string& floatBytes);

/// A calibrated range: the values from `lo` to `hi` (lo <= 0 <= hi) map onto 0..255.
struct ActivationRange {
  double lo = 0, hi = 0;
};

/// The QDQ model: `plan`'s prepared model with every weight quantised and a QuantizeLinear /
/// DequantizeLinear pair after every value of `plan.values` (each needs its range). Checked by
/// onnx::checker. `metadata` is added to (or replaces) the model's metadata_props.
std::string quantizeQdq(const QuantizePlan& plan,
                        const std::map<std::string, ActivationRange>& ranges,
                        const std::vector<std::pair<std::string, std::string>>& metadata = {});

/// The uint8 scale and zero point of a range (ONNX's QuantizeLinear convention).
struct QuantParams {
  float scale = 1;
  std::uint8_t zeroPoint = 0;
};
QuantParams uint8Params(const ActivationRange& range);

/// The range of one activation from samples of it: the `percentile`th percentile of the values
/// above zero and the (100 - percentile)th of those below, widened to include 0 (a rule that
/// an outlier cannot stretch). `samples` may be a subsample; `min` and `max` are exact.
ActivationRange clippedRange(std::vector<float> samples, double percentile);

}  // namespace netsmith::exporting
