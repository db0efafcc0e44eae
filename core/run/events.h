#pragma once

// What the trainer thread publishes, and the sinks that receive it. No LibTorch here: the UI,
// the CLI and the run writer include this header cheaply.
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/json.h"
#include "task/figures.h"

namespace netsmith::run {

enum class EventType { Started, BatchEnd, EpochEnd, Checkpoint, Log, Warning, Finished };
std::string eventTypeName(EventType type);

/// The memory figure of a step. On CUDA, the caching allocator's numbers; on CPU, the process
/// resident set. `kind` says which, so a chart can label it.
struct MemoryFigure {
  std::string kind = "process_rss";  ///< "process_rss" or "cuda_allocator"
  std::int64_t bytes = 0;            ///< RSS, or CUDA allocated
  std::int64_t reservedBytes = 0;    ///< CUDA reserved (0 on CPU)
  std::int64_t peakBytes = 0;        ///< CUDA peak allocated (0 on CPU)
};

struct BatchMetrics {
  std::int64_t epoch = 0;  ///< 0-based
  std::int64_t batch = 0;  ///< 0-based within the epoch
  std::int64_t batchesPerEpoch = 0;
  /// The optimizer step this batch belongs to, from 1 (the batches of an accumulation group
  /// share it; `lr-schedule` numbers its steps the same way).
  std::int64_t step = 0;
  std::int64_t totalSteps = 0;
  double loss = 0;
  /// The task's headline figure (its first, Task::figures(): classification's "accuracy",
  /// regression's "mae"), named so in events.jsonl and metrics.csv; "" for a task without one.
  std::string headline;
  double headlineValue = 0;       ///< of this batch (NaN when the batch gives none)
  double epochLoss = 0;           ///< running mean over the epoch so far
  double epochHeadlineValue = 0;  ///< running mean over the epoch so far
  double lr = 0;
  double gradNorm = 0;  ///< global L2 norm before clipping (of the last optimizer step)
  double imagesPerSecond = 0;
  double lossScale = 0;  ///< fp16 loss scale (0 when not scaling)
  bool skipped = false;  ///< the optimizer step was skipped (non-finite values)
  /// Display sinks only: BatchEnd events their queue dropped just before this one (a chart that
  /// could not keep up says how many points it skipped). Always 0 in the run's records.
  std::int64_t skippedBefore = 0;
  double seconds = 0;     ///< since the run started (wall time axis of charts)
  double runSeconds = 0;  ///< training time so far, paused time left out (for ETAs)
  MemoryFigure memory;
};

/// One split's figures (task/figures.h): loss, samples, the task's named figures, and
/// classification's accuracy, per-class accuracy and confusion matrix.
using task::EvalMetrics;

struct EpochMetrics {
  std::int64_t epoch = 0;
  std::int64_t epochs = 0;
  double trainLoss = 0;
  /// The train loss's label smoothing (0: none). Validation's loss has none, so the two differ
  /// by more than overfitting: messages say which loss is smoothed.
  double trainLabelSmoothing = 0;
  double trainAccuracy = 0;                    ///< NaN for a task without accuracy
  std::map<std::string, double> trainFigures;  ///< the task's training figures, by name
  bool hasValidation = false;
  EvalMetrics validation;
  double lr = 0;  ///< the LR of the epoch's last optimizer step
  double seconds = 0;
  std::map<std::string, double> layerGradNorms;  ///< mean per node over the epoch's steps
};

enum class FinishState { Completed, Stopped, Failed };
std::string finishStateName(FinishState state);

struct TrainingEvent {
  EventType type = EventType::Log;
  double time = 0;  ///< seconds since the run started
  BatchMetrics batch;
  EpochMetrics epoch;
  std::string message;  ///< Log / Warning / Finished reason / Started description
  std::string level = "info";
  std::string path;  ///< Checkpoint: the file; Started: the run folder
  /// Started: the metric that makes an epoch "best" (train.monitor as the run resolved it
  /// against its task: val_mae, ...) and whether higher is better.
  std::string monitor;
  bool monitorMaximize = true;
  std::string tag;  ///< Checkpoint: last, best, epoch-N; Warning: "divergence" (about a step);
                    ///< Finished: the checkpoint the test figure is of (best, last)
  FinishState state = FinishState::Completed;
  bool hasTest = false;  ///< Finished: test metrics present
  EvalMetrics test;
  Json toJson() const;
};

Json evalMetricsToJson(const EvalMetrics& m);
/// An epoch_end event of events.jsonl read back (a resumed run's history): the epoch, losses,
/// accuracies, figures, LR and time. A value that is missing, null or not a number is NaN (a
/// count 0); what the dashboard does not show (confusion, per-class lists, layer norms) is
/// left out. Never throws.
EpochMetrics epochMetricsFromJson(const Json& event);
/// "epoch 2/7: train loss 0.7978 acc 88.82% | validation loss 0.3789 acc 89.63% | 62.0 s"
std::string describeEpoch(const EpochMetrics& m);
/// " accuracy 91.05%" for a task with an accuracy; " map 0.9312 f1_macro 0.8810 ..." (every
/// figure, by name) for the others.
std::string figuresText(const EvalMetrics& m);

/// Receives events, from an AsyncSink's delivery thread (the trainer wraps every sink in
/// one). A sink may call the trainer's controls: they only set flags.
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void onEvent(const TrainingEvent& event) = 0;
};

/// What an AsyncSink does when its sink falls `maxQueuedBatches` BatchEnd events behind.
enum class Overflow {
  /// Drop the oldest pending BatchEnd (a display: the trainer never waits for it). The next
  /// BatchEnd delivered carries the count in `skippedBefore`.
  DropOldestBatch,
  /// Make the trainer wait for room (records: the run writer, --json lines; nothing is lost).
  /// The time it waited is measured (waitedSeconds()).
  Wait,
};

/// Delivers events to a sink on its own thread, so a slow sink does not slow the trainer until
/// it falls `maxQueuedBatches` BatchEnd events behind; then `overflow` decides. Events other
/// than BatchEnd are always queued.
class AsyncSink : public EventSink {
 public:
  explicit AsyncSink(std::shared_ptr<EventSink> target,
                     Overflow overflow = Overflow::DropOldestBatch,
                     std::size_t maxQueuedBatches = 10000);
  ~AsyncSink() override;  ///< delivers what is queued, then joins
  /// Queues the event; with Overflow::Wait it blocks while the queue is full.
  void onEvent(const TrainingEvent& event) override;
  /// Waits until every queued event has been delivered.
  void flush();
  std::int64_t droppedBatchEvents() const;
  double waitedSeconds() const;  ///< time onEvent() spent waiting for room (Overflow::Wait)

 private:
  void loop();
  std::shared_ptr<EventSink> m_target;
  Overflow m_overflow;
  std::size_t m_maxBatches;
  mutable std::mutex m_mutex;
  std::condition_variable m_cv;
  std::condition_variable m_idleCv;
  std::condition_variable m_roomCv;
  std::deque<TrainingEvent> m_queue;
  std::size_t m_queuedBatches = 0;
  std::int64_t m_dropped = 0;
  std::int64_t m_droppedSinceDelivery = 0;
  double m_waitedSeconds = 0;
  bool m_busy = false;
  bool m_closing = false;
  std::thread m_thread;
};

}  // namespace netsmith::run
