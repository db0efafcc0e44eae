// What the dashboard lays over the live series: past runs (dashed, on every chart, in the run's
// own colour, the one the Runs table shows) and warning marks (a red dashed line on the loss chart
// at each batch the run warned about), both kept in place as the x axis changes.
#include <qcustomplot.h>

#include <cmath>

#include "monitor/dashboard.h"
#include "monitor/dashboard_charts.h"

namespace netsmith::ui {

void Dashboard::markWarning(std::int64_t epoch, std::int64_t batch, const QString& text) {
  WarningMark w;
  w.epoch = epoch;
  w.batch = batch;
  w.text = text;
  m_warnings.push_back(w);
  placeWarnings();
}

void Dashboard::placeWarnings() {
  const auto& keys = m_keys.batches(m_mode);
  for (auto& w : m_warnings) {
    if (w.index < 0) {
      // The batch's point: searched from the newest (warnings come with their batch).
      w.index = m_keys.findBatch(w.epoch, w.batch);
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
  const auto& keys = m_keys.batches(m_mode);
  for (const auto& w : m_warnings)
    out << (w.index >= 0 ? keys[std::size_t(w.index)] : std::nan(""));
  return out;
}

void Dashboard::addOverlay(const RunHistory& run) {
  for (const auto& o : m_overlays)
    if (o.run.dir == run.dir) return;
  OverlayData o;
  o.name = run.name;
  o.run = run;
  const QColor color = runColor(run.name);
  o.graphs = {m_lossChart->addOverlayGraph(run.name, tr("train (smoothed)"), color, false),
              m_lossChart->addOverlayGraph(run.name, tr("validation"), color, true),
              findChart(QStringLiteral("accuracy"))
                  ->addOverlayGraph(run.name, tr("validation"), color, true),
              findChart(QStringLiteral("lr"))->addOverlayGraph(run.name, {}, color, false),
              findChart(QStringLiteral("grad_norm"))->addOverlayGraph(run.name, {}, color, false),
              findChart(QStringLiteral("memory"))->addOverlayGraph(run.name, {}, color, false),
              findChart(QStringLiteral("throughput"))->addOverlayGraph(run.name, {}, color, false)};
  m_overlays.push_back(o);
  redrawOverlay(m_overlays.back());
  refit();
}

int Dashboard::overlayPointCount(const QString& name) const {
  for (const auto& o : m_overlays)
    if (o.name == name && !o.graphs.isEmpty() && o.graphs[0]) return o.graphs[0]->data()->size();
  return 0;
}

void Dashboard::redrawOverlay(OverlayData& o) {
  const RunHistory& r = o.run;
  const QVector<double>& stepKeys = m_mode == XAxisMode::Step    ? r.stepIndex
                                    : m_mode == XAxisMode::Epoch ? r.stepEpoch
                                                                 : r.stepSeconds;
  const QVector<double>& epochKeys = m_mode == XAxisMode::Step    ? r.epochStep
                                     : m_mode == XAxisMode::Epoch ? r.epochIndex
                                                                  : r.epochSeconds;
  QVector<double> smoothed(r.stepLoss.size());
  LossEma ema(m_smoothing);
  for (int i = 0; i < r.stepLoss.size(); ++i)
    smoothed[i] = ema.add(r.stepLoss[i]);
  o.graphs[0]->setData(stepKeys, smoothed, true);
  o.graphs[1]->setData(epochKeys, r.epochValLoss, true);
  o.graphs[2]->setData(epochKeys, r.epochValFigure, true);
  o.graphs[3]->setData(stepKeys, r.stepLr, true);
  o.graphs[4]->setData(stepKeys, r.stepGradNorm, true);
  o.graphs[5]->setData(stepKeys, r.stepMemoryMiB, true);
  o.graphs[6]->setData(stepKeys, r.stepImagesPerSecond, true);
}

void Dashboard::clearOverlays() {
  for (auto& o : m_overlays)
    for (auto* g : o.graphs) {
      QCustomPlot* plot = g->parentPlot();
      plot->removeGraph(g);
    }
  m_overlays.clear();
  for (const auto& c : m_charts)
    c->plot()->legend->setVisible(c->plot()->graphCount() > 1);
  refit();
}

void Dashboard::removeOverlay(const QString& name) {
  for (int i = 0; i < m_overlays.size(); ++i) {
    if (m_overlays[i].name != name) continue;
    for (auto* g : m_overlays[i].graphs)
      g->parentPlot()->removeGraph(g);
    m_overlays.removeAt(i);
    for (const auto& c : m_charts)
      c->plot()->legend->setVisible(c->plot()->graphCount() > 1);
    refit();
    return;
  }
}

QStringList Dashboard::overlayNames() const {
  QStringList names;
  for (const auto& o : m_overlays)
    names << o.name;
  return names;
}

}  // namespace netsmith::ui
