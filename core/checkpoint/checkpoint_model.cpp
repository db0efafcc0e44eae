#include "checkpoint/checkpoint_model.h"

#include <filesystem>
#include <fstream>

#include "checkpoint/safetensors.h"
#include "common/error.h"
#include "common/file_util.h"
#include "graph/graph_analysis.h"

namespace netsmith::checkpoint {

graph::GraphModule modelFromCheckpoint(const project::Project& project, const CheckpointData& data,
                                       const std::string& path, const ops::OpRegistry& registry) {
  const auto analysis = graph::analyseGraph(project.model, registry);
  if (!analysis.ok()) {
    throw Error(path + ": the checkpoint's project snapshot has a model that is not valid:\n" +
                formatProblems(analysis.problems));
  }
  std::int64_t held = 0;
  for (const auto& [name, tensor] : data.model)
    held += tensor.numel();
  if (analysis.totalParams > held) {
    throw Error(path + ": the weights do not fit the model: its project snapshot's model has " +
                std::to_string(analysis.totalParams) + " parameters but the checkpoint holds " +
                std::to_string(held) + " values");
  }
  graph::GraphModule net(project.model, registry);
  torch::NoGradGuard noGrad;
  const auto report = loadModuleState(*net, data.model);
  if (!report.complete())
    throw Error(path + ": the weights do not fit the model: " + report.summary());
  return net;
}

project::LoadedProject checkpointProject(const CheckpointData& data, const std::string& path) {
  if (!data.meta.contains("project"))
    throw Error(path + ": the checkpoint carries no project snapshot");
  auto loaded = project::parseProject(data.meta["project"].dump(), path);
  if (!loaded.problems.empty()) {
    throw Error(path + ": the checkpoint's project snapshot has problems:\n" +
                formatProblems(loaded.problems));
  }
  return loaded;
}

NamedTensors readWeights(const std::string& path) {
  try {
    return readCheckpoint(path).model;
  } catch (const Error&) {
    // A plain safetensors file of weights (an export, an import) is fine too.
    return readSafetensors(path).tensors;
  }
}

bool isProjectFile(const std::string& path) {
  requireRegularFile(path);
  // A safetensors file starts with its header's length (8 bytes), a project with '{'.
  std::ifstream in(path, std::ios::binary);
  char c = 0;
  while (in.get(c))
    if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return c == '{';
  return false;
}

ProjectWithWeights modelFromProjectWeights(const std::string& path,
                                           const ops::OpRegistry& registry) {
  ProjectWithWeights out;
  out.loaded = project::loadProject(path);
  if (!out.loaded.problems.empty())
    throw Error(path + ": the project has problems:\n" + formatProblems(out.loaded.problems));
  const std::string& from = out.loaded.project.initFrom;
  if (from.empty()) {
    throw Error(path +
                ": the project has no weights to use: give a checkpoint of a run of it, or an "
                "init_from (an imported model has one)");
  }
  const std::filesystem::path p(from);
  out.weightsPath =
      p.is_absolute() ? from : (std::filesystem::path(out.loaded.baseDir()) / p).string();
  CheckpointData data;
  data.model = readWeights(out.weightsPath);
  out.net = modelFromCheckpoint(out.loaded.project, data, out.weightsPath, registry);
  return out;
}

}  // namespace netsmith::checkpoint
