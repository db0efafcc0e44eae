#pragma once

// Checkpoint cadence: "last" after every epoch, "best" when train.monitor improved, and
// "epoch-N" every train.checkpoint_every epochs, keeping the newest train.keep_checkpoints of
// those. Writing a checkpoint is the writer's business (CheckpointWriter in a run; a fake in
// tests).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "train/callback.h"

namespace netsmith::train {

class BestMetric;

class CheckpointCallback : public Callback {
 public:
  struct Options {
    std::string directory;   ///< "" writes nothing (no run folder)
    std::int64_t every = 0;  ///< epoch-N every N epochs (0: never)
    std::int64_t keep = 3;   ///< epoch-N files kept
  };
  /// `write(tag, metrics)` writes checkpoints/<tag>.safetensors and returns its path.
  using Writer = std::function<std::string(const std::string& tag, const Json& metrics)>;

  CheckpointCallback(Options options, Writer write, std::shared_ptr<const BestMetric> best);
  std::string onEpochEnd(const run::EpochMetrics& epoch) override;

 private:
  void pruneEpochCheckpoints(std::int64_t finished) const;

  Options m_options;
  Writer m_write;
  std::shared_ptr<const BestMetric> m_best;
};

}  // namespace netsmith::train
