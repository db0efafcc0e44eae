// `netsmith-cli predict MODEL INPUT... [--out PATH]`: the model's predictions on images without
// labels (core/eval/predict.h), written as the task writes eval's, without truth.
#include <cstdio>
#include <iostream>

#include "cli/cli_args.h"
#include "cli/cli_commands.h"
#include "common/json.h"
#include "common/text_format.h"
#include "env/env_report.h"
#include "eval/predict.h"

namespace netsmith::cli {

int runPredict(const std::vector<std::string>& words, const RegistriesPtr& registries) {
  const Args args = commandArgs("predict", words);
  env::configureThreads(static_cast<int>(args.integer("--threads", 0, 0, 4096)));
  const auto& positional = args.positional();
  if (positional.size() < 2) throw UsageError{"predict needs a MODEL and at least one INPUT"};
  eval::PredictOptions o;
  o.registries = registries;
  o.model = positional.front();
  o.inputs.assign(positional.begin() + 1, positional.end());
  o.out = args.option("--out");
  o.batchSize = args.integer("--batch-size", 64, 1, 1 << 16);
  const bool json = args.has("--json");
  // Progress on long work only: a line per batch once there is more than one batch.
  o.progress = [json, batch = o.batchSize](std::int64_t done, std::int64_t total) {
    if (!json && total > batch)
      std::fprintf(stderr, "predict: %lld/%lld images\n", (long long)done, (long long)total);
    return true;  // Ctrl-C ends predict at once: nothing is written until the end
  };
  const auto r = eval::predictImages(o);
  if (json) {
    Json skipped = Json::array();
    for (const auto& s : r.skipped)
      skipped.push_back({{"item", s.item}, {"reason", s.reason}});
    std::cout << Json{{"model", o.model}, {"task", r.task},           {"runtime", r.runtime},
                      {"out", r.out},     {"predicted", r.predicted}, {"skipped", skipped}}
                     .dump(2)
              << '\n';
    return kExitOk;
  }
  for (const auto& s : r.skipped)
    std::printf("skipped %s: %s\n", printable(s.item).c_str(), printable(s.reason).c_str());
  std::printf("task %s (%s): %lld image(s) predicted, %zu skipped: %s\n", printable(r.task).c_str(),
              r.runtime.c_str(), (long long)r.predicted, r.skipped.size(),
              printable(r.out).c_str());
  return kExitOk;
}

}  // namespace netsmith::cli
