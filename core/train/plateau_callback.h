#pragma once

// train.plateau (ReduceLROnPlateau): after each epoch, a metric that has stopped improving
// lowers the factor applied to the scheduled LR.
#include <functional>
#include <string>

#include "train/callback.h"
#include "train/train_options.h"

namespace netsmith::train {

class PlateauCallback : public Callback {
 public:
  /// `scheduledLr`: the schedule's LR at the run's current step; `log`: where a reduction is
  /// announced. A disabled plateau leaves every LR as scheduled.
  PlateauCallback(PlateauOptions options, std::function<double()> scheduledLr,
                  std::function<void(const std::string&)> log);
  std::string onEpochEnd(const run::EpochMetrics& epoch) override;
  std::string stateKey() const override { return "lr_plateau"; }
  Json saveState() const override;
  void restoreState(const Json& state) override;
  /// Checkpoints written before this callback had a key of its own kept its factor and its
  /// controller beside the loop's figures ("lr_factor", "plateau").
  void restoreUnkeyed(const Json& loop) override;

  /// The LR to use for a scheduled `lr`: times the factor, not below min_lr once reduced.
  double apply(double lr) const;
  double factor() const { return m_factor; }

 private:
  PlateauOptions m_options;
  PlateauController m_controller;
  std::function<double()> m_scheduledLr;
  std::function<void(const std::string&)> m_log;
  double m_factor = 1.0;
};

}  // namespace netsmith::train
