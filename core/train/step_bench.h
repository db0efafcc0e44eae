#pragma once

// What `netsmith-cli bench` measures: training images/s through the trainer's own batch code
// (Fit::trainBatch: the step runner's forward under autocast, loss, figures, backward, gradient
// norms, clipping, optimizer step at the plan's LR, then the watchdog, the batch event and the
// callbacks), with the model, optimizer, threads and loader `train` builds for the same project
// and flags. No run folder is written and nothing is evaluated. No LibTorch here.
#include <cstdint>

namespace netsmith::train {

struct StepRate {
  std::int64_t steps = 0;
  std::int64_t images = 0;
  double seconds = 0;
  double imagesPerSecond() const { return seconds > 0 ? double(images) / seconds : 0.0; }
};

struct BenchOptions {
  int warmup = 2;        ///< untimed batches before each measurement
  int steps = 20;        ///< timed batches
  bool realData = true;  ///< also measure through the training loader
};

struct BenchResult {
  StepRate synthetic;  ///< one random batch of the model's input shape, fed again and again
  StepRate real;       ///< the training split through the loader (when asked)
  int threads = 0;     ///< compute threads the run used
  int workers = 0;     ///< loader threads
};

}  // namespace netsmith::train
