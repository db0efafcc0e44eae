#include "train/numeric_watchdog.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "train/run_context.h"

namespace netsmith::train {

void NumericWatchdog::recordGradNorm(double norm) {
  m_recent.push_back(norm);
  if (m_recent.size() > 5) m_recent.pop_front();
}

namespace {

std::string divergenceAdvice(const NumericWatchdog::Position& at) {
  return " at step " + std::to_string(at.step + 1) + " (epoch " + std::to_string(at.epoch + 1) +
         ", batch " + std::to_string(at.batch + 1) + ", learning rate " + brief(at.lr) +
         "): training is diverging; lower the learning rate (train.optimizer.lr) or clip "
         "gradients (train.clip_grad_norm)";
}

}  // namespace

std::string NumericWatchdog::checkLoss(double loss, const Position& at) {
  if (!std::isfinite(loss)) return {};
  if (!(m_firstLoss > 0)) {
    m_firstLoss = loss;
    return {};
  }
  if (loss <= kLossFactor * m_firstLoss || m_lossWarnedEpoch == at.epoch) return {};
  m_lossWarnedEpoch = at.epoch;
  return "the loss (" + brief(loss) + ") is over " + brief(kLossFactor) + "x the first batch's (" +
         brief(m_firstLoss) + ")" + divergenceAdvice(at);
}

std::string NumericWatchdog::checkGradNorm(double norm, const Position& at) {
  if (!std::isfinite(norm) || m_recent.size() < 3) return {};
  std::vector<double> sorted(m_recent.begin(), m_recent.end());
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted[sorted.size() / 2];
  if (!(median > 0) || norm <= kNormFactor * median || m_normWarnedEpoch == at.epoch) return {};
  m_normWarnedEpoch = at.epoch;
  return "the gradient norm (" + brief(norm) + ") jumped to over " + brief(kNormFactor) +
         "x its recent median (" + brief(median) + ")" + divergenceAdvice(at);
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
