#pragma once

// The numeric watchdog: what a non-finite loss or gradient norm does to the run
// (train.nan_policy "stop" ends it with a checkpoint and a message that helps; "skip" drops the
// step and goes on), with the last few gradient norms to show what led there.
#include <cstdint>
#include <deque>
#include <string>

namespace netsmith::train {

class NumericWatchdog {
 public:
  explicit NumericWatchdog(std::string nanPolicy) : m_policy(std::move(nanPolicy)) {}

  /// Where the step was: for the message.
  struct Position {
    std::int64_t step = 0;   ///< 0-based optimizer step
    std::int64_t epoch = 0;  ///< 0-based
    std::int64_t batch = 0;  ///< 0-based within the epoch
    double lr = 0;
  };
  struct Verdict {
    bool stop = false;    ///< end the run (train.nan_policy "stop")
    std::string message;  ///< why (stop) or what was skipped (skip)
  };

  /// A finite gradient norm of an optimizer step.
  void recordGradNorm(double norm);

  /// Divergence that stays finite: a warning (once per epoch and kind) when a batch's loss is
  /// over kLossFactor x the loss of the session's first batch (a diverging run can blow up
  /// within a few steps), or a gradient norm is over kNormFactor x the median of the last few.
  /// "" when all is well.
  std::string checkLoss(double loss, const Position& where);
  std::string checkGradNorm(double norm, const Position& where);
  static constexpr double kLossFactor = 100;
  static constexpr double kNormFactor = 1000;
  /// A non-finite loss ("loss") or gradient norm ("gradient norm") at `where`.
  Verdict onNonFinite(const std::string& what, double value, const Position& where) const;
  bool skips() const { return m_policy == "skip"; }
  const std::deque<double>& recentNorms() const { return m_recent; }

 private:
  std::string m_policy;
  std::deque<double> m_recent;  // the last five gradient norms
  double m_firstLoss = 0;       // 0: none yet
  std::int64_t m_lossWarnedEpoch = -1;
  std::int64_t m_normWarnedEpoch = -1;
};

}  // namespace netsmith::train
