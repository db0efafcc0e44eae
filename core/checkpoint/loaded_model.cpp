#include "checkpoint/loaded_model.h"

#include "checkpoint/checkpoint.h"
#include "checkpoint/checkpoint_model.h"
#include "common/error.h"
#include "data/data_config.h"
#include "data/named_paths.h"
#include "registries/registries.h"

namespace netsmith::checkpoint {

torch::Tensor LoadedModel::forward(const torch::Tensor& input) const {
  torch::NoGradGuard noGrad;
  if (runner) return runner(input).contiguous();
  net->eval();
  auto out = net->forward(input);
  if (temperature != 1) out = out / temperature;
  return out.contiguous();
}

LoadedModel loadedModelFrom(const project::Project& project, graph::GraphModule net,
                            std::shared_ptr<const ops::OpRegistry> registry) {
  LoadedModel m;
  m.project = project;
  m.registry = std::move(registry);
  m.net = std::move(net);
  m.net->eval();
  m.weights = moduleState(*m.net);
  if (project.data.is_object() && project.data.contains("classes") &&
      project.data["classes"].is_array()) {
    for (const auto& c : project.data["classes"])
      if (c.is_string()) m.classes.push_back(c.get<std::string>());
  }
  return m;
}

LoadedModel loadModel(const std::string& checkpointPath, const RegistriesPtr& registries) {
  const std::shared_ptr<const ops::OpRegistry> ops(registries,
                                                   &needRegistries(registries, "loadModel").ops);
  if (isProjectFile(checkpointPath)) {
    // An imported project before any training: its model with the weights of its init_from.
    auto pw = modelFromProjectWeights(checkpointPath, *ops);
    auto m = loadedModelFrom(pw.loaded.project, std::move(pw.net), ops);
    m.source = checkpointPath;
    m.dataNamed = true;
    m.baseDir = pw.loaded.baseDir();
    // Its normalisation as the project states it (explicit mean and std; "auto" is measured
    // on data, and export does not read data for it).
    Problems ignored;
    const auto config = data::parseDataConfig(pw.loaded.project.data, m.baseDir, ignored);
    if (config.normalization == data::DataConfig::Normalization::Explicit) {
      m.mean = config.mean;
      m.std = config.std;
    }
    m.fit = config.fit;
    return m;
  }
  const auto ckpt = readCheckpoint(checkpointPath);
  const auto loaded = checkpointProject(ckpt, checkpointPath);
  auto net = modelFromCheckpoint(loaded.project, ckpt, checkpointPath, *ops);
  auto m = loadedModelFrom(loaded.project, std::move(net), ops);
  m.source = checkpointPath;
  m.baseDir = data::checkpointBaseDir(ckpt.meta, checkpointPath);
  if (ckpt.meta.contains("classes") && ckpt.meta["classes"].is_array())
    m.classes = ckpt.meta["classes"].get<std::vector<std::string>>();
  if (ckpt.meta.contains("task_state") && ckpt.meta["task_state"].is_object())
    m.taskState = ckpt.meta["task_state"];
  // The snapshot's data section, read once here for what using the model needs of it: the fit
  // (its normalisation is the one the run measured, in the metadata below).
  Problems ignored;
  m.fit = data::parseDataConfig(loaded.project.data, m.baseDir, ignored).fit;
  const auto& norm = ckpt.meta.contains("normalization") ? ckpt.meta["normalization"] : Json();
  if (norm.is_object() && norm.contains("mean") && norm["mean"].is_array()) {
    m.mean = norm["mean"].get<std::vector<double>>();
    m.std = norm["std"].get<std::vector<double>>();
  }
  return m;
}

}  // namespace netsmith::checkpoint
