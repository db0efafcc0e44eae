#include "train/numeric_watchdog.h"

#include "train/run_context.h"

namespace netsmith::train {

void NumericWatchdog::recordGradNorm(double norm) {
  m_recent.push_back(norm);
  if (m_recent.size() > 5) m_recent.pop_front();
}

NumericWatchdog::Verdict NumericWatchdog::onNonFinite(const std::string& what, double value,
                                                      const Position& at) const {
  Verdict v;
  if (skips()) {
    v.message = what == "loss"
                    ? "skipped batch " + std::to_string(at.batch + 1) + " of epoch " +
                          std::to_string(at.epoch + 1) + ": non-finite loss"
                    : "skipped step " + std::to_string(at.step + 1) + ": non-finite " + what;
    return v;
  }
  std::string norms;
  for (double n : m_recent)
    norms += (norms.empty() ? "" : ", ") + brief(n);
  v.stop = true;
  v.message = "non-finite " + what + " (" + brief(value) + ") at step " +
              std::to_string(at.step + 1) + " (epoch " + std::to_string(at.epoch + 1) + ", batch " +
              std::to_string(at.batch + 1) + "), learning rate " + brief(at.lr) +
              "; recent gradient norms: " + (norms.empty() ? "none yet" : norms) +
              ". Lower the learning rate (train.optimizer.lr) or clip gradients "
              "(train.clip_grad_norm), or set train.nan_policy to \"skip\"";
  return v;
}

}  // namespace netsmith::train
