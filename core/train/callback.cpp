#include "train/callback.h"

#include <cmath>

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

std::string CallbackList::batchEnd(const run::BatchMetrics& batch) {
  std::string reason;
  for (auto& c : m_callbacks) {
    std::string r = c->onBatchEnd(batch);
    if (reason.empty()) reason = std::move(r);
  }
  return reason;
}

std::string CallbackList::epochEnd(const run::EpochMetrics& epoch) {
  std::string reason;
  for (auto& c : m_callbacks) {
    std::string r = c->onEpochEnd(epoch);
    if (reason.empty()) reason = std::move(r);
  }
  return reason;
}

void CallbackList::runEnd(run::FinishState state, const std::string& reason) {
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

double metricOf(const MetricChoice& m, const run::EpochMetrics& e, bool& found) {
  found = true;
  const bool validation = m.validation() && e.hasValidation;
  const std::string figure = m.figure();
  if (figure == "loss") return validation ? e.validation.loss : e.trainLoss;
  const auto& figures = validation ? e.validation.figures : e.trainFigures;
  if (const auto it = figures.find(figure); it != figures.end()) return it->second;
  // An epoch that counted no sample has no figures (NaN); a name the task lacks is unknown.
  found = figures.empty();
  return std::nan("");
}

}  // namespace netsmith::train
