#pragma once

// train.early_stopping: ends the run when a metric has not improved by min_delta for
// `patience` epochs.
#include <cstdint>

#include "train/callback.h"
#include "train/train_options.h"

namespace netsmith::train {

class EarlyStopping : public Callback {
 public:
  explicit EarlyStopping(EarlyStoppingOptions options) : m_options(std::move(options)) {}
  std::string onEpochEnd(const run::EpochMetrics& epoch) override;
  std::string stateKey() const override { return "early_stopping"; }
  Json saveState() const override;
  void restoreState(const Json& state) override;

  std::int64_t badEpochs() const { return m_badEpochs; }

 private:
  EarlyStoppingOptions m_options;
  bool m_hasBest = false;
  double m_best = 0;
  std::int64_t m_badEpochs = 0;
};

}  // namespace netsmith::train
