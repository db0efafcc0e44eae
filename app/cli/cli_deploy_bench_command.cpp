// bench MODEL.onnx...: what exported models cost to run, in ONNX Runtime and OpenCV DNN (see
// export/deploy_bench.h). Prints figures; not a test.
#include <cstdio>
#include <iostream>

#include "cli/cli_args.h"
#include "cli/cli_commands.h"
#include "common/error.h"
#include "common/json.h"
#include "export/deploy_bench.h"

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

}  // namespace

int runDeployBench(const Args& args) {
  exporting::DeployBenchOptions options;
  options.batch = args.integer("--batch-size", 32, 1, 4096);
  options.threads = static_cast<int>(args.integer("--threads", 1, 1, 256));
  options.runs = static_cast<int>(args.integer("--runs", 50, 1, 100000));
  options.seconds = args.real("--seconds", 2.0, 0.0);
  Json all = Json::array();
  for (const auto& path : args.positional()) {
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
