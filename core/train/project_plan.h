#pragma once

// The plan of a project's run as `netsmith-cli train` makes it, for the views that show it
// before (or beside) a run: `netsmith-cli lr-schedule` and the Training page's chart.
#include <cstdint>
#include <string>

#include "project/project.h"
#include "train/run_plan.h"
#include "train/train_options.h"

namespace netsmith::train {

/// What the data gives a run: the training split's size (after the validation split is taken
/// out of it) and the number of classes.
struct TrainSplit {
  std::int64_t samples = 0;
  std::int64_t classes = 0;
};
/// Reads it from the project's data. Throws netsmith::Error when the data section is missing or
/// cannot be read.
TrainSplit readTrainSplit(const project::Project& project, const std::string& baseDir);
std::int64_t trainSplitSize(const project::Project& project, const std::string& baseDir);

/// RunPlan::make() on the project's training split. `worldSize` 0: train.local_processes.
RunPlan planProjectRun(const project::Project& project, const std::string& baseDir,
                       const TrainOptions& options, std::int64_t limitTrain = 0, int worldSize = 0);

}  // namespace netsmith::train
