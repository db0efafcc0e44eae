#include "train/callback.h"

#include "train/train_options.h"

namespace netsmith::train {

void CallbackList::runStart() {
  for (auto& c : m_callbacks)
    c->onRunStart();
}

void CallbackList::epochStart(std::int64_t epoch) {
  for (auto& c : m_callbacks)
    c->onEpochStart(epoch);
}

std::string CallbackList::batchEnd(const BatchMetrics& batch) {
  std::string reason;
  for (auto& c : m_callbacks) {
    std::string r = c->onBatchEnd(batch);
    if (reason.empty()) reason = std::move(r);
  }
  return reason;
}

std::string CallbackList::epochEnd(const EpochMetrics& epoch) {
  std::string reason;
  for (auto& c : m_callbacks) {
    std::string r = c->onEpochEnd(epoch);
    if (reason.empty()) reason = std::move(r);
  }
  return reason;
}

void CallbackList::runEnd(FinishState state, const std::string& reason) {
  for (auto& c : m_callbacks)
    c->onRunEnd(state, reason);
}

void Callback::save(Json& loop) const {
  if (const auto key = stateKey(); !key.empty()) loop[key] = saveState();
}

void Callback::restore(const Json& loop) {
  const auto key = stateKey();
  if (key.empty()) return;
  if (loop.is_object() && loop.contains(key)) {
    restoreState(loop.at(key));
  } else {
    restoreUnkeyed(loop);
  }
}

void CallbackList::save(Json& loop) const {
  for (const auto& c : m_callbacks)
    c->save(loop);
}

void CallbackList::restore(const Json& loop) {
  for (auto& c : m_callbacks)
    c->restore(loop);
}

double metricOf(const MetricChoice& m, const EpochMetrics& e, bool& found) {
  found = true;
  if (m.name == "val_loss" && e.hasValidation) return e.validation.loss;
  if (m.name == "val_accuracy" && e.hasValidation) return e.validation.accuracy;
  if (m.name == "train_loss" || m.name == "val_loss") return e.trainLoss;
  if (m.name == "train_accuracy" || m.name == "val_accuracy") return e.trainAccuracy;
  found = false;
  return 0;
}

}  // namespace netsmith::train
