#pragma once

// Where the dashboard's points lie on each of its x axes (step, epoch, wall time): every batch
// point's and every epoch point's key in each mode, kept so that a change of axis re-keys the
// charts in place and a warning finds its batch's point. No Qt here.
#include <array>
#include <cstdint>
#include <utility>
#include <vector>

namespace netsmith::run {
struct BatchMetrics;
}

namespace netsmith::ui {

/// The dashboard's x axes.
enum class XAxisMode { Step, Epoch, Time };

class PointKeys {
 public:
  static constexpr int kModes = 3;  ///< one key per XAxisMode, in its order
  using Keys = std::array<double, kModes>;

  /// A point's key on the axis `mode`.
  static double on(const Keys& keys, XAxisMode mode) { return keys[std::size_t(mode)]; }

  /// Appends batch `b`'s point; its keys in every mode.
  Keys addBatch(const run::BatchMetrics& b);
  /// Appends the point of epoch `epoch` (0-based), at the last batch's step and time.
  Keys addEpoch(std::int64_t epoch);
  const std::vector<double>& batches(XAxisMode mode) const { return m_batches[std::size_t(mode)]; }
  const std::vector<double>& epochs(XAxisMode mode) const { return m_epochs[std::size_t(mode)]; }
  /// The point of batch `batch` of epoch `epoch`, searched from the newest; -1 when not there.
  long findBatch(std::int64_t epoch, std::int64_t batch) const;
  /// The last batch point's time on the wall-time axis.
  double lastSeconds() const { return m_lastSeconds; }
  /// A resumed process counts its time from 0: its points go on after `seconds`.
  void continueAfter(double seconds) { m_timeOffset = seconds; }
  void clear();

 private:
  std::vector<std::pair<std::int64_t, std::int64_t>> m_ids;  ///< (epoch, batch) per point
  std::array<std::vector<double>, kModes> m_batches;
  std::array<std::vector<double>, kModes> m_epochs;
  double m_lastSeconds = 0;
  std::int64_t m_lastStep = 0;
  double m_timeOffset = 0;
};

}  // namespace netsmith::ui
