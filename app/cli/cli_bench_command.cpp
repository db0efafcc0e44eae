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
#include "train/step_bench.h"
#include "train/train_options.h"

namespace netsmith::cli {

int runBench(const std::vector<std::string>& words) {
  const Args args(words, {"--json"}, {"--steps", "--threads", "--batch-size"});
  const std::string& path = args.one("PROJECT");
  const int steps = static_cast<int>(args.integer("--steps", 20, 1, 100000));
  const auto registry = ops::OpRegistry::withBuiltins();
  project::LoadedProject loaded;
  train::TrainOptions options;
  if (!loadTrainable(path, registry, loaded, options)) return kExitInvalid;
  const int threads =
      env::configureThreads(static_cast<int>(args.integer("--threads", 0, 0, 4096)));
  const auto batch = args.integer("--batch-size", options.batchSize, 1, 1 << 16);
  const auto& in = loaded.project.model.input;

  torch::manual_seed(0);
  graph::GraphModule net(loaded.project.model, registry);
  const auto& out = net->analysis().outputShape;
  if (out.size() != 1)
    throw Error("bench needs a classifier: the model output is " + formatShape(out) +
                ", not a vector of class scores");
  const std::int64_t classes = out[0];
  auto forward = [&](const torch::Tensor& x) { return net->forward(x); };

  auto optimizer = train::makeOptimizer(options.optimizer, net->named_parameters());
  const auto x = torch::randn({batch, in.channels, in.height, in.width});
  const auto y = torch::randint(0, classes, {batch}, torch::kLong);
  const auto synthetic = train::measureStepRate(
      *net, forward, *optimizer, [&] { return std::make_pair(x, y); }, 2, steps);

  train::StepRate real;
  int workers = 0;
  const bool hasData = !(loaded.project.data.is_object() && loaded.project.data.empty());
  if (hasData) {
    auto pd =
        data::openProjectData(loaded.project, loaded.baseDir(),
                              augment::TransformRegistry::withBuiltins(), data::userCacheDir());
    if (!pd) throw Error("cancelled");
    if (pd->data.numClasses() > classes) {
      throw Error("the data has " + std::to_string(pd->data.numClasses()) +
                  " classes but the model outputs " + std::to_string(classes) + " scores");
    }
    data::LoaderOptions lo;
    lo.batchSize = batch;
    lo.workers = data::DataLoader::defaultWorkers(threads);
    lo.seed = options.seed;
    lo.onError = pd->data.config.onError;
    workers = lo.workers;
    data::DataLoader loader(pd->data.train, *pd->processor, lo);
    loader.startEpoch(0);
    auto optimizer2 = train::makeOptimizer(options.optimizer, net->named_parameters());
    real = train::measureStepRate(
        *net, forward, *optimizer2,
        [&]() -> std::pair<torch::Tensor, torch::Tensor> {
          auto b = loader.next();
          if (!b) return {};
          return {b->images, b->labels};
        },
        2, steps);
  }
  if (args.has("--json")) {
    Json j{{"project", loaded.project.name},
           {"batch_size", batch},
           {"threads", threads},
           {"steps", steps},
           {"synthetic_images_per_second", synthetic.imagesPerSecond()}};
    if (hasData) {
      j["loader_workers"] = workers;
      j["real_images_per_second"] = real.imagesPerSecond();
    }
    std::cout << j.dump(2) << '\n';
    return kExitOk;
  }
  std::printf("%s: batch %lld, %d threads, %s, %d timed steps\n", loaded.project.name.c_str(),
              (long long)batch, threads, options.optimizer.type.c_str(), steps);
  std::printf("  synthetic input:  %8.1f images/s\n", synthetic.imagesPerSecond());
  if (hasData)
    std::printf("  real loader (%d worker%s): %8.1f images/s\n", workers, workers == 1 ? "" : "s",
                real.imagesPerSecond());
  return kExitOk;
}

}  // namespace netsmith::cli
