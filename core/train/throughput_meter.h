#pragma once

// Images per second over the last few batches, as the dashboard and progress show it. Time
// spent paused is not training time: after a pause the next interval starts at the resume.
#include <chrono>
#include <cstdint>
#include <deque>
#include <utility>

namespace netsmith::train {

class ThroughputMeter {
 public:
  using Clock = std::chrono::steady_clock;
  explicit ThroughputMeter(std::size_t window = 20) : m_window(window) {}

  /// Starts timing now (the start of an epoch, or a resume after a pause).
  void restart(Clock::time_point now = Clock::now()) { m_last = now; }
  /// A batch of `images` finished at `now`; returns the images per second over the window.
  double add(std::int64_t images, Clock::time_point now = Clock::now()) {
    m_recent.emplace_back(std::chrono::duration<double>(now - m_last).count(), images);
    m_last = now;
    if (m_recent.size() > m_window) m_recent.pop_front();
    double seconds = 0;
    std::int64_t count = 0;
    for (const auto& [dt, k] : m_recent) {
      seconds += dt;
      count += k;
    }
    return seconds > 0 ? double(count) / seconds : 0.0;
  }

 private:
  std::size_t m_window;
  Clock::time_point m_last = Clock::now();
  std::deque<std::pair<double, std::int64_t>> m_recent;  // (seconds, images)
};

}  // namespace netsmith::train
