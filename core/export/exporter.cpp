#include "export/exporter.h"

#include "checkpoint/checkpoint.h"
#include "common/error.h"
#include "common/file_util.h"
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
std::string onnxOutputsText(const ExportRequest& request, const OnnxOptions& options,
                            bool nmsRun) {
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
      r.runtimeParity = checkOnnxRuntimeParity(*ort, bytes, model, batches, 1e-4, options.output,
                                               decoder.enabled, decoder.nms,
                                               decoder.scoreThreshold);
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
         "ONNX graph with weights as initializers, verified in OpenCV DNN and ONNX Runtime", "Export", exportOnnx});
  r.add({"safetensors", "Safetensors weights (.safetensors)", ".safetensors",
         "the weights under the graph's names, with preprocessing metadata", "Export",
         exportSafetensors});
  r.add({"pytorch", "PyTorch code (.py)", ".py",
         "a standalone nn.Module that loads the safetensors weights", "Export", exportPyTorch});
  return r;
}

}  // namespace netsmith::exporting
