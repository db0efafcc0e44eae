#include "export/exporter.h"

#include <cstdio>

#include "checkpoint/checkpoint.h"
#include "common/error.h"
#include "common/file_util.h"
#include "export/int8_export.h"
#include "export/onnx_runtime.h"
#include "export/pytorch_export.h"

namespace netsmith::exporting {

Json ExportResult::toJson() const {
  Json j{{"format", format},
         {"path", path},
         {"written", written},
         {"verified", verified},
         {"message", message}};
  if (parity) j["parity"] = parity->toJson();
  if (runtimeParity) j["onnxruntime_parity"] = runtimeParity->toJson();
  if (!runtimeNote.empty()) j["onnxruntime_note"] = runtimeNote;
  if (floatBytes > 0) {
    j["float_bytes"] = floatBytes;
    j["calibration_images"] = calibrationImages;
  }
  return j;
}

namespace {

/// What the files record about the task, after the model's own metadata.
std::vector<std::pair<std::string, std::string>> taskMetadata(const ExportRequest& request) {
  return {{"task", request.task},
          {"output", request.notes.output},
          {"output_description", request.notes.outputDescription},
          {"postprocessing", request.notes.postprocessing}};
}

/// What the ONNX file's outputs are, for the export's message.
std::string onnxOutputsText(const ExportRequest& request, const OnnxOptions& options, bool nmsRun) {
  const auto& decoder = options.decoder;
  std::string text = "output \"" + options.output + "\": " + request.notes.outputDescription;
  if (decoder.enabled) {
    text +=
        "; outputs \"boxes\" (N x L x 4, x0, y0, x1, y1 in input pixels, clipped) and "
        "\"scores\" (N x K x L) decode it";
  }
  if (decoder.enabled && decoder.nms) {
    text += std::string("; output \"selected\" (num x 3: batch, class, box index) from ") +
            "NonMaxSuppression" +
            (nmsRun ? " (run in ONNX Runtime only: OpenCV DNN 4.6 cannot run it)"
                    : ", checked by onnx::checker only (OpenCV DNN 4.6 cannot run it)") +
            ": take boxes[batch, index] and scores[batch, class, index], keep the 100 best "
            "per image";
  }
  return text;
}

ExportResult exportOnnx(const ExportModel& model, const ExportRequest& request) {
  ExportResult r;
  r.format = "onnx";
  r.path = request.path;
  OnnxOptions options = request.onnx;
  options.output = request.notes.output;
  options.metadata = taskMetadata(request);
  const std::string bytes = buildOnnx(model, options);
  // OpenCV DNN 4.6 cannot run NonMaxSuppression: its parity check runs the same graph without
  // it; ONNX Runtime runs the written file whole.
  const auto& decoder = options.decoder;
  std::string runnable;
  if (decoder.enabled && decoder.nms) {
    OnnxOptions withoutNms = options;
    withoutNms.decoder.nms = false;
    runnable = buildOnnx(model, withoutNms);
  }
  auto batches = randomParityBatches(model);
  batches.insert(batches.end(), request.samples.begin(), request.samples.end());
  std::string checks = "onnx::checker passed";
  bool passed = false;
  try {
    r.parity = checkOnnxParity(runnable.empty() ? bytes : runnable, model, batches, 1e-4,
                               options.output, decoder.enabled);
    passed = r.parity->passed();
    checks += "; " + r.parity->summary();
  } catch (const Error& e) {
    checks += std::string(", but the parity check in OpenCV DNN failed: ") + e.what();
  }
  if (const auto ort = findOnnxRuntime(&r.runtimeNote)) {
    try {
      r.runtimeParity =
          checkOnnxRuntimeParity(*ort, bytes, model, batches, 1e-4, options.output, decoder.enabled,
                                 decoder.nms, decoder.scoreThreshold);
      passed = passed && r.runtimeParity->passed();
      checks += "; " + r.runtimeParity->summary();
    } catch (const Error& e) {
      passed = false;
      checks += "; the parity check in " + ort->name() + " failed: " + e.what();
    }
  } else {
    checks += " (" + r.runtimeNote + ")";
  }
  r.verified = passed;
  r.message = checks + "; " + onnxOutputsText(request, options, r.runtimeParity.has_value());
  if (r.verified || request.keepFailed) {
    writeFileAtomically(request.path, bytes);
    r.written = true;
  } else {
    r.message += "; the file was not written (ask to keep it to inspect it)";
  }
  return r;
}

/// "3.33 MiB", "12.4 KiB".
std::string fileSize(std::int64_t bytes) {
  char buf[32];
  if (bytes >= (1 << 20))
    std::snprintf(buf, sizeof buf, "%.2f MiB", double(bytes) / (1024.0 * 1024.0));
  else
    std::snprintf(buf, sizeof buf, "%.1f KiB", double(bytes) / 1024.0);
  return buf;
}

/// The int8 file: the float export quantised (int8_export.h), calibrated on the training split
/// and checked in ONNX Runtime against LibTorch's float model: its outputs within 5% of their
/// mean size on average and, for class scores on real samples, the same class for 99% of them.
ExportResult exportOnnxInt8(const ExportModel& model, const ExportRequest& request) {
  ExportResult r;
  r.format = "onnx-int8";
  r.path = request.path;
  std::string whyNot;
  const auto ort = findOnnxRuntime(&whyNot);
  if (!ort) throw Error("an int8 export is calibrated and checked in ONNX Runtime: " + whyNot);
  if (request.calibration.empty())
    throw Error("an int8 export needs calibration images of the training split");
  OnnxOptions options = request.onnx;
  options.output = request.notes.output;
  options.metadata = taskMetadata(request);
  const std::string floatBytes = buildOnnx(model, options);
  r.floatBytes = std::int64_t(floatBytes.size());
  Int8Options int8;
  int8.percentile = request.int8Percentile;
  const auto calibration = toHostTensors(request.calibration);
  std::int64_t images = 0;
  for (const auto& t : calibration)
    images += t.dims.at(0);
  char rule[256];
  std::snprintf(rule, sizeof rule,
                "int8 QDQ: weights int8 per output channel (symmetric), biases int32, activations "
                "uint8 per tensor over the %g-%g percentile range of %lld training images",
                100 - int8.percentile, int8.percentile, static_cast<long long>(images));
  int8.metadata = {{"quantization", rule}};
  const auto q = quantizeWithCalibration(*ort, floatBytes, calibration, int8);
  r.calibrationImages = q.calibrationImages;
  const bool real = !request.samples.empty();
  const auto batches = real ? request.samples : randomParityBatches(model);
  const auto& decoder = options.decoder;
  try {
    r.runtimeParity = checkOnnxRuntimeParity(*ort, q.bytes, model, batches, 1e30, options.output,
                                             decoder.enabled, decoder.nms, decoder.scoreThreshold);
  } catch (const Error& e) {
    r.message = std::string("the int8 file does not run in ") + ort->name() + ": " + e.what();
    r.verified = false;
  }
  if (r.runtimeParity) {
    const auto& p = *r.runtimeParity;
    const bool classes = request.notes.classScores && real;
    r.verified = p.relativeMeanDiff() <= 0.05 && (!classes || p.top1Agreement >= 0.99);
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "int8 %s (%s vs LibTorch's float model): %lld samples (%s), mean abs diff %.3g "
                  "(%.2f%% of the mean output, at most 5%%)",
                  r.verified ? "checked" : "FAILED", ort->name().c_str(),
                  static_cast<long long>(p.samples), real ? "real data" : "random inputs",
                  p.meanAbsDiff(), 100 * p.relativeMeanDiff());
    r.message = buf;
    if (request.notes.classScores) {
      std::snprintf(buf, sizeof buf, ", top-1 agreement %.2f%%%s", 100 * p.top1Agreement,
                    real ? " (at least 99%)" : " (not judged on random inputs)");
      r.message += buf;
    }
    std::snprintf(buf, sizeof buf,
                  ", max abs diff %.3g; %s -> %s (%.2fx); %lld weighted nodes and %lld "
                  "activations quantised, %lld nodes left in float; calibrated on %lld training "
                  "images",
                  p.maxAbsDiff, fileSize(r.floatBytes).c_str(),
                  fileSize(std::int64_t(q.bytes.size())).c_str(),
                  double(q.bytes.size()) / double(r.floatBytes),
                  static_cast<long long>(q.plan.weightedNodes),
                  static_cast<long long>(q.plan.values.size()),
                  static_cast<long long>(q.plan.floatNodes.size()),
                  static_cast<long long>(q.calibrationImages));
    r.message += buf;
  }
  if (r.verified || request.keepFailed) {
    writeFileAtomically(request.path, q.bytes);
    r.written = true;
  } else {
    r.message += "; the file was not written (ask to keep it to inspect it)";
  }
  return r;
}

ExportResult exportSafetensors(const ExportModel& model, const ExportRequest& request) {
  ExportResult r;
  r.format = "safetensors";
  r.path = request.path;
  std::map<std::string, std::string> meta{{"format", "pt"}};
  for (const auto& [k, v] : model.metadata())
    meta[k] = v;
  for (const auto& [k, v] : taskMetadata(request))
    meta[k] = v;
  const std::string bytes = checkpoint::encodeSafetensors(model.weights, meta);
  // Verify by reading the bytes back: every tensor present, equal to the model's.
  writeFileAtomically(request.path, bytes);
  r.written = true;
  const auto back = checkpoint::readSafetensors(request.path);
  r.verified = back.tensors.size() == model.weights.size();
  for (std::size_t i = 0; r.verified && i < back.tensors.size(); ++i) {
    r.verified = back.tensors[i].first == model.weights[i].first &&
                 torch::equal(back.tensors[i].second, model.weights[i].second.cpu());
  }
  r.message = std::to_string(model.weights.size()) + " tensors" +
              (r.verified ? ", read back equal" : ", READ-BACK MISMATCH");
  return r;
}

ExportResult exportPyTorch(const ExportModel& model, const ExportRequest& request) {
  ExportResult r;
  r.format = "pytorch";
  r.path = request.path;
  writeFileAtomically(request.path, generatePyTorch(model, request.notes.boxDecoder));
  r.written = true;
  r.message = "model.py with its own safetensors reader (run it with the weights to check)";
  return r;
}

}  // namespace

ExporterRegistry ExporterRegistry::withBuiltins() {
  ExporterRegistry r;
  r.add({"onnx", "ONNX (.onnx)", ".onnx",
         "ONNX graph with weights as initializers, verified in OpenCV DNN and ONNX Runtime",
         "Export", exportOnnx});
  r.add({"onnx-int8", "ONNX int8 (-int8.onnx)", "-int8.onnx",
         "the ONNX graph quantised to int8 (QDQ) from calibration images of the training split, "
         "checked in ONNX Runtime against the float model",
         "Export", exportOnnxInt8});
  r.add({"safetensors", "Safetensors weights (.safetensors)", ".safetensors",
         "the weights under the graph's names, with preprocessing metadata", "Export",
         exportSafetensors});
  r.add({"pytorch", "PyTorch code (.py)", ".py",
         "a standalone nn.Module that loads the safetensors weights", "Export", exportPyTorch});
  return r;
}

}  // namespace netsmith::exporting
