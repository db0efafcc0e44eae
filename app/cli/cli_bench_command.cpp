// bench: training throughput on synthetic input of the project's shape, and with the real
// loader. Prints figures; not a test.
#include <cstdio>
#include <iostream>

#include "augment/transform.h"
#include "cli/cli_args.h"
#include "cli/cli_commands.h"
#include "data/data_loader.h"
#include "data/project_data.h"
#include "env/env_report.h"
#include "graph/graph_module.h"
#include "ops/op_registry.h"
#include "project/project.h"
#include "train/optimizer_factory.h"
#include "train/train_options.h"
#include "train/trainer.h"

namespace netsmith::cli {

int runBench(const std::vector<std::string>& words) {
  const Args args(words, {"--json"}, {"--steps", "--threads", "--batch-size"});
  const std::string& path = args.one("PROJECT");
  const int steps = static_cast<int>(args.integer("--steps", 20, 1, 100000));
  const auto registry = ops::OpRegistry::withBuiltins();
  project::LoadedProject loaded;
  train::TrainOptions options;
  if (!loadTrainable(path, registry, loaded, options,
                     [&](Json& train) { applyTrainOverrides(args, train); }))
    return kExitInvalid;
  // The run `train` would make with the same flags, timed batch by batch (see step_bench.h).
  train::TrainerConfig config;
  config.project = loaded.project;
  config.baseDir = loaded.baseDir();
  config.cacheDir = data::userCacheDir();
  config.writeRun = false;
  config.bench = true;
  config.benchOptions.steps = steps;
  train::Trainer trainer(config);
  const auto result = runWithInterrupts(trainer);
  if (result.state == train::FinishState::Failed) {
    std::cerr << "netsmith-cli: bench failed: " << result.reason << '\n';
    return kExitFailure;
  }
  const auto& b = result.bench;
  if (args.has("--json")) {
    Json j{{"project", loaded.project.name},
           {"batch_size", options.batchSize},
           {"threads", b.threads},
           {"optimizer", options.optimizer.type},
           {"amp", options.amp},
           {"steps", steps},
           {"synthetic_images_per_second", b.synthetic.imagesPerSecond()},
           {"synthetic_timed_batches", b.synthetic.steps},
           {"loader_workers", b.workers},
           {"real_images_per_second", b.real.imagesPerSecond()},
           {"real_timed_batches", b.real.steps}};
    std::cout << j.dump(2) << '\n';
    return kExitOk;
  }
  std::printf("%s: batch %lld, %d threads, %s, %d timed steps (the trainer's own batch code)\n",
              loaded.project.name.c_str(), (long long)options.batchSize, b.threads,
              options.optimizer.type.c_str(), steps);
  std::printf("  synthetic input:  %8.1f images/s\n", b.synthetic.imagesPerSecond());
  std::printf("  real loader (%d worker%s): %8.1f images/s\n", b.workers, b.workers == 1 ? "" : "s",
              b.real.imagesPerSecond());
  return kExitOk;
}

}  // namespace netsmith::cli
