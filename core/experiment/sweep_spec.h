#pragma once

// The `sweep` section of a project file (issue 21): which settings vary, over what, how trials
// are chosen and judged. Settings are addressed by path into the project:
//   train.optimizer.lr, train.batch_size, train.schedule.type,
//   augment[RandomCrop].padding, model.nodes[conv1].out_channels
// Each path is checked against the project and its schemas, with did-you-mean suggestions.
// No LibTorch here.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/json.h"
#include "project/project.h"
#include "registries/registries_fwd.h"
#include "schema/param_schema.h"
#include "task/task_registry.h"

namespace netsmith::experiment {

/// One swept setting.
struct SweepParam {
  enum class Kind { Uniform, LogUniform, IntUniform, Choice };
  std::string path;
  Kind kind = Kind::Choice;
  double low = 0, high = 0;  ///< ranges
  std::vector<Json> values;  ///< choices
  int gridPoints = 3;        ///< a range's points in a grid (log-spaced for log_uniform)

  /// The values a grid takes: the choices, or `gridPoints` evenly (log-)spaced in the range.
  std::vector<Json> gridValues() const;
};

struct AshaOptions {
  bool enabled = false;
  std::int64_t minEpochs = 1;  ///< the first rung
  std::int64_t reduction = 3;  ///< eta: rungs at minEpochs * eta^k; the top 1/eta go on
};

struct SweepSpec {
  std::string name = "sweep";
  std::string method = "random";   ///< grid, random, tpe
  std::int64_t startupTrials = 5;  ///< tpe: random trials before the model is used
  std::vector<SweepParam> params;
  std::string objective = "val_accuracy";
  bool maximize = true;
  std::int64_t trials = 10;   ///< at most (a grid: at most its size)
  double maxSeconds = 0;      ///< 0: no wall-time budget
  std::int64_t parallel = 1;  ///< trials at once
  std::uint64_t seed = 0;
  AshaOptions asha;
  /// sweep.deploy_bench: each trial that trains to its end measures what its model costs
  /// deployed (train --deploy-bench), for the Experiments page's accuracy-against-cost plot.
  bool deployBench = false;
  /// sweep.max_latency_ms: the best trial is the best of those whose batch-1 latency is at
  /// most this (0: no limit); implies deployBench.
  double maxLatencyMs = 0;
};

/// What a sweep of a project of task `def` can aim at: val_ then train_, each with the task's
/// figures (its headline first) and the loss ("val_map", ..., "val_loss", "train_map", ...).
std::vector<std::string> objectiveChoices(const task::TaskDef* def);

/// Reads and checks `project.extra["sweep"]` (or the given JSON): every problem is added with
/// its path (`sweep.params[1].path: no key "lrr" in train.optimizer; did you mean "lr"?`).
/// Paths are checked against `registries`' schedules, transforms and ops; the objective's way
/// (max or min) comes from the project's task in its tasks when the objective names one of its
/// figures or a loss; another name needs "mode". Without an objective: the task's headline on
/// the validation split.
SweepSpec parseSweep(const Json& sweep, const project::Project& project, Problems& problems,
                     const Registries& registries);

/// A sweep entry for a form field (the studio's "Sweep this"): a range around `current` that
/// respects the field's bounds. Enums and booleans: every choice. Positive reals: log-uniform
/// over a decade either side for rates and decays (names with "lr", "decay", "eps") or where
/// the bounds span 100x, else uniform over half to twice the value; an integer: int_uniform
/// over half to twice (powers of two such as batch sizes: a choice of half, same, twice).
/// Null for fields a sweep cannot vary (pairs, lists).
Json suggestSweepParam(const std::string& path, const schema::ParamSpec& spec, const Json& current);

/// The trial's settings: path -> value.
using Assignment = std::map<std::string, Json>;

/// The settings as one JSON object (path -> value), as sweep.json and the events record them.
Json assignmentJson(const Assignment& values);

/// The project with `values` set at their paths (a trial's project). Throws netsmith::Error for
/// a path that does not resolve (parseSweep has checked them).
project::Project applyAssignment(const project::Project& base, const Assignment& values);

}  // namespace netsmith::experiment
