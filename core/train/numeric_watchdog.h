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
  /// A non-finite loss ("loss") or gradient norm ("gradient norm") at `where`.
  Verdict onNonFinite(const std::string& what, double value, const Position& where) const;
  bool skips() const { return m_policy == "skip"; }
  const std::deque<double>& recentNorms() const { return m_recent; }

 private:
  std::string m_policy;
  std::deque<double> m_recent;  // the last five gradient norms
};

}  // namespace netsmith::train
