#pragma once

// The loop's position and running figures. All of it goes into a checkpoint (with the
// callbacks' own state beside it, in the same "loop" object), so a resumed run continues
// exactly. No LibTorch here.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/json.h"

namespace netsmith::train {

struct LoopState {
  std::int64_t epoch = 0;          ///< the epoch in progress
  std::int64_t nextBatch = 0;      ///< the next batch of that epoch
  std::int64_t step = 0;           ///< optimizer steps taken
  double lossSum = 0;              ///< this epoch so far (sum over samples)
  std::vector<double> figureSums;  ///< the task's training figure sums (Task::trainSums)
  std::int64_t seen = 0;
  double epochSeconds = 0;
  std::map<std::string, double> normSums;  ///< per node, summed over the epoch's steps
  std::int64_t normSteps = 0;
  double lossScale = 65536.0;  ///< the fp16 loss scaler
  std::int64_t scaleGrowth = 0;
  std::int64_t skippedSteps = 0;

  /// Moves to the start of the next epoch, clearing the epoch's running figures.
  void nextEpoch();
  Json toJson() const;
  /// Throws when a key is missing or of the wrong type (the caller names the file).
  void fromJson(const Json& j);
};

}  // namespace netsmith::train
