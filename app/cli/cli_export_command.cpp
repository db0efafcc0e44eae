// export: ONNX (verified in OpenCV DNN and ONNX Runtime), safetensors weights and PyTorch code from
// a checkpoint.
#include <cstdio>
#include <iostream>

#include "cli/cli_args.h"
#include "cli/cli_commands.h"
#include "eval/calibration.h"
#include "export/export_job.h"

namespace netsmith::cli {

int runExport(const std::vector<std::string>& words, const RegistriesPtr& registries) {
  const Args args = commandArgs("export", words);
  exporting::ExportJob job;
  job.registries = registries;
  job.checkpoint = args.one("CHECKPOINT");
  job.opset = static_cast<int>(args.integer("--opset", 13, 11, 17));
  job.samples = args.integer("--samples", 16, 0, 4096);
  job.softmax = args.has("--softmax");
  if (!args.option("--temperature").empty())
    job.temperature = eval::readTemperature(args.option("--temperature"));
  job.detectionNms = args.has("--nms");  // implies --decoder: NMS works on its boxes and scores
  job.detectionDecoder = args.has("--decoder") || job.detectionNms;
  job.keepFailed = args.has("--keep-failed");
  job.dataFromCheckpoint = args.has("--data-from-checkpoint");
  // None named: everything, into the run's exports/ folder (or next to the checkpoint).
  for (const char* name : {"onnx", "safetensors", "pytorch"}) {
    const std::string path = args.option(std::string("--") + name);
    if (!path.empty()) job.targets.emplace_back(name, path);
  }
  job.calibration = args.integer("--calibration", 256, 1, 100000);
  if (!args.option("--calibration").empty() && !args.has("--int8"))
    throw UsageError("--calibration is for --int8");
  if (args.has("--int8")) {
    // Beside the float file: --onnx's name with -int8, or STEM-int8.onnx in the exports folder.
    const std::string onnx = args.option("--onnx");
    std::string path = exporting::defaultExportTargets(job.checkpoint, "onnx-int8").front().second;
    if (!onnx.empty()) {
      const auto dot = onnx.rfind('.');
      const auto slash = onnx.rfind('/');
      const bool hasExtension =
          dot != std::string::npos && (slash == std::string::npos || dot > slash);
      path = (hasExtension ? onnx.substr(0, dot) : onnx) + "-int8.onnx";
    }
    if (job.targets.empty()) job.targets = exporting::defaultExportTargets(job.checkpoint);
    job.targets.emplace_back("onnx-int8", path);
  }
  const auto result = exporting::runExportJob(job);
  if (args.has("--json")) {
    Json results = Json::array();
    for (const auto& o : result.outcomes)
      results.push_back(o.json);
    std::cout << Json{{"checkpoint", job.checkpoint}, {"exports", results}}.dump(2) << '\n';
  } else {
    for (const auto& o : result.outcomes) {
      std::printf("%s: %s%s\n  %s\n", o.format.c_str(), o.written ? "" : "(not written) ",
                  o.path.c_str(), o.message.c_str());
      if ((o.format == "onnx" || o.format == "onnx-int8") && !result.samplesNote.empty())
        std::printf("  (random inputs only: no real samples, %s)\n", result.samplesNote.c_str());
    }
  }
  return result.allVerified ? kExitOk : kExitFailure;
}

}  // namespace netsmith::cli
