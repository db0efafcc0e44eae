#include "export/run_deploy.h"

#include <stdlib.h>

#include <filesystem>

#include "common/error.h"
#include "common/file_util.h"
#include "export/export_job.h"
#include "export/export_model.h"
#include "export/onnx_export.h"
#include "registries/registries.h"
#include "run/run_layout.h"

namespace netsmith::exporting {

namespace fs = std::filesystem;

Json measureRunDeploy(const std::string& runDir, const RegistriesPtr& registries,
                      const DeployBenchOptions& options) {
  const auto& r = needRegistries(registries, "measureRunDeploy");
  if (!run_layout::isRunFolder(runDir)) throw Error(runDir + ": not a run folder");
  requireRealFolder(runDir);
  std::string checkpoint = run_layout::checkpointIn(runDir, run_layout::kBest);
  if (!fs::is_regular_file(fs::symlink_status(checkpoint)))
    checkpoint = run_layout::checkpointIn(runDir, run_layout::kLast);
  if (!fs::is_regular_file(fs::symlink_status(checkpoint)))
    throw Error(runDir +
                ": no checkpoint to measure (checkpoints/best.safetensors or "
                "last.safetensors)");
  // The file `export` writes by default: the task's preparation (a regression's scaling folded
  // in), no decoder or softmax.
  auto model = loadExportModel(checkpoint, registries);
  const auto& def = r.tasks.get(model.project.task);
  if (def.prepareExport) def.prepareExport(model);
  OnnxOptions onnx;
  onnx.output = def.exportNotes.output;
  onnx.metadata = {{"task", def.name}, {"output", def.exportNotes.output}};
  const std::string bytes = buildOnnx(model, onnx);
  std::string folder = (fs::temp_directory_path() / "netsmith-deploy-XXXXXX").string();
  if (!::mkdtemp(folder.data())) throw IoError("cannot make a private folder like " + folder);
  const std::string path = folder + "/model.onnx";
  Json record;
  try {
    writeFileAtomically(path, bytes);
    record = benchOnnxModel(path, options).toJson();
  } catch (...) {
    std::error_code ec;
    fs::remove_all(folder, ec);
    throw;
  }
  std::error_code ec;
  fs::remove_all(folder, ec);
  record.erase("model");
  for (auto& runtime : record["runtimes"])
    runtime.erase("batch1_ms");
  record["checkpoint"] = fs::relative(checkpoint, runDir).string();
  record["measured"] = localTimeText("%Y-%m-%d %H:%M:%S");
  writeFileAtomically(run_layout::runFile(runDir, run_layout::kDeploy), record.dump(2) + "\n");
  return record;
}

}  // namespace netsmith::exporting
