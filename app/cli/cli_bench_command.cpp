// bench: training throughput on synthetic input of the project's shape, and with the real
// loader. Prints figures; not a test.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>

#include "augment/transform.h"
#include "cli/cli_args.h"
#include "cli/cli_commands.h"
#include "common/error.h"
#include "common/file_util.h"
#include "common/json.h"
#include "data/data_loader.h"
#include "data/project_data.h"
#include "env/env_report.h"
#include "export/onnx_model.h"
#include "graph/graph_module.h"
#include "ops/op_registry.h"
#include "project/project.h"
#include "run/run_layout.h"
#include "train/optimizer_factory.h"
#include "train/train_options.h"
#include "train/trainer.h"

namespace netsmith::cli {

namespace {

struct OpTime {
  std::string name;
  std::int64_t calls = 0;
  double microseconds = 0;  ///< inclusive: an op's time includes the ops it calls
};

/// The profiler's trace (written by this run) summed by op, most time first.
std::vector<OpTime> opTable(const std::string& trace) {
  const std::string text = readTextFile(trace);
  checkJsonNesting(text, trace);
  const Json j = Json::parse(text);
  const Json& events = j.is_array() ? j : j.value("traceEvents", Json::array());
  std::map<std::string, OpTime> byName;
  for (const auto& e : events) {
    if (!e.is_object() || !e.contains("name") || !e.contains("dur") || !e["dur"].is_number())
      continue;
    auto& t = byName[e["name"].get<std::string>()];
    t.name = e["name"].get<std::string>();
    ++t.calls;
    t.microseconds += e["dur"].get<double>();
  }
  std::vector<OpTime> out;
  for (auto& [name, t] : byName)
    out.push_back(t);
  std::sort(out.begin(), out.end(),
            [](const OpTime& a, const OpTime& b) { return a.microseconds > b.microseconds; });
  return out;
}

/// Milliseconds per timed batch of `seconds` summed over `r`'s batches.
double benchMsPerBatch(const train::StepRate& r, double seconds) {
  return r.steps > 0 ? 1000.0 * seconds / double(r.steps) : 0.0;
}

/// Milliseconds per timed batch, phase by phase, as --json gives them.
Json benchPhasesJson(const train::StepRate& r) {
  const auto& p = r.phases;
  return Json{
      {"loader", benchMsPerBatch(r, p.loader)},   {"forward", benchMsPerBatch(r, p.forward)},
      {"figures", benchMsPerBatch(r, p.figures)}, {"backward", benchMsPerBatch(r, p.backward)},
      {"norms", benchMsPerBatch(r, p.norms)},     {"optimizer", benchMsPerBatch(r, p.optimizer)},
      {"loop", benchMsPerBatch(r, p.loop)},       {"overhead", benchMsPerBatch(r, p.overhead())},
      {"batch", benchMsPerBatch(r, r.seconds)}};
}

/// Where a batch's time goes, phase by phase, on the terminal.
void printBenchPhases(const char* what, const train::StepRate& r) {
  const auto& p = r.phases;
  const double step = r.seconds > 0 ? r.seconds : 1;
  const auto part = [&](const char* name, double seconds) {
    std::printf("    %-10s %8.2f ms %5.1f%%\n", name, benchMsPerBatch(r, seconds),
                100 * seconds / step);
  };
  std::printf("  where a batch's time goes (%s, per batch):\n", what);
  part("loader", p.loader);
  part("forward", p.forward);
  part("figures", p.figures);
  part("backward", p.backward);
  part("norms", p.norms);
  part("optimizer", p.optimizer);
  part("loop", p.loop);
  std::printf("    the loop's own work (figures, norms, loop): %.2f ms, %.1f%% of a batch\n",
              benchMsPerBatch(r, p.overhead()), 100 * p.overhead() / step);
}

/// The figures as `bench --json` writes them, with the profiler's ops when `profileTrace` was
/// written.
Json benchJson(const project::LoadedProject& loaded, const train::TrainOptions& options,
               const train::BenchResult& b, int steps, const std::string& profileTrace) {
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
         {"real_timed_batches", b.real.steps},
         {"synthetic_ms_per_batch", benchPhasesJson(b.synthetic)},
         {"real_ms_per_batch", benchPhasesJson(b.real)}};
  if (!profileTrace.empty()) {
    Json ops = Json::array();
    const double n = std::max(1, b.profiledBatches);
    for (const auto& t : opTable(profileTrace))
      ops.push_back({{"op", t.name},
                     {"calls_per_batch", double(t.calls) / n},
                     {"ms_per_batch", t.microseconds / 1000.0 / n}});
    j["profile"] = Json{{"trace", profileTrace}, {"batches", b.profiledBatches}, {"ops", ops}};
  }
  return j;
}

/// The figures on the terminal: images per second, where the time goes and, when
/// `profileTrace` was written, the profiler's top ops.
void printBench(const project::LoadedProject& loaded, const train::TrainOptions& options,
                const train::BenchResult& b, int steps, const std::string& profileTrace) {
  std::printf("%s: batch %lld, %d threads, %s, %d timed steps (the trainer's own batch code)\n",
              printable(loaded.project.name).c_str(), (long long)options.batchSize, b.threads,
              options.optimizer.type.c_str(), steps);
  std::printf("  synthetic input:  %8.1f images/s\n", b.synthetic.imagesPerSecond());
  std::printf("  real loader (%d worker%s): %8.1f images/s\n", b.workers, b.workers == 1 ? "" : "s",
              b.real.imagesPerSecond());
  printBenchPhases("synthetic", b.synthetic);
  printBenchPhases("real loader", b.real);
  if (const auto& trace = profileTrace; !trace.empty()) {
    // One more pass over the synthetic batch under LibTorch's profiler (not in the figures
    // above); inclusive time: an op's time includes the ops it calls.
    const auto ops = opTable(trace);
    const double n = std::max(1, b.profiledBatches);
    std::printf("  LibTorch profiler, %d synthetic batches (chrome://tracing: %s), top ops:\n",
                b.profiledBatches, printable(trace).c_str());
    for (std::size_t i = 0; i < ops.size() && i < 15; ++i)
      std::printf("    %-58s %8.2f ms %5.1f calls per batch\n", printable(ops[i].name).c_str(),
                  ops[i].microseconds / 1000.0 / n, double(ops[i].calls) / n);
  }
}

}  // namespace

int runBench(const std::vector<std::string>& words, const RegistriesPtr& registries) {
  const Args args = commandArgs("bench", words);
  const auto& models = args.positional();
  // Exported files and run folders are deployed models; anything else is a project to train.
  if (!models.empty() &&
      (exporting::isOnnxPath(models.front()) || run_layout::isRunFolder(models.front())))
    return runDeployBench(args, registries);
  for (const char* deployOnly : {"--runs", "--seconds"})
    if (!args.option(deployOnly).empty())
      throw UsageError(std::string(deployOnly) + " is for bench MODEL.onnx, not a project");
  const int steps = static_cast<int>(args.integer("--steps", 20, 1, 100000));
  resolve::ResolvedProject resolved;
  if (!loadTrainable(args, *registries, resolved)) return kExitInvalid;
  const auto& loaded = resolved.loaded;
  const auto& options = resolved.train;
  // The run `train` would make with the same flags, timed batch by batch (see step_bench.h).
  auto config = folderlessConfig(resolved, registries);
  config.bench = true;
  config.benchOptions.steps = steps;
  config.benchOptions.profileTrace = args.option("--profile");
  train::Trainer trainer(config);
  const auto result = runWithInterrupts(trainer);
  if (result.state == run::FinishState::Failed) {
    std::cerr << "netsmith-cli: bench failed: " << result.reason << '\n';
    return kExitFailure;
  }
  if (args.has("--json")) {
    std::cout
        << benchJson(loaded, options, result.bench, steps, config.benchOptions.profileTrace).dump(2)
        << '\n';
    return kExitOk;
  }
  printBench(loaded, options, result.bench, steps, config.benchOptions.profileTrace);
  return kExitOk;
}

}  // namespace netsmith::cli
