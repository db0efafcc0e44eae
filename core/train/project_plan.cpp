#include "train/project_plan.h"

#include <algorithm>

#include "data/data_module.h"

namespace netsmith::train {

TrainSplit readTrainSplit(const data::DataConfig& config) {
  const auto module = data::openDataModule(config);
  return {module.train.size(), module.numClasses()};
}

RunPlan planProjectRun(const data::DataConfig& config, const TrainOptions& options,
                       std::int64_t limitTrain, int worldSize) {
  const int world = worldSize > 0 ? worldSize : std::max(1, options.processes);
  return RunPlan::make(options, readTrainSplit(config).samples, limitTrain, world);
}

}  // namespace netsmith::train
