#include "checkpoint/checkpoint_model.h"

#include "common/error.h"
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

}  // namespace netsmith::checkpoint
