#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/json.h"
#include "common/named_registry.h"
#include "schema/param_schema.h"

namespace netsmith::train {

/// The span a schedule covers, in optimizer steps (RunPlan, in run_plan.h, computes it).
struct StepSpan {
  std::int64_t epochs = 1;
  std::int64_t stepsPerEpoch = 1;
  /// Steps taken off the end: the span a schedule runs over after a warmup of this many.
  std::int64_t lessSteps = 0;
  std::int64_t totalSteps() const {
    const std::int64_t all = epochs * stepsPerEpoch;
    return lessSteps > 0 ? std::max<std::int64_t>(1, all - lessSteps) : all;
  }
};

/// One LR schedule type: a pure function of the step, so a form can plot it before training.
struct ScheduleDef {
  std::string name;  ///< "cosine"
  std::string help;
  schema::ParamSchema schema;
  /// LR at `step` (0-based) for base LR `lr`, before warmup is applied.
  std::function<double(const schema::Params& p, double lr, std::int64_t step, const StepSpan& plan)>
      lrAt;
  std::string group = "Schedule";
};

/// The schedule types (no global registry: pass it along).
class ScheduleRegistry : public NamedRegistry<ScheduleDef> {
 public:
  static ScheduleRegistry withBuiltins();
};

/// The common warmup parameters every schedule takes.
schema::ParamSchema warmupSchema();

/// A resolved schedule: type, parameters and linear warmup.
///   Problems problems;
///   auto s = LrSchedule::fromJson(project.train["schedule"], 0.1, registry, problems);
///   double lr = s.lrAt(step, plan);
class LrSchedule {
 public:
  /// `json`: {"type": "cosine", "min_lr": 0, "warmup_epochs": 1, ...}; null means constant.
  /// Problems name `train.schedule.<param>`.
  static LrSchedule fromJson(const Json& json, double baseLr, const ScheduleRegistry& registry,
                             Problems& problems);

  /// The LR at optimizer step `step` of `plan`. A warmup of W steps ramps linearly from
  /// warmup_start_factor x the schedule's first LR and reaches that LR (the base LR) at step W;
  /// the schedule then runs over the remaining steps, its step 0 at step W (as in timm and
  /// transformers: the peak is the base LR, not a fraction of it).
  double lrAt(std::int64_t step, const StepSpan& plan) const;
  /// The warmup's length in steps of `plan` (0: none).
  double warmupSteps(const StepSpan& plan) const;
  /// Every step's LR: what `netsmith-cli lr-schedule` prints and the training page plots.
  std::vector<double> curve(const StepSpan& plan) const;

  const std::string& type() const { return m_type; }
  double baseLr() const { return m_baseLr; }

 private:
  std::string m_type = "constant";
  double m_baseLr = 0.001;
  ScheduleDef m_def;  // a copy: the schedule outlives the registry it came from
  schema::Params m_params;
  double m_warmupEpochs = 0;
  std::int64_t m_warmupSteps = 0;
  double m_warmupStartFactor = 0.1;
};

/// ReduceLROnPlateau: not a function of the step, but of validation results. Feed it one
/// metric per epoch; it returns the factor to multiply the LR by (1 or `factor`).
class PlateauController {
 public:
  struct Options {
    bool maximize = false;  ///< "max" for accuracy, "min" for loss
    double factor = 0.1;
    std::int64_t patience = 10;
    double threshold = 1e-4;  ///< relative improvement needed
    std::int64_t cooldown = 0;
    double minLr = 0.0;
  };
  explicit PlateauController(Options options) : m_options(options) {}
  /// Records an epoch's metric; returns the new LR given the current one.
  double update(double metric, double currentLr);
  Json state() const;
  void restore(const Json& state);

 private:
  Options m_options;
  bool m_hasBest = false;
  double m_best = 0;
  std::int64_t m_badEpochs = 0;
  std::int64_t m_cooldownLeft = 0;
};

}  // namespace netsmith::train
