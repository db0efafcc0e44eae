#include "train/project_plan.h"

#include "common/error.h"
#include "data/data_config.h"
#include "data/data_module.h"

namespace netsmith::train {

TrainSplit readTrainSplit(const project::Project& project, const std::string& baseDir) {
  if (!project.data.is_object() || project.data.empty())
    throw Error("data: the project has no data section");
  Problems problems;
  const auto config = data::parseDataConfig(project.data, baseDir, problems);
  if (!problems.empty()) throw Error(formatProblems(problems));
  const auto module = data::openDataModule(config);
  return {module.train.size(), module.numClasses()};
}

std::int64_t trainSplitSize(const project::Project& project, const std::string& baseDir) {
  return readTrainSplit(project, baseDir).samples;
}

RunPlan planProjectRun(const project::Project& project, const std::string& baseDir,
                       const TrainOptions& options, std::int64_t limitTrain, int worldSize) {
  const int world = worldSize > 0 ? worldSize : std::max(1, options.processes);
  return RunPlan::make(options, trainSplitSize(project, baseDir), limitTrain, world);
}

}  // namespace netsmith::train
