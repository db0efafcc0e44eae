#include "train/best_metric.h"

#include <cmath>

namespace netsmith::train {

std::string BestMetric::onEpochEnd(const run::EpochMetrics& e) {
  bool found = false;
  const double v = metricOf(m_monitor, e, found);
  m_improved =
      found && std::isfinite(v) && (!m_hasBest || (m_monitor.maximize ? v > m_best : v < m_best));
  if (m_improved) {
    m_hasBest = true;
    m_best = v;
    m_bestEpoch = e.epoch;
  }
  return {};
}

Json BestMetric::saveState() const {
  return Json{{"has", m_hasBest}, {"value", m_best}, {"epoch", m_bestEpoch}};
}

void BestMetric::restoreState(const Json& b) {
  m_hasBest = b.at("has").get<bool>();
  m_best = b.at("value").get<double>();
  m_bestEpoch = b.at("epoch").get<std::int64_t>();
  m_improved = false;
}

}  // namespace netsmith::train
