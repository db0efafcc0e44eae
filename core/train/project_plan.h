#pragma once

// The plan of a project's run as `netsmith-cli train` makes it, for the views that show it
// before (or beside) a run: `netsmith-cli lr-schedule` and the Training page's chart.
#include <cstdint>
#include <string>

#include "data/data_config.h"
#include "train/run_plan.h"
#include "train/train_options.h"

namespace netsmith::train {

/// What the data gives a run: the training split's size (after the validation split is taken
/// out of it) and the number of classes.
struct TrainSplit {
  std::int64_t samples = 0;
  std::int64_t classes = 0;
};
/// Reads it from the project's data section (resolve::ResolvedProject::data). Throws
/// netsmith::Error when the data cannot be read.
TrainSplit readTrainSplit(const data::DataConfig& config);

/// RunPlan::make() on the data's training split. `worldSize` 0: train.local_processes.
RunPlan planProjectRun(const data::DataConfig& config, const TrainOptions& options,
                       std::int64_t limitTrain = 0, int worldSize = 0);

}  // namespace netsmith::train
