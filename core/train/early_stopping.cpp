#include "train/early_stopping.h"

#include <cmath>

#include "train/run_context.h"

namespace netsmith::train {

std::string EarlyStopping::onEpochEnd(const run::EpochMetrics& e) {
  if (!m_options.enabled) return {};
  bool found = false;
  const double v = metricOf(m_options.metric, e, found);
  if (!found || !std::isfinite(v)) return {};
  const bool better = !m_hasBest || (m_options.metric.maximize ? v > m_best + m_options.minDelta
                                                               : v < m_best - m_options.minDelta);
  if (better) {
    m_hasBest = true;
    m_best = v;
    m_badEpochs = 0;
    return {};
  }
  if (++m_badEpochs < m_options.patience) return {};
  const auto patience = m_options.patience;
  return "early stopping: " + m_options.metric.name + " has not improved for " +
         std::to_string(patience) + " epoch" + (patience == 1 ? "" : "s") + " (best " +
         brief(m_best) + ")";
}

Json EarlyStopping::saveState() const {
  return Json{{"has_best", m_hasBest}, {"best", m_best}, {"bad_epochs", m_badEpochs}};
}

void EarlyStopping::restoreState(const Json& es) {
  m_hasBest = es.at("has_best").get<bool>();
  m_best = es.at("best").get<double>();
  m_badEpochs = es.at("bad_epochs").get<std::int64_t>();
}

}  // namespace netsmith::train
