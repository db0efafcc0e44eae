// Training-plan commands: lr-schedule.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>

#include "cli/cli_args.h"
#include "cli/cli_commands.h"
#include "ops/op_registry.h"
#include "project/project.h"
#include "train/project_plan.h"
#include "train/run_plan.h"
#include "train/train_options.h"

namespace netsmith::cli {

int runLrSchedule(const std::vector<std::string>& words, const RegistriesPtr& registries) {
  const Args args = commandArgs("lr-schedule", words);
  resolve::ResolvedProject resolved;
  if (!loadTrainable(args, *registries, resolved)) return kExitInvalid;
  const auto& loaded = resolved.loaded;
  const auto& options = resolved.train;
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
    if (!resolved.data)
      throw UsageError{"the project has no data section; give --steps-per-epoch N"};
    plan = train::planProjectRun(*resolved.data, options, limitTrain);
  }
  // Streamed, one step at a time: a plan of any length costs no memory.
  constexpr std::int64_t kMaxSteps = 100'000'000;
  if (plan.totalSteps() > kMaxSteps) {
    throw UsageError{"the plan has " + std::to_string(plan.totalSteps()) +
                     " optimizer steps; lr-schedule prints at most " + std::to_string(kMaxSteps) +
                     " (plan fewer with --epochs or --steps-per-epoch)"};
  }
  // Nodes that train at a multiple of the rate (model nodes' lr_mult): the same schedule, scaled.
  std::map<double, std::vector<std::string>> multiples;
  for (const auto& n : loaded.project.model.nodes)
    if (n.lrMult != 1.0) multiples[n.lrMult].push_back(n.id);
  if (args.has("--json")) {
    Json head = plan.toJson();
    Json groups = Json::array();
    for (const auto& [m, ids] : multiples)
      groups.push_back(Json{{"lr_mult", m}, {"nodes", ids}});
    head["lr_multipliers"] = groups;
    std::string text = head.dump();
    text.pop_back();  // the closing brace: the LR list follows
    // lr[0] is step 1: steps are numbered from 1, as metrics.csv's step column numbers them.
    std::fputs((text + ",\"first_step\":1,\"lr\":[").c_str(), stdout);
    for (std::int64_t s = 0; s < plan.totalSteps(); ++s)
      std::fputs(((s ? "," : "") + Json(plan.lrAt(s)).dump()).c_str(), stdout);
    std::fputs("]}\n", stdout);
    return kExitOk;
  }
  std::cout << "# " << plan.schedule().type() << ", base lr " << plan.schedule().baseLr() << ", "
            << plan.describe() << "\n";
  for (const auto& [m, ids] : multiples) {
    std::cout << "# x" << m << " (lr " << plan.schedule().baseLr() * m << " at the base) for "
              << ids.size() << " nodes: " << ids.front()
              << (ids.size() > 1 ? " ... " + ids.back() : "") << "\n";
  }
  // Numbered as metrics.csv numbers them: step from 1, epoch from 0.
  std::cout << "# step epoch lr" << (multiples.empty() ? "" : " (x1 nodes)") << "\n" << std::flush;
  for (std::int64_t s = 0; s < plan.totalSteps(); ++s)
    std::printf("%lld %lld %.8g\n", static_cast<long long>(s + 1),
                static_cast<long long>(s / plan.stepsPerEpoch()), plan.lrAt(s));
  return kExitOk;
}

}  // namespace netsmith::cli
