#pragma once

// What `netsmith-cli bench` measures: training images/s through the trainer's own batch code
// (Fit::trainBatch: the step runner's forward under autocast, loss, figures, backward, gradient
// norms, clipping, optimizer step at the plan's LR, then the watchdog, the batch event and the
// callbacks), with the model, optimizer, threads and loader `train` builds for the same project
// and flags. No run folder is written and nothing is evaluated. No LibTorch here.
#include <cstdint>
#include <string>

namespace netsmith::train {

/// Where the timed batches' time went, in seconds summed over them.
struct StepPhases {
  double loader = 0;     ///< waiting for the next batch
  double forward = 0;    ///< the model's forward pass (under autocast)
  double figures = 0;    ///< the loss, the batch's loss and accuracy read out and summed
  double backward = 0;   ///< backward (and the gradient exchange of a data-parallel job)
  double norms = 0;      ///< gradient norms, global and per node
  double optimizer = 0;  ///< clipping, the optimizer step, zeroing the gradients
  double loop = 0;       ///< the rest of a batch: seeding, watchdog, batch event, callbacks
  double total() const { return loader + forward + figures + backward + norms + optimizer + loop; }
  /// The loop's own work: everything but the loader, forward, backward and the optimizer.
  double overhead() const { return figures + norms + loop; }
};

struct StepRate {
  std::int64_t steps = 0;
  std::int64_t images = 0;
  double seconds = 0;
  StepPhases phases;
  double imagesPerSecond() const { return seconds > 0 ? double(images) / seconds : 0.0; }
};

struct BenchOptions {
  int warmup = 2;        ///< untimed batches before each measurement
  int steps = 20;        ///< timed batches
  bool realData = true;  ///< also measure through the training loader
  /// After the measurements, one more pass over the synthetic batch under LibTorch's profiler,
  /// its chrome://tracing file written here ("" : none). Its timings are not reported.
  std::string profileTrace;
};

struct BenchResult {
  StepRate synthetic;       ///< one random batch of the model's input shape, fed again and again
  StepRate real;            ///< the training split through the loader (when asked)
  int threads = 0;          ///< compute threads the run used
  int workers = 0;          ///< loader threads
  int profiledBatches = 0;  ///< batches run under the profiler (its warm-up ones included)
};

}  // namespace netsmith::train
