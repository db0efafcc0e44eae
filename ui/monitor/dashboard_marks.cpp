// The dashboard's warning marks: a red dashed line on the loss chart at each batch the run
// warned about (a loss or gradient norm running away), kept on its batch as the x axis changes.
#include <qcustomplot.h>

#include <cmath>

#include "monitor/dashboard.h"
#include "monitor/dashboard_charts.h"

namespace netsmith::ui {

namespace {

/// The batch keys of an axis mode (m_batchKeys is indexed by the mode).
std::size_t keysOf(XAxisMode mode) {
  return static_cast<std::size_t>(mode);
}

}  // namespace

void Dashboard::markWarning(std::int64_t epoch, std::int64_t batch, const QString& text) {
  WarningMark w;
  w.epoch = epoch;
  w.batch = batch;
  w.text = text;
  m_warnings.push_back(w);
  placeWarnings();
}

void Dashboard::placeWarnings() {
  const auto& keys = m_batchKeys[keysOf(m_mode)];
  for (auto& w : m_warnings) {
    if (w.index < 0) {
      // The batch's point: searched from the newest (warnings come with their batch).
      for (long i = long(m_batchIds.size()) - 1; i >= 0; --i) {
        if (m_batchIds[std::size_t(i)] == std::make_pair(w.epoch, w.batch)) {
          w.index = i;
          break;
        }
      }
      if (w.index < 0) continue;
      w.line = new QCPItemStraightLine(m_lossChart->plot());
      w.line->setPen(QPen(QColor(214, 39, 40), 1, Qt::DashLine));
      w.line->setSelectable(false);
    }
    const double key = keys[std::size_t(w.index)];
    w.line->point1->setCoords(key, 0);
    w.line->point2->setCoords(key, 1);
  }
}

QStringList Dashboard::warningTexts() const {
  QStringList out;
  for (const auto& w : m_warnings)
    out << w.text;
  return out;
}

QVector<double> Dashboard::warningKeys() const {
  QVector<double> out;
  const auto& keys = m_batchKeys[keysOf(m_mode)];
  for (const auto& w : m_warnings)
    out << (w.index >= 0 ? keys[std::size_t(w.index)] : std::nan(""));
  return out;
}

}  // namespace netsmith::ui
