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

/// A metric the trainer tracks per epoch (for best-model tracking, early stopping, plateaus):
/// val_<figure> or train_<figure>, where the figure is "loss" or one of the task's figures
/// (classification's "accuracy"; see Task::figures()).
struct MetricChoice {
  std::string name = "val_accuracy";
  bool maximize = true;  ///< "max", "min", or under "auto" the figure's better direction
  bool autoMode = true;  ///< mode "auto": resolveMetric sets `maximize` from the task
  /// The figure's name without its split: "accuracy" of "val_accuracy".
  std::string figure() const;
  bool validation() const { return name.rfind("val_", 0) == 0; }
};

/// `train.early_stopping`: stop when `metric` has not improved by `minDelta` for `patience`
/// epochs.
struct EarlyStoppingOptions {
  bool enabled = false;
  MetricChoice metric{"val_loss", false};
  std::int64_t patience = 5;
  double minDelta = 0.0;
};

/// `train.plateau`: ReduceLROnPlateau on a validation metric, multiplying the scheduled LR.
struct PlateauOptions {
  bool enabled = false;
  MetricChoice metric{"val_loss", false};
  PlateauController::Options controller;
};

/// The `train` section of a project file. Every key has a schema (trainSchema()); unknown keys
/// are reported with a did-you-mean.
/// Gradual unfreezing: at the start of `epoch` (0-based), the frozen nodes from `from` on (that
/// node and every node that depends on it; all frozen nodes when empty) start to train.
struct UnfreezeStep {
  std::int64_t epoch = 0;
  std::string from;
};

struct TrainOptions {
  std::int64_t epochs = 5;
  std::int64_t batchSize = 128;
  std::uint64_t seed = 0;
  OptimizerOptions optimizer;
  LrSchedule schedule;

  std::string device = "cpu";        ///< cpu, cuda, cuda:N
  int threads = 0;                   ///< intra-op threads; 0: the cores the loader leaves
  int workers = 0;                   ///< loader threads; 0: automatic
  bool deterministic = false;        ///< deterministic algorithms; bitwise-repeatable on CPU
  int processes = 1;                 ///< local data-parallel ranks (torch.distributed)
  std::string distBackend = "auto";  ///< auto, gloo, nccl
  double distTimeout = 60;           ///< seconds before a silent peer is an error
  double distBucketMb = 25;          ///< gradient all-reduce bucket size
  bool syncBatchNorm = false;        ///< BatchNorm statistics across processes
  std::int64_t gradAccumulation = 1;
  double clipGradNorm = 0;   ///< 0: off
  double clipGradValue = 0;  ///< 0: off
  double labelSmoothing = 0;
  std::string loss;                   ///< train.loss ("": the task's default)
  std::string classWeights = "none";  ///< none, auto (inverse class frequency), or explicit
  std::vector<double> classWeightValues;
  std::string amp = "off";  ///< off, bf16, fp16 (fp16 on CUDA only, with a loss scaler)
  bool channelsLast = false;
  /// BatchNorm layers of frozen nodes stay in evaluation mode while training (fine-tuning: a
  /// small batch would otherwise overwrite the statistics the backbone was trained with).
  bool frozenBatchNormEval = true;
  std::vector<UnfreezeStep> unfreeze;  ///< train.unfreeze, by epoch
  /// The model's last Linear gets one output per class of the data, and new weights.
  bool replaceHead = false;
  std::string nanPolicy = "stop";  ///< stop, skip
  bool dropLast = false;
  /// train.sampler "balanced": each epoch draws as many samples as the split holds, every class
  /// equally likely (data::LoaderOptions::balanced).
  bool balancedSampler = false;
  std::int64_t overfitBatches = 0;   ///< train (and validate) on the first K batches only
  bool fastDevRun = false;           ///< one training and one validation batch, then stop
  bool evalTest = true;              ///< evaluate the test split at the end
  MetricChoice monitor;              ///< what "best" means
  bool monitorGiven = false;         ///< train.monitor is in the project (else the task's first)
  std::int64_t checkpointEvery = 0;  ///< also keep epoch-N every N epochs (0: never)
  std::int64_t keepCheckpoints = 3;  ///< how many epoch-N checkpoints to keep
  EarlyStoppingOptions earlyStopping;
  PlateauOptions plateau;
};

/// The scalar keys of `train` (for forms and `--help`); optimizer, schedule, early_stopping,
/// plateau and class_weights have their own readers.
const schema::ParamSchema& trainSchema();
/// The `train.early_stopping` and `train.plateau` sections (metric, mode and their numbers).
const schema::ParamSchema& earlyStoppingSchema();
const schema::ParamSchema& plateauSchema();
/// Parses a metric name ("val_accuracy") and mode ("auto", "min", "max").
/// Reads a metric name and mode ("auto", "min", "max"); false when the name is not
/// val_<figure> or train_<figure>. Under "auto", losses are minimised and everything else
/// maximised until resolveMetrics (trainability.h) asks the task.
bool parseMetricChoice(const std::string& name, const std::string& mode, MetricChoice& out);
/// The built-in metric `metric` is a near miss of ("val_los": "val_loss"), or "" (a built-in
/// name, or a figure of some task).
std::string metricTypo(const MetricChoice& metric);

/// The optimizer types and their parameter schemas (for forms and validation).
const schema::ParamSchema& optimizerSchema(const std::string& type);
std::vector<std::string> optimizerTypes();

/// Reads `train`; problems name `train.<key>` / `train.optimizer.<param>`.
TrainOptions parseTrainOptions(const Json& train, const ScheduleRegistry& schedules,
                               Problems& problems);

}  // namespace netsmith::train
