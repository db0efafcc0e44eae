// Training-plan commands: lr-schedule.
#include <algorithm>
#include <cstdio>
#include <iostream>

#include "augment/transform.h"
#include "cli/cli_args.h"
#include "cli/cli_commands.h"
#include "data/project_data.h"
#include "ops/op_registry.h"
#include "project/project.h"
#include "train/lr_schedule.h"
#include "train/train_options.h"

namespace netsmith::cli {

int runLrSchedule(const std::vector<std::string>& words) {
  const Args args(words, {"--json"}, {"--steps-per-epoch", "--epochs"});
  const std::string& path = args.one("PROJECT");
  const auto registry = ops::OpRegistry::withBuiltins();
  project::LoadedProject loaded;
  train::TrainOptions options;
  if (!loadTrainable(path, registry, loaded, options)) return kExitInvalid;
  train::RunPlan plan;
  plan.epochs = args.integer("--epochs", options.epochs, 1, 100000);
  plan.stepsPerEpoch = args.integer("--steps-per-epoch", 0, 0, 1LL << 40);
  if (plan.stepsPerEpoch == 0) {
    // Steps per epoch come from the training split's size and the batch size.
    const bool hasData = !(loaded.project.data.is_object() && loaded.project.data.empty());
    if (!hasData) throw UsageError{"the project has no data section; give --steps-per-epoch N"};
    Problems dataProblems;
    const auto config = data::parseDataConfig(loaded.project.data, loaded.baseDir(), dataProblems);
    const auto module = data::openDataModule(config);
    // The global batch: local processes share each step.
    const std::int64_t global = options.batchSize * std::max(1, options.processes);
    plan.stepsPerEpoch = (module.train.size() + global - 1) / global;
  }
  const auto curve = options.schedule.curve(plan);
  if (args.has("--json")) {
    Json j{{"schedule", options.schedule.type()},
           {"base_lr", options.schedule.baseLr()},
           {"epochs", plan.epochs},
           {"steps_per_epoch", plan.stepsPerEpoch},
           {"lr", curve}};
    std::cout << j.dump() << '\n';
    return kExitOk;
  }
  std::cout << "# " << options.schedule.type() << ", base lr " << options.schedule.baseLr() << ", "
            << plan.epochs << " epochs x " << plan.stepsPerEpoch << " steps\n# step epoch lr\n";
  for (std::size_t s = 0; s < curve.size(); ++s) {
    std::printf("%zu %lld %.8g\n", s, static_cast<long long>(std::int64_t(s) / plan.stepsPerEpoch),
                curve[s]);
  }
  return kExitOk;
}

}  // namespace netsmith::cli
