#pragma once
// Every registry a program knows, built once in its main and passed down (no LibTorch).
//
//   const auto registries = Registries::builtins();   // in main(), or a test's fixture
//   resolve::resolveProject(project::loadProject(path), *registries);
//
// Core never builds a registry of its own: what a program registers (an op, a transform, a
// schedule, a task, an evaluator, an exporter) reaches validation, training, eval, the doctor and
// export alike. Options structs that outlive a call (TrainerConfig, EvaluationOptions,
// DoctorOptions, ExportJob) hold the bundle as a shared pointer; `needRegistries` refuses a missing
// one.

#include <memory>

#include "augment/transform.h"
#include "eval/evaluator.h"
#include "ops/op_registry.h"
#include "registries/registries_fwd.h"
#include "task/task_registry.h"
#include "train/lr_schedule.h"

namespace netsmith {

namespace exporting {
class ExporterRegistry;
}

struct Registries {
  ops::OpRegistry ops;
  augment::TransformRegistry transforms;
  train::ScheduleRegistry schedules;
  task::TaskRegistry tasks;
  /// How each task's checkpoints are evaluated (classification's class view; the others'
  /// figures).
  eval::EvaluatorRegistry evaluators;
  /// By pointer: the exporters' header brings LibTorch (export/exporter.h has the type).
  std::shared_ptr<const exporting::ExporterRegistry> exporters;

  /// The built-in ops, transforms, schedules, tasks and exporters: the one place they are
  /// gathered (each program's main, the tests' fixtures).
  static std::shared_ptr<const Registries> builtins();
};

/// `registries`, or netsmith::Error naming `owner` when none was given.
const Registries& needRegistries(const RegistriesPtr& registries, const char* owner);

}  // namespace netsmith
