#pragma once

// What the pieces of a run (setup, loop, step runner, process group, callbacks) share with
// the Trainer that owns the thread: its controls, its event publisher and its state. No
// LibTorch here.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <sstream>
#include <string>

#include "run/events.h"

namespace netsmith::train {

enum class RunState;
struct TrainerConfig;

/// The user's controls, set from any thread and read by the loop between batches.
struct RunControls {
  std::atomic<bool> stopNow{false};
  std::atomic<bool> stopAfterEpoch{false};
  std::atomic<bool> paused{false};
  std::mutex mutex;
  std::condition_variable cv;

  /// Blocks while paused (returns at once when a stop arrives).
  void waitWhilePaused() {
    std::unique_lock<std::mutex> lock(mutex);
    cv.wait(lock, [&] { return !paused || stopNow; });
  }
  /// Waits at most `ms` for resume or stop.
  void waitWhilePausedFor(int ms) {
    std::unique_lock<std::mutex> lock(mutex);
    cv.wait_for(lock, std::chrono::milliseconds(ms), [&] { return !paused || stopNow; });
  }
};

/// Thrown inside a run to end it with a state and a reason (the Trainer catches it first).
struct RunEnd : std::exception {
  RunEnd(run::FinishState s, std::string why, bool io = false)
      : state(s), reason(std::move(why)), ioFailure(io) {}
  const char* what() const noexcept override { return reason.c_str(); }
  run::FinishState state;
  std::string reason;
  bool ioFailure = false;  ///< the machine failed (a full disk), not the input
};

/// The run's link to its Trainer.
struct RunContext {
  const TrainerConfig& config;
  RunControls& controls;
  std::atomic<RunState>& state;
  std::function<void(run::TrainingEvent)> publish;
  /// Starts the run writer on `runDir`, `headline` its metrics.csv figure column (it also
  /// receives the events sent before).
  std::function<void(const std::string& runDir, const std::string& headline)> attachRunWriter;
  /// What the run writer could not write ("" while all is well; see run::RunWriter::failure).
  std::function<std::string()> recordsFailure;

  void log(const std::string& message, const std::string& level = "info") const {
    run::TrainingEvent e;
    e.type = level == "warning" ? run::EventType::Warning : run::EventType::Log;
    e.level = level;
    e.message = message;
    publish(std::move(e));
  }
};

/// A number as a person reads it in a message ("0.001", "1.5e-07").
inline std::string brief(double v, int precision = 4) {
  std::ostringstream ss;
  ss.precision(precision);
  ss << v;
  return ss.str();
}

inline double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace netsmith::train
