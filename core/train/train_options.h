#pragma once

#include <cstdint>
#include <string>

#include "common/error.h"
#include "common/json.h"
#include "schema/param_schema.h"
#include "train/lr_schedule.h"

namespace netsmith::train {

/// The optimizer section: {"type": "sgd", "lr": 0.1, "momentum": 0.9, ...}.
struct OptimizerOptions {
  std::string type = "adam";  ///< sgd, adam, adamw, rmsprop, adagrad
  schema::Params params;      ///< resolved against the type's schema (lr, weight_decay, ...)
  double lr() const { return params.real("lr"); }
};

/// The parts of the `train` section this build interprets. Other keys are kept in the project
/// file untouched.
struct TrainOptions {
  std::int64_t epochs = 5;
  std::int64_t batchSize = 128;
  std::uint64_t seed = 0;
  OptimizerOptions optimizer;
  LrSchedule schedule;
};

/// The optimizer types and their parameter schemas (for forms and validation).
const schema::ParamSchema& optimizerSchema(const std::string& type);
std::vector<std::string> optimizerTypes();

/// Reads `train`; problems name `train.<key>` / `train.optimizer.<param>`.
TrainOptions parseTrainOptions(const Json& train, const ScheduleRegistry& schedules,
                               Problems& problems);

}  // namespace netsmith::train
