#pragma once

// Callbacks: what the loop does at fixed points of a run besides training (checkpoints, early
// stopping, plateaus, best-metric tracking). Each works on the figures the loop hands it, so
// each can be tested with made-up figures and no model. No LibTorch here.
//
//   CallbackList callbacks;
//   callbacks.add(std::make_shared<EarlyStopping>(options.earlyStopping));
//   std::string why = callbacks.epochEnd(metrics);   // non-empty: stop, for this reason
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/json.h"
#include "run/events.h"

namespace netsmith::train {

struct MetricChoice;

class Callback {
 public:
  virtual ~Callback() = default;
  virtual void onRunStart() {}
  /// Before an epoch's first batch (a resumed run's first epoch too, mid-way or not).
  virtual void onEpochStart(std::int64_t /*epoch*/) {}
  /// After each training batch. A non-empty return asks the run to stop, for that reason.
  virtual std::string onBatchEnd(const run::BatchMetrics&) { return {}; }
  /// After an epoch's validation, once the position has moved on to the next epoch.
  virtual std::string onEpochEnd(const run::EpochMetrics&) { return {}; }
  virtual void onRunEnd(run::FinishState, const std::string& /*reason*/) {}
  /// The key its state is kept under in the checkpoint's "loop" object ("": it has none).
  virtual std::string stateKey() const { return {}; }
  virtual Json saveState() const { return nullptr; }
  /// Its state from a checkpoint (throws on a malformed one).
  virtual void restoreState(const Json& /*state*/) {}
  /// A checkpoint's loop object without stateKey(): one written before the callback existed
  /// (it starts fresh) or before it kept its state under a key of its own (it reads that).
  virtual void restoreUnkeyed(const Json& /*loop*/) {}

  /// Its state into and out of the loop object, under stateKey() (so a resume continues it).
  /// A checkpoint written before the callback existed has no state for it: it starts fresh.
  void save(Json& loop) const;
  void restore(const Json& loop);
};

/// Calls its callbacks in the order they were added. Every callback sees every event; the
/// first stop reason wins.
class CallbackList {
 public:
  void add(std::shared_ptr<Callback> callback) { m_callbacks.push_back(std::move(callback)); }
  void runStart();
  void epochStart(std::int64_t epoch);
  std::string batchEnd(const run::BatchMetrics& batch);
  std::string epochEnd(const run::EpochMetrics& epoch);
  void runEnd(run::FinishState state, const std::string& reason);
  void save(Json& loop) const;
  void restore(const Json& loop);

 private:
  std::vector<std::shared_ptr<Callback>> m_callbacks;
};

/// The value of `metric` in an epoch's figures. A validation metric falls back to its
/// training twin when the run has no validation split; `found` is false for an unknown name.
double metricOf(const MetricChoice& metric, const run::EpochMetrics& epoch, bool& found);

}  // namespace netsmith::train
