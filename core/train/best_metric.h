#pragma once

// Tracks the best value of train.monitor over the epochs: what "best" means for the best
// checkpoint and the dashboard's epoch table.
#include <cstdint>

#include "train/callback.h"
#include "train/train_options.h"

namespace netsmith::train {

class BestMetric : public Callback {
 public:
  explicit BestMetric(MetricChoice monitor) : m_monitor(std::move(monitor)) {}
  std::string onEpochEnd(const run::EpochMetrics& epoch) override;
  std::string stateKey() const override { return "best"; }
  Json saveState() const override;
  void restoreState(const Json& state) override;

  /// The last epoch improved on every epoch before it.
  bool improved() const { return m_improved; }
  bool hasBest() const { return m_hasBest; }
  double best() const { return m_best; }
  std::int64_t bestEpoch() const { return m_bestEpoch; }

 private:
  MetricChoice m_monitor;
  bool m_improved = false;
  bool m_hasBest = false;
  double m_best = 0;
  std::int64_t m_bestEpoch = -1;
};

}  // namespace netsmith::train
