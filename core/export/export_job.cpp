#include "export/export_job.h"

#include <filesystem>

#include "augment/transform.h"
#include "common/error.h"
#include "data/data_loader.h"
#include "data/named_paths.h"
#include "data/project_data.h"
#include "export/exporter.h"
#include "registries/registries.h"
#include "run/run_layout.h"

namespace netsmith::exporting {

namespace fs = std::filesystem;

namespace {

/// Up to `count` real samples of the checkpoint's data (test split first, or with
/// `trainingFirst` the training split first), preprocessed as in evaluation, for the parity check
/// or an int8 export's calibration. Empty with `why` set when the data cannot be opened.
std::vector<ParityBatch> realSamples(const ExportModel& model, const Registries& registries,
                                     std::int64_t count, bool dataFromCheckpoint, std::string& why,
                                     bool trainingFirst = false) {
  if (count <= 0 || !model.project.data.is_object() || model.project.data.empty()) {
    why = count <= 0 ? "not asked" : "the project has no data section";
    return {};
  }
  if (!dataFromCheckpoint && !model.dataNamed) {
    const std::string home = data::checkpointHome(model.source);
    const auto unnamed = data::unnamedDataPaths(model.project.data, model.baseDir, home);
    if (!unnamed.empty()) {
      why = "its data (" + unnamed.front() + (unnamed.size() > 1 ? ", ..." : "") +
            ") is outside the checkpoint's folder and named by no project file there; "
            "--data-from-checkpoint reads it";
      return {};
    }
  }
  try {
    auto project = model.project;
    project.augment = Json::array();
    if (!model.mean.empty())
      project.data["normalize"] = Json{{"mean", model.mean}, {"std", model.std}};
    auto pd = data::openProjectData(project, model.baseDir, registries.transforms, "");
    if (!pd) {
      why = "the data could not be opened";
      return {};
    }
    data::SampleSet set = !pd->data.test.empty()         ? pd->data.test
                          : !pd->data.validation.empty() ? pd->data.validation
                                                         : pd->data.train;
    if (trainingFirst && !pd->data.train.empty()) set = pd->data.train;
    if (set.size() > count) set.indices.resize(static_cast<std::size_t>(count));
    data::LoaderOptions lo;
    lo.batchSize = count;
    lo.training = false;
    lo.shuffle = false;
    lo.workers = 1;
    data::DataLoader loader(set, *pd->processor, lo);
    loader.startEpoch(0);
    auto batch = loader.next();
    if (!batch) {
      why = "the data has no sample";
      return {};
    }
    return {{set.name + " data x" + std::to_string(batch->images.size(0)), batch->images}};
  } catch (const std::exception& e) {
    why = e.what();
    return {};
  }
}

}  // namespace

std::vector<ExporterInfo> listExporters(const Registries& registries) {
  const auto& registry = *registries.exporters;
  std::vector<ExporterInfo> out;
  for (const auto& name : registry.names()) {
    const auto* e = registry.find(name);
    out.push_back({e->name, e->title, e->extension, e->help});
  }
  return out;
}

std::string defaultExportFolder(const std::string& checkpoint) {
  const fs::path ckpt(checkpoint);
  const std::string run = run_layout::runOfCheckpoint(checkpoint);
  const fs::path dir =
      !run.empty() ? fs::path(run_layout::runFile(run, run_layout::kExports)) : ckpt.parent_path();
  return dir.empty() ? std::string(".") : dir.string();
}

std::vector<std::pair<std::string, std::string>> defaultExportTargets(const std::string& checkpoint,
                                                                      const std::string& only) {
  return exportTargetsIn({}, checkpoint, only);
}

std::vector<std::pair<std::string, std::string>> exportTargetsIn(const std::string& folder,
                                                                 const std::string& checkpoint,
                                                                 const std::string& only) {
  const fs::path dir(folder.empty() ? defaultExportFolder(checkpoint) : folder);
  const std::string stem = fs::path(checkpoint).stem().string();
  std::vector<std::pair<std::string, std::string>> all = {
      {"onnx", (dir / (stem + ".onnx")).string()},
      {"safetensors", (dir / (stem + "-weights.safetensors")).string()},
      {"pytorch", (dir / (stem + ".py")).string()}};
  if (only.empty()) return all;
  if (only == "onnx-int8") return {{only, (dir / (stem + "-int8.onnx")).string()}};
  for (const auto& t : all)
    if (t.first == only) return {t};
  throw Error("unknown exporter \"" + only + "\"");
}

ExportJobResult runExportJob(const ExportJob& job) {
  const auto& registries = needRegistries(job.registries, "ExportJob");
  const auto& registry = *registries.exporters;
  auto targets = job.targets.empty() ? defaultExportTargets(job.checkpoint) : job.targets;
  for (const auto& t : targets)
    if (!registry.find(t.first)) throw Error("unknown exporter \"" + t.first + "\"");
  auto model = loadExportModel(job.checkpoint, job.registries);
  const task::TaskDef* taskDef = nullptr;
  try {
    taskDef = &registries.tasks.get(model.project.task);
    if (taskDef->prepareExport) taskDef->prepareExport(model);
  } catch (const Error& e) {
    throw Error(job.checkpoint + ": " + e.what());
  }
  const auto& notes = taskDef->exportNotes;
  if (job.softmax && !notes.classScores)
    throw Error(job.checkpoint + ": --softmax adds probabilities over classes, but the task \"" +
                taskDef->name + "\" outputs " + notes.outputDescription);
  if (job.temperature != 1) {
    if (!notes.classScores)
      throw Error(job.checkpoint + ": --temperature divides class scores, but the task \"" +
                  taskDef->name + "\" outputs " + notes.outputDescription);
    model.temperature = job.temperature;
  }
  if ((job.detectionDecoder || job.detectionNms) && !notes.boxDecoder) {
    const char* flag = job.detectionDecoder ? "--decoder" : "--nms";
    throw Error(job.checkpoint + ": " + flag + " adds a detector's decoding (boxes and scores" +
                (job.detectionNms ? ", non-maximum suppression" : "") + "), but the task \"" +
                taskDef->name + "\" outputs " + notes.outputDescription);
  }
  ExportRequest request;
  request.task = taskDef->name;
  request.notes = notes;
  request.onnx.opset = job.opset;
  request.onnx.softmax = job.softmax;
  // Classes and stride stay 0: buildOnnx takes them from the model's output and input.
  request.onnx.decoder.enabled = job.detectionDecoder || job.detectionNms;
  request.onnx.decoder.nms = job.detectionNms;
  request.keepFailed = job.keepFailed;
  ExportJobResult out;
  for (const auto& [name, path] : targets) {
    const fs::path parent = fs::path(path).parent_path();
    if (!parent.empty()) {
      std::error_code ec;
      fs::create_directories(parent, ec);
      if (ec) throw Error(parent.string() + ": cannot create the folder (" + ec.message() + ")");
    }
    request.path = path;
    if ((name == "onnx" || name == "onnx-int8") && request.samples.empty())
      request.samples =
          realSamples(model, registries, job.samples, job.dataFromCheckpoint, out.samplesNote);
    if (name == "onnx-int8" && request.calibration.empty()) {
      std::string why;
      request.calibration = realSamples(model, registries, job.calibration, job.dataFromCheckpoint,
                                        why, /*trainingFirst=*/true);
      if (request.calibration.empty())
        throw Error(job.checkpoint +
                    ": an int8 export calibrates on images of the training split; " + why);
    }
    const auto result = registry.find(name)->run(model, request);
    ExportOutcome o;
    o.format = result.format.empty() ? name : result.format;
    o.path = result.path;
    o.written = result.written;
    o.verified = result.verified;
    o.message = result.message;
    if (result.parity) {
      o.hasParity = true;
      o.paritySamples = result.parity->samples;
      o.maxAbsDiff = result.parity->maxAbsDiff;
      o.top1Agreement = result.parity->top1Agreement;
      o.tolerance = result.parity->tolerance;
    }
    o.json = result.toJson();
    if (name == "onnx" || name == "onnx-int8" || name == "safetensors")
      out.allVerified = out.allVerified && o.verified;
    out.outcomes.push_back(std::move(o));
  }
  return out;
}

}  // namespace netsmith::exporting
