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

namespace netsmith::train {

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
  std::int64_t step = 0;  ///< optimizer steps taken so far (after this batch)
  std::int64_t totalSteps = 0;
  double loss = 0;
  double accuracy = 0;       ///< of this batch
  double epochLoss = 0;      ///< running mean over the epoch so far
  double epochAccuracy = 0;  ///< running mean over the epoch so far
  double lr = 0;
  double gradNorm = 0;  ///< global L2 norm before clipping (of the last optimizer step)
  double imagesPerSecond = 0;
  double lossScale = 0;   ///< fp16 loss scale (0 when not scaling)
  bool skipped = false;   ///< the optimizer step was skipped (non-finite values)
  double seconds = 0;     ///< since the run started (wall time axis of charts)
  double runSeconds = 0;  ///< training time so far, paused time left out (for ETAs)
  MemoryFigure memory;
};

/// Accuracy of one split, by class.
struct EvalMetrics {
  double loss = 0;
  double accuracy = 0;
  std::int64_t samples = 0;
  std::vector<double> perClassAccuracy;              ///< NaN where a class has no sample
  std::vector<std::vector<std::int64_t>> confusion;  ///< [true][predicted]
};

struct EpochMetrics {
  std::int64_t epoch = 0;
  std::int64_t epochs = 0;
  double trainLoss = 0;
  double trainAccuracy = 0;
  bool hasValidation = false;
  EvalMetrics validation;
  double lr = 0;
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
  std::string tag;   ///< Checkpoint: last, best, epoch-N; Warning: "divergence" (about a step);
                     ///< Finished: the checkpoint the test figure is of (best, last)
  FinishState state = FinishState::Completed;
  bool hasTest = false;  ///< Finished: test metrics present
  EvalMetrics test;
  Json toJson() const;
};

Json evalMetricsToJson(const EvalMetrics& m);
/// "epoch 2/7: train loss 0.7978 acc 88.82% | validation loss 0.3789 acc 89.63% | 62.0 s"
std::string describeEpoch(const EpochMetrics& m);

/// Receives events, from an AsyncSink's delivery thread (the trainer wraps every sink in
/// one). A sink may call the trainer's controls: they only set flags.
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void onEvent(const TrainingEvent& event) = 0;
};

/// Delivers events to a sink on its own thread, so a slow sink never slows the trainer.
/// The queue is unbounded for everything but BatchEnd: past `maxQueuedBatches` pending
/// BatchEnd events, the oldest pending BatchEnd is dropped (and counted).
class AsyncSink : public EventSink {
 public:
  explicit AsyncSink(std::shared_ptr<EventSink> target, std::size_t maxQueuedBatches = 10000);
  ~AsyncSink() override;                              ///< delivers what is queued, then joins
  void onEvent(const TrainingEvent& event) override;  ///< never blocks on the target
  /// Waits until every queued event has been delivered.
  void flush();
  std::int64_t droppedBatchEvents() const;

 private:
  void loop();
  std::shared_ptr<EventSink> m_target;
  std::size_t m_maxBatches;
  mutable std::mutex m_mutex;
  std::condition_variable m_cv;
  std::condition_variable m_idleCv;
  std::deque<TrainingEvent> m_queue;
  std::size_t m_queuedBatches = 0;
  std::int64_t m_dropped = 0;
  bool m_busy = false;
  bool m_closing = false;
  std::thread m_thread;
};

}  // namespace netsmith::train
