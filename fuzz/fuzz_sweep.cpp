// A sweep's record (sweep.json), as `netsmith-cli sweep --resume DIR` and the studio's
// Experiments page read it from a folder someone else may have made, then what the sweep decides
// from it (the next trial, the rung decisions, the best trial). Any exception other than
// netsmith::Error is a finding, as is any crash, hang or sanitizer report.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/error.h"
#include "experiment/sweep_schedule.h"
#include "experiment/sweep_state.h"
#include "project/project.h"
#include "registries/registries.h"

using namespace netsmith;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto spec = [] {
    project::Project base;
    base.train = Json{{"optimizer", {{"type", "sgd"}, {"lr", 0.1}}}};
    Problems ignored;
    return experiment::parseSweep(
        Json::parse(R"({"method": "tpe", "trials": 20, "startup_trials": 2,
                        "asha": {"min_epochs": 1, "reduction": 2},
                        "params": [{"path": "train.optimizer.lr", "log_uniform": [1e-4, 1]}]})"),
        base, ignored, *::netsmith::Registries::builtins());
  }();
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    auto state = experiment::parseSweepState(text, "fuzz/sweep.json");
    (void)experiment::sweepStateToJson(state).dump();
    // The decisions run on trials whose settings the spec names, as the runner checks first.
    bool complete = true;
    for (const auto& t : state.trials)
      complete = complete && t.params.count("train.optimizer.lr") > 0;
    if (!complete) return 0;
    experiment::Assignment next;
    (void)experiment::nextTrialSettings(state, spec, next);
    (void)experiment::decideRungs(state, spec);
    for (const auto& t : state.trials)
      (void)experiment::segmentStop(t, spec);
    (void)experiment::bestTrial(state, spec);
    (void)experiment::sweepDone(state, spec, false);
  } catch (const Error&) {
    // A clear error: the expected outcome for bad input.
  }
  return 0;
}
