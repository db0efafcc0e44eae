// Training-plan commands: lr-schedule.
#include <algorithm>
#include <cstdio>
#include <iostream>

#include "cli/cli_args.h"
#include "cli/cli_commands.h"
#include "ops/op_registry.h"
#include "project/project.h"
#include "train/project_plan.h"
#include "train/run_plan.h"
#include "train/train_options.h"

namespace netsmith::cli {

int runLrSchedule(const std::vector<std::string>& words) {
  const Args args(words, {"--json"},
                  {"--steps-per-epoch", "--epochs", "--batch-size", "--lr", "--nproc",
                   "--limit-train", "--seed"});
  const std::string& path = args.one("PROJECT");
  const auto registry = ops::OpRegistry::withBuiltins();
  project::LoadedProject loaded;
  train::TrainOptions options;
  if (!loadTrainable(path, registry, loaded, options,
                     [&](Json& train) { applyTrainOverrides(args, train); }))
    return kExitInvalid;
  const std::int64_t limitTrain = args.integer("--limit-train", 0, 1, 1LL << 40);
  const std::int64_t stepsGiven = args.integer("--steps-per-epoch", 0, 0, 1LL << 40);
  train::RunPlan plan;
  if (stepsGiven > 0) {
    // A plan without data: N batches per epoch of one step each.
    train::TrainOptions given = options;
    given.gradAccumulation = 1;
    given.batchSize = 1;
    given.overfitBatches = 0;
    given.dropLast = false;
    plan = train::RunPlan::make(given, stepsGiven, 0, 1);
  } else {
    // The plan `train` makes: the training split's size, limits, batch, accumulation and
    // local processes.
    const bool hasData = !(loaded.project.data.is_object() && loaded.project.data.empty());
    if (!hasData) throw UsageError{"the project has no data section; give --steps-per-epoch N"};
    plan = train::planProjectRun(loaded.project, loaded.baseDir(), options, limitTrain);
  }
  const auto curve = plan.lrCurve();
  if (args.has("--json")) {
    Json j = plan.toJson();
    j["lr"] = curve;
    std::cout << j.dump() << '\n';
    return kExitOk;
  }
  std::cout << "# " << plan.schedule().type() << ", base lr " << plan.schedule().baseLr() << ", "
            << plan.describe() << "\n# step epoch lr\n";
  for (std::size_t s = 0; s < curve.size(); ++s) {
    std::printf("%zu %lld %.8g\n", s,
                static_cast<long long>(std::int64_t(s) / plan.stepsPerEpoch()), curve[s]);
  }
  return kExitOk;
}

}  // namespace netsmith::cli
