#include "train/plateau_callback.h"

#include <algorithm>
#include <cmath>

#include "train/run_context.h"

namespace netsmith::train {

PlateauCallback::PlateauCallback(PlateauOptions options, std::function<double()> scheduledLr,
                                 std::function<void(const std::string&)> log)
    : m_options(std::move(options)),
      m_controller(m_options.controller),
      m_scheduledLr(std::move(scheduledLr)),
      m_log(std::move(log)) {}

double PlateauCallback::apply(double lr) const {
  lr *= m_factor;
  if (m_options.enabled && m_factor < 1.0) lr = std::max(lr, m_options.controller.minLr);
  return lr;
}

std::string PlateauCallback::onEpochEnd(const run::EpochMetrics& e) {
  if (!m_options.enabled) return {};
  bool found = false;
  const double v = metricOf(m_options.metric, e, found);
  if (!found || !std::isfinite(v)) return {};
  const double before = apply(m_scheduledLr());
  const double after = m_controller.update(v, before);
  if (after < before && before > 0) {
    m_factor *= after / before;
    if (m_log) {
      m_log("plateau: " + m_options.metric.name + " has not improved; learning rate " +
            brief(before) + " -> " + brief(after));
    }
  }
  return {};
}

Json PlateauCallback::saveState() const {
  return Json{{"factor", m_factor},
              {"controller", m_options.enabled ? m_controller.state() : Json::object()}};
}

void PlateauCallback::restoreState(const Json& state) {
  m_factor = state.at("factor").get<double>();
  const auto& controller = state.at("controller");
  if (m_options.enabled && !controller.empty()) m_controller.restore(controller);
}

void PlateauCallback::restoreUnkeyed(const Json& loop) {
  if (!loop.is_object() || !loop.contains("lr_factor")) return;
  restoreState(Json{{"factor", loop.at("lr_factor")},
                    {"controller", loop.value("plateau", Json::object())}});
}

}  // namespace netsmith::train
