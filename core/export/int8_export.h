#pragma once

// int8 export: a float ONNX file quantised statically (onnx_quantize.h), its activation ranges
// calibrated by running real images through the float model in ONNX Runtime, which runs and
// checks the int8 file too. No LibTorch here.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "export/onnx_quantize.h"
#include "export/onnx_runtime.h"

namespace netsmith::exporting {

struct Int8Options {
  double percentile = 99.99;  ///< clippedRange's rule for every activation
  std::int64_t maxSamplesPerValue = std::int64_t(1) << 20;    ///< subsampled beyond this
  std::vector<std::pair<std::string, std::string>> metadata;  ///< added to the file's
};

struct Int8Model {
  std::string bytes;
  QuantizePlan plan;
  std::int64_t calibrationImages = 0;
};

/// Calibrates on `calibration` (batches N x C x H x W of the model's input "input") and returns
/// the QDQ model. Throws netsmith::Error when there is no calibration image, the model cannot
/// be quantised, or ONNX Runtime refuses it.
Int8Model quantizeWithCalibration(const OnnxRuntimeLocation& ort, const std::string& floatBytes,
                                  const std::vector<HostTensor>& calibration,
                                  const Int8Options& options = {});

}  // namespace netsmith::exporting
