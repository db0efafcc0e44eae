// export: ONNX (verified in OpenCV DNN), safetensors weights and PyTorch code from a checkpoint.
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "augment/transform.h"
#include "cli/cli_args.h"
#include "cli/cli_commands.h"
#include "data/data_loader.h"
#include "data/project_data.h"
#include "export/exporter.h"

namespace netsmith::cli {

namespace {

/// Up to `count` real samples of the checkpoint's data (test split first), preprocessed as in
/// evaluation, for the parity check. Empty with `why` set when the data cannot be opened.
std::vector<exporting::ParityBatch> realSamples(const exporting::ExportModel& model,
                                                std::int64_t count, std::string& why) {
  if (count <= 0 || !model.project.data.is_object() || model.project.data.empty()) {
    why = count <= 0 ? "not asked" : "the project has no data section";
    return {};
  }
  try {
    auto project = model.project;
    project.augment = Json::array();
    if (!model.mean.empty())
      project.data["normalize"] = Json{{"mean", model.mean}, {"std", model.std}};
    auto pd = data::openProjectData(project, model.baseDir,
                                    augment::TransformRegistry::withBuiltins(), "");
    if (!pd) return {};
    data::SampleSet set = !pd->data.test.empty()         ? pd->data.test
                          : !pd->data.validation.empty() ? pd->data.validation
                                                         : pd->data.train;
    if (set.size() > count) set.indices.resize(static_cast<std::size_t>(count));
    data::LoaderOptions lo;
    lo.batchSize = count;
    lo.training = false;
    lo.shuffle = false;
    lo.workers = 1;
    data::DataLoader loader(set, *pd->processor, lo);
    loader.startEpoch(0);
    auto batch = loader.next();
    if (!batch) return {};
    return {{set.name + " data x" + std::to_string(batch->images.size(0)), batch->images}};
  } catch (const std::exception& e) {
    why = e.what();
    return {};
  }
}

}  // namespace

int runExport(const std::vector<std::string>& words) {
  const Args args(words, {"--json", "--softmax", "--keep-failed"},
                  {"--onnx", "--opset", "--safetensors", "--pytorch", "--samples"});
  const std::string& ckpt = args.one("CHECKPOINT");
  const int opset = static_cast<int>(args.integer("--opset", 13, 11, 17));
  const auto samples = args.integer("--samples", 16, 0, 4096);

  std::vector<std::pair<std::string, std::string>> wanted;  // exporter, path
  for (const char* name : {"onnx", "safetensors", "pytorch"}) {
    const std::string path = args.option(std::string("--") + name);
    if (!path.empty()) wanted.emplace_back(name, path);
  }
  const auto model = exporting::loadExportModel(ckpt);
  if (wanted.empty()) {
    // Everything, into the run's exports/ folder (or next to the checkpoint).
    namespace fs = std::filesystem;
    const fs::path dir = fs::path(ckpt).parent_path().filename() == "checkpoints"
                             ? fs::path(ckpt).parent_path().parent_path() / "exports"
                             : fs::path(ckpt).parent_path();
    fs::create_directories(dir.empty() ? fs::path(".") : dir);
    const std::string stem = fs::path(ckpt).stem().string();
    wanted = {{"onnx", (dir / (stem + ".onnx")).string()},
              {"safetensors", (dir / (stem + "-weights.safetensors")).string()},
              {"pytorch", (dir / (stem + ".py")).string()}};
  }

  const auto registry = exporting::ExporterRegistry::withBuiltins();
  std::string why;
  exporting::ExportRequest request;
  request.onnx.opset = opset;
  request.onnx.softmax = args.has("--softmax");
  request.keepFailed = args.has("--keep-failed");
  bool allVerified = true;
  Json results = Json::array();
  for (const auto& [name, path] : wanted) {
    request.path = path;
    if (name == "onnx" && request.samples.empty())
      request.samples = realSamples(model, samples, why);
    const auto result = registry.find(name)->run(model, request);
    if (name == "onnx" || name == "safetensors") allVerified = allVerified && result.verified;
    if (args.has("--json")) {
      results.push_back(result.toJson());
    } else {
      std::printf("%s: %s%s\n  %s\n", name.c_str(), result.written ? "" : "(not written) ",
                  result.path.c_str(), result.message.c_str());
      if (name == "onnx" && request.samples.empty())
        std::printf("  (random inputs only: no real samples, %s)\n", why.c_str());
    }
  }
  if (args.has("--json"))
    std::cout << Json{{"checkpoint", ckpt}, {"exports", results}}.dump(2) << '\n';
  return allVerified ? kExitOk : kExitFailure;
}

}  // namespace netsmith::cli
