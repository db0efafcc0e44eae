// bench MODEL.onnx...: what exported models cost to run, in ONNX Runtime and OpenCV DNN (see
// export/deploy_bench.h). Prints figures; not a test.
#include <cstdio>
#include <iostream>

#include "cli/cli_args.h"
#include "cli/cli_commands.h"
#include "common/error.h"
#include "common/json.h"
#include "export/deploy_bench.h"
#include "export/run_deploy.h"
#include "run/run_layout.h"

namespace netsmith::cli {

namespace {

std::string mebibytes(std::int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f MiB", double(bytes) / (1024.0 * 1024.0));
  return buf;
}

void printDeployBench(const exporting::DeployBench& b) {
  const auto& c = b.cost;
  std::printf("%s: %s, %lld parameters", printable(b.path).c_str(), mebibytes(c.fileBytes).c_str(),
              static_cast<long long>(c.parameters));
  if (c.quantizedWeights > 0)
    std::printf(" (%lld stored as 8-bit integers)", static_cast<long long>(c.quantizedWeights));
  if (c.macs >= 0)
    std::printf(", %.2f M MACs per image", double(c.macs) / 1e6);
  else
    std::printf(", MACs unknown (shape inference left some shapes open)");
  std::printf(", input \"%s\" 1x%lldx%lldx%lld\n", printable(c.inputName).c_str(),
              static_cast<long long>(c.inputDims.at(0)), static_cast<long long>(c.inputDims.at(1)),
              static_cast<long long>(c.inputDims.at(2)));
  std::printf("  %-22s %12s %12s %18s %12s\n", "runtime", "batch-1 p50", "p95",
              ("batch-" + std::to_string(b.options.batch) + " images/s").c_str(), "memory");
  for (const auto& r : b.runtimes) {
    if (!r.error.empty()) {
      std::printf("  %-22s %s\n", printable(r.runtime).c_str(), printable(r.error).c_str());
      continue;
    }
    std::printf("  %-22s %9.3f ms %9.3f ms %18.1f %12s\n", printable(r.runtime).c_str(), r.p50Ms,
                r.p95Ms, r.imagesPerSecond,
                r.memoryKiB >= 0 ? mebibytes(r.memoryKiB * 1024).c_str() : "-");
  }
  std::printf(
      "  (%d thread%s, %zu timed runs at batch 1 in the first runtime; memory: the rise of "
      "the process's peak resident set while the runtime loads and runs the model)\n",
      b.options.threads, b.options.threads == 1 ? "" : "s",
      b.runtimes.empty() ? std::size_t(0) : b.runtimes.front().batch1Ms.size());
}

/// A run's deploy.json as recorded: its figures, a line each runtime.
void printRecorded(const Json& r) {
  std::printf("  %s, %lld parameters, %.2f M MACs per image\n",
              mebibytes(r.value("file_bytes", std::int64_t(0))).c_str(),
              static_cast<long long>(r.value("parameters", std::int64_t(0))),
              double(r.value("macs_per_image", std::int64_t(0))) / 1e6);
  for (const auto& rt : r["runtimes"]) {
    if (rt.contains("error")) {
      std::printf("  %-22s %s\n", printable(rt.value("runtime", std::string())).c_str(),
                  printable(rt.value("error", std::string())).c_str());
      continue;
    }
    std::printf("  %-22s batch-1 p50 %.3f ms, p95 %.3f ms, %.1f images/s at batch %lld\n",
                printable(rt.value("runtime", std::string())).c_str(),
                rt.value("batch1_p50_ms", 0.0), rt.value("batch1_p95_ms", 0.0),
                rt.value("images_per_second", 0.0),
                static_cast<long long>(rt.value("throughput_batch", std::int64_t(0))));
  }
}

}  // namespace

int runDeployBench(const Args& args, const RegistriesPtr& registries) {
  exporting::DeployBenchOptions options;
  options.batch = args.integer("--batch-size", 32, 1, 4096);
  options.threads = static_cast<int>(args.integer("--threads", 1, 1, 256));
  options.runs = static_cast<int>(args.integer("--runs", 50, 1, 100000));
  options.seconds = args.real("--seconds", 2.0, 0.0);
  Json all = Json::array();
  for (const auto& path : args.positional()) {
    if (run_layout::isRunFolder(path)) {
      // A run: its best checkpoint exported and measured, the figures kept in its deploy.json.
      const Json record = exporting::measureRunDeploy(path, registries, options);
      if (args.has("--json")) {
        all.push_back(record);
        continue;
      }
      std::printf("%s: %s recorded in %s\n", printable(path).c_str(),
                  printable(record.value("checkpoint", std::string())).c_str(),
                  printable(run_layout::runFile(path, run_layout::kDeploy)).c_str());
      printRecorded(record);
      continue;
    }
    const auto b = exporting::benchOnnxModel(path, options);
    if (args.has("--json"))
      all.push_back(b.toJson());
    else
      printDeployBench(b);
  }
  if (args.has("--json")) std::cout << all.dump(2) << '\n';
  return kExitOk;
}

}  // namespace netsmith::cli
