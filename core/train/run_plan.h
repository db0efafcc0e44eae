#pragma once

// The plan of a run: how many batches and optimizer steps, and the LR at every step. The one
// place these are computed: the trainer, `netsmith-cli lr-schedule`, the Training page's
// chart, progress and ETA, and resume checks all read a RunPlan. Pure: no LibTorch here.
//
//   auto options = parseTrainOptions(project.train, ScheduleRegistry::withBuiltins(), problems);
//   RunPlan plan = RunPlan::make(options, trainSplitSize, /*limitTrain=*/0, /*worldSize=*/1);
//   plan.stepsPerEpoch();     // ceil(batches per epoch / grad_accumulation)
//   plan.lrAt(step);          // the scheduled LR of optimizer step `step` (0-based)
#include <cstdint>
#include <string>
#include <vector>

#include "common/json.h"
#include "train/lr_schedule.h"

namespace netsmith::train {

struct TrainOptions;

/// The accumulation group a batch belongs to: the optimizer steps after its last batch.
struct BatchGroup {
  std::int64_t start = 0;  ///< first batch of the group (within the epoch)
  std::int64_t size = 1;   ///< batches in the group (the epoch's last group may be shorter)
  bool boundary = true;    ///< this batch ends the group: the optimizer steps after it
};

class RunPlan {
 public:
  /// `splitSamples`: the training split's size; `limitTrain` (> 0) keeps at most that many;
  /// train.overfit_batches and train.fast_dev_run shrink the run further, as the trainer does.
  static RunPlan make(const TrainOptions& options, std::int64_t splitSamples,
                      std::int64_t limitTrain, int worldSize);

  std::int64_t epochs() const { return m_epochs; }
  std::int64_t trainSamples() const { return m_trainSamples; }  ///< after limits
  std::int64_t batchSize() const { return m_batchSize; }        ///< per process
  int worldSize() const { return m_worldSize; }
  std::int64_t globalBatch() const { return m_batchSize * m_worldSize; }
  std::int64_t gradAccumulation() const { return m_accumulation; }
  std::int64_t batchesPerEpoch() const { return m_batchesPerEpoch; }
  std::int64_t stepsPerEpoch() const { return m_span.stepsPerEpoch; }
  std::int64_t totalSteps() const { return m_span.totalSteps(); }
  std::int64_t totalBatches() const { return m_epochs * m_batchesPerEpoch; }
  const StepSpan& span() const { return m_span; }
  const LrSchedule& schedule() const { return m_schedule; }

  /// The group of batch `batch` (0-based, within an epoch).
  BatchGroup groupOf(std::int64_t batch) const;
  /// Optimizer steps taken before batch `batch` of epoch `epoch` starts.
  std::int64_t stepsBefore(std::int64_t epoch, std::int64_t batch) const;
  /// The scheduled LR of optimizer step `step` (0-based; past the end, the last step's LR).
  /// ReduceLROnPlateau multiplies this at run time.
  double lrAt(std::int64_t step) const;
  /// lrAt() of every step: what `lr-schedule` prints and the Training page plots.
  std::vector<double> lrCurve() const;

  /// The figures a checkpoint records and `lr-schedule --json` prints (without the curve).
  Json toJson() const;
  /// "3 epochs x 47 batches of 64 (accumulation 2: 24 steps per epoch) = 72 optimizer steps".
  std::string describe() const;

 private:
  std::int64_t m_epochs = 1;
  std::int64_t m_trainSamples = 0;
  std::int64_t m_batchSize = 1;
  int m_worldSize = 1;
  std::int64_t m_accumulation = 1;
  std::int64_t m_batchesPerEpoch = 0;
  StepSpan m_span;
  LrSchedule m_schedule;
};

/// At most `limit` of `n` samples (limit <= 0: all): the size a `--limit-train` subset has.
std::int64_t limitedCount(std::int64_t n, std::int64_t limit);

}  // namespace netsmith::train
