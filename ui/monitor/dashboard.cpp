#include "monitor/dashboard.h"

#include <qcustomplot.h>
#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QScrollBar>
#include <QSlider>
#include <QSplitter>
#include <QToolTip>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

#include "monitor/dashboard_charts.h"
#include "monitor/dashboard_controls.h"
#include "monitor/epoch_table.h"
#include "monitor/replot_scheduler.h"
#include "train/callback.h"
#include "train/train_options.h"
#include "util/chart_fit.h"

namespace netsmith::ui {

namespace {

QString axisTitle(XAxisMode m) {
  switch (m) {
    case XAxisMode::Step:
      return QObject::tr("step");
    case XAxisMode::Epoch:
      return QObject::tr("epoch");
    case XAxisMode::Time:
      return QObject::tr("time (s)");
  }
  return {};
}

/// Moves `chart` into `charts` and returns it.
template <typename Chart>
Chart* keep(std::vector<std::unique_ptr<DashboardChart>>& charts, std::unique_ptr<Chart> chart) {
  Chart* raw = chart.get();
  charts.push_back(std::move(chart));
  return raw;
}

/// Fits `chart`'s y axis to its series and the overlaid runs' graphs on it (`overlays`).
void refitY(const DashboardChart& chart, const std::vector<QCPGraph*>& overlays) {
  QCustomPlot* plot = chart.plot();
  const bool log = plot->yAxis->scaleType() == QCPAxis::stLogarithmic;
  double ylo = std::numeric_limits<double>::infinity(), yhi = -ylo;
  chart.extendYRange(ylo, yhi);
  for (auto* g : overlays)
    if (g->parentPlot() == plot) {
      bool found = false;
      const auto r = g->getValueRange(found, QCP::sdBoth);
      if (found) {
        ylo = std::min(ylo, r.lower);
        yhi = std::max(yhi, r.upper);
      }
    }
  const auto* accuracy = dynamic_cast<const AccuracyChart*>(&chart);
  if (accuracy && accuracy->figure().isEmpty()) {
    // Accuracy lives in [0, 1]: the top is always 1 (100%), the bottom follows the data.
    const double bottom = std::isfinite(ylo) ? std::max(0.0, ylo - 0.05) : 0.0;
    plot->yAxis->setRange(bottom, 1.0);
    return;
  }
  if (!std::isfinite(ylo) || !std::isfinite(yhi)) return;
  if (log) {
    if (ylo <= 0) ylo = yhi > 0 ? yhi * 1e-3 : 1e-3;
    plot->yAxis->setRange(ylo / 1.3, std::max(yhi, ylo) * 1.3);
  } else {
    const double pad = std::max((yhi - ylo) * 0.08, std::max(std::fabs(yhi) * 0.02, 1e-9));
    plot->yAxis->setRange(ylo - pad, yhi + pad);
  }
}

}  // namespace

Dashboard::Dashboard(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("dashboard"));
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(0, 0, 0, 0);
  m_controls = new DashboardControls(m_smoothing, this);
  outer->addWidget(m_controls);

  auto* splitter = m_splitter = new QSplitter(Qt::Horizontal, this);
  auto* grid = new QWidget(splitter);
  auto* gridLayout = new QGridLayout(grid);
  gridLayout->setContentsMargins(0, 0, 0, 0);
  gridLayout->setSpacing(4);
  // In the order of chartIds().
  m_lossChart = keep(m_charts, std::make_unique<LossChart>(m_smoothing, this));
  keep(m_charts, std::make_unique<AccuracyChart>(this));
  keep(m_charts, BatchValueChart::learningRate(this));
  m_gradNormChart = keep(m_charts, std::make_unique<GradNormChart>(this));
  keep(m_charts, std::make_unique<MemoryChart>(this));
  keep(m_charts, BatchValueChart::throughput(this));
  m_replots = new ReplotScheduler(
      this, [this](int i) { return m_charts[std::size_t(i)]->plot(); }, int(m_charts.size()));
  for (std::size_t i = 0; i < m_charts.size(); ++i) {
    DashboardChart* chart = m_charts[i].get();
    gridLayout->addWidget(chart->plot(), int(i / 2), int(i % 2));
    chart->plot()->xAxis->setLabel(axisTitle(m_mode));
    chart->plot()->legend->setVisible(chart->plot()->graphCount() > 1);
    connectChart(chart);
  }

  m_table = new EpochTable(splitter);
  splitter->addWidget(grid);
  splitter->addWidget(m_table);
  fitEpochTable();
  splitter->setStretchFactor(0, 1);
  splitter->setStretchFactor(1, 0);
  splitter->setCollapsible(1, false);
  splitter->installEventFilter(this);
  splitter->setSizes({1000, 380});
  outer->addWidget(splitter, 1);

  connect(m_controls, &DashboardControls::axisModeChosen, this,
          [this](int i) { setXAxisMode(static_cast<XAxisMode>(i)); });
  connect(m_controls, &DashboardControls::smoothingChosen, this, &Dashboard::setSmoothing);
  connect(m_controls, &DashboardControls::logScaleToggled, this, &Dashboard::setGradNormLogScale);
  connect(m_controls, &DashboardControls::followToggled, this, &Dashboard::setFollow);
}

Dashboard::~Dashboard() = default;

void Dashboard::fitEpochTable() {
  // As wide as its columns where the window has the room, so that no header is cut ("Ti" for
  // "Time (s)"); in a narrow window (half a 1920 screen) it scrolls sideways instead.
  const int need = m_table->fitColumns();
  m_table->setMinimumWidth(std::min(need, EpochTable::kLeastWidth));
  const QList<int> sizes = m_splitter->sizes();
  const int total = sizes.value(0) + sizes.value(1);
  const int charts = m_splitter->widget(0)->minimumSizeHint().width();
  if (sizes.size() == 2 && sizes[1] < need && total > 0)
    m_splitter->setSizes({std::max(charts, total - need), std::min(need, total - charts)});
}

QStringList Dashboard::chartIds() {
  return {QStringLiteral("loss"),      QStringLiteral("accuracy"), QStringLiteral("lr"),
          QStringLiteral("grad_norm"), QStringLiteral("memory"),   QStringLiteral("throughput")};
}

void Dashboard::connectChart(DashboardChart* chart) {
  QCustomPlot* plot = chart->plot();
  const QString id = chart->id();
  // The user zooming or panning stops following; x ranges stay shared between the charts.
  connect(plot, &QCustomPlot::mouseWheel, this, [this] { setFollow(false); });
  connect(plot, &QCustomPlot::mousePress, this, [this](QMouseEvent* e) {
    if (e->button() == Qt::LeftButton) setFollow(false);
  });
  connect(plot->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this,
          [this, plot](const QCPRange& range) {
            if (m_syncingRange) return;
            m_syncingRange = true;
            for (const auto& c : m_charts)
              if (c->plot() != plot) {
                c->plot()->xAxis->setRange(range);
                c->plot()->replot(QCustomPlot::rpQueuedReplot);
              }
            m_syncingRange = false;
          });
  connect(plot, &QCustomPlot::customContextMenuRequested, this,
          [this, id](const QPoint& pos) { chartContextMenu(id, pos); });
  connect(plot, &QCustomPlot::mouseMove, this, [this, id](QMouseEvent* e) { showTooltip(id, e); });
}

DashboardChart* Dashboard::findChart(const QString& id) const {
  for (const auto& c : m_charts)
    if (c->id() == id) return c.get();
  return nullptr;
}

QCustomPlot* Dashboard::chart(const QString& id) const {
  const DashboardChart* c = findChart(id);
  return c ? c->plot() : nullptr;
}

QCPGraph* Dashboard::series(const QString& id) const {
  for (const auto& c : m_charts)
    if (const DashboardSeries* s = c->findSeries(id)) return s->graph;
  return nullptr;
}

int Dashboard::pointCount(const QString& id) const {
  const QCPGraph* g = series(id);
  return g ? g->dataCount() : -1;
}

QString Dashboard::memoryLabel() const {
  return chart(QStringLiteral("memory"))->yAxis->label();
}

void Dashboard::clear() {
  for (auto& c : m_charts)
    c->clear();
  m_keys.clear();
  for (auto& w : m_warnings)
    if (w.line) m_lossChart->plot()->removeItem(w.line);
  m_warnings.clear();
  m_controls->forgetRun();
  m_table->forgetRun();
  setMonitor(QStringLiteral("val_accuracy"), true);  // the next run says what it monitors
  m_history.reset();
  fitEpochTable();
  setFollow(true);
  replotAll();
}

int Dashboard::bestEpoch() const {
  return m_table->bestRow();
}

QTreeWidget* Dashboard::epochTable() const {
  return m_table;
}

void Dashboard::configure(double clipGradNorm) {
  m_gradNormChart->setClip(clipGradNorm);
}

void Dashboard::setMonitor(const QString& monitor, bool maximize) {
  m_table->setMonitor(monitor, maximize);
  // The figure chart of a task without accuracy draws the monitored figure.
  QString figure = monitor;
  for (const char* prefix : {"val_", "train_"})
    if (figure.startsWith(QLatin1String(prefix))) figure.remove(0, int(qstrlen(prefix)));
  for (const auto& c : m_charts)
    if (auto* accuracy = dynamic_cast<AccuracyChart*>(c.get()))
      accuracy->setPreferredFigure(figure);
}

void Dashboard::addBatches(const QVector<run::BatchMetrics>& batches) {
  if (batches.isEmpty()) return;
  if (m_history) {
    const auto& first = batches.front();
    drawHistory(first.step, first.epoch, first.batchesPerEpoch, first.seconds);
  }
  // Keys are appended in order, so every point is an append at the end of its container.
  QVector<double> keys;
  keys.reserve(batches.size());
  for (const auto& b : batches) {
    keys.push_back(PointKeys::on(m_keys.addBatch(b), m_mode));
    m_controls->addSkipped(b.skippedBefore);
  }
  for (auto& c : m_charts) {
    c->addBatches(batches, keys);
    c->updateHint();
  }
  placeWarnings();
  if (m_follow)
    refit();
  else
    replotAll();
}

void Dashboard::addEpoch(const run::EpochMetrics& e) {
  if (m_history)  // no step point came first: the history up to this epoch
    drawHistory(std::numeric_limits<std::int64_t>::max(), e.epoch, 0, m_keys.lastSeconds());
  const auto keys = m_keys.addEpoch(e.epoch);
  for (auto& c : m_charts) {
    c->addEpoch(e, PointKeys::on(keys, m_mode));
    c->updateHint();
  }
  // The table's figure is the one the accuracy chart draws (the monitored one, or accuracy).
  const auto* chart = dynamic_cast<const AccuracyChart*>(findChart(QStringLiteral("accuracy")));
  m_table->addEpoch(e, chart ? chart->preferredFigure() : QString());
  fitEpochTable();
  if (m_follow)
    refit();
  else
    replotAll();
}

void Dashboard::refit() {
  // An overlaid run (a past run, a sweep's trial) fills a chart too: no "Press F5" hint over
  // it, and its axes keep their numbers.
  for (auto& c : m_charts)
    c->updateHint();
  // x: everything drawn so far; y: each chart's series ranges, tracked as points arrive (no
  // pass over a million points per update).
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  const auto& keys = m_keys.batches(m_mode);
  if (!keys.empty()) {
    lo = std::min(lo, keys.front());
    hi = std::max(hi, keys.back());
  }
  const auto& ekeys = m_keys.epochs(m_mode);
  if (!ekeys.empty()) hi = std::max(hi, ekeys.back());
  for (const auto& o : m_overlays)
    for (auto* g : o.graphs) {
      bool found = false;
      const auto r = g->getKeyRange(found);
      if (found) {
        lo = std::min(lo, r.lower);
        hi = std::max(hi, r.upper);
      }
    }
  if (!std::isfinite(lo)) {
    lo = 0;
    hi = 1;
  }
  const double span = std::max(hi - lo, 1e-9);
  std::vector<QCPGraph*> overlays;
  for (const auto& o : m_overlays)
    overlays.insert(overlays.end(), o.graphs.begin(), o.graphs.end());
  m_syncingRange = true;
  for (const auto& c : m_charts) {
    c->plot()->xAxis->setRange(m_mode == XAxisMode::Step && lo >= 1 ? 0 : lo, hi + span * 0.03);
    refitY(*c, overlays);
  }
  m_syncingRange = false;
  replotAll();
}

void Dashboard::replotAll() {
  m_replots->replotAll();
}

bool Dashboard::eventFilter(QObject* watched, QEvent* event) {
  // The splitter laid out at a new size: the table takes the room it gives its columns.
  // Queued: the splitter shares out its new size after its filters have seen the event.
  if (watched == m_splitter && event->type() == QEvent::Resize)
    QMetaObject::invokeMethod(this, &Dashboard::fitEpochTable, Qt::QueuedConnection);
  return QWidget::eventFilter(watched, event);
}

void Dashboard::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  m_replots->pageShown();
}

void Dashboard::rekey() {
  // Every series holds one point per batch (or per epoch) in order; the keys in each mode are
  // increasing, so re-keying in place keeps the containers sorted.
  for (auto& c : m_charts)
    for (auto& s : c->series()) {
      const auto& keys = s.perEpoch ? m_keys.epochs(m_mode) : m_keys.batches(m_mode);
      auto data = s.graph->data();
      std::size_t i = 0;
      for (auto it = data->begin(); it != data->end() && i < keys.size(); ++it, ++i)
        it->key = keys[i];
    }
  placeWarnings();
}

void Dashboard::setXAxisMode(XAxisMode mode) {
  if (mode == m_mode) return;
  m_mode = mode;
  m_controls->showAxisMode(int(mode));
  rekey();
  for (auto& o : m_overlays)
    redrawOverlay(o);
  for (const auto& c : m_charts)
    c->plot()->xAxis->setLabel(axisTitle(m_mode));
  refit();
  if (!m_follow) {
    setFollow(true);  // the old zoom means nothing on the new axis
  }
}

void Dashboard::setSmoothing(double weight) {
  weight = std::clamp(weight, 0.0, 0.999);
  if (weight == m_smoothing) return;
  m_smoothing = weight;
  m_controls->showSmoothing(weight);
  m_lossChart->setSmoothing(weight);
  for (auto& o : m_overlays)
    redrawOverlay(o);
  replotAll();
}

void Dashboard::setGradNormLogScale(bool on) {
  m_controls->showLogScale(on);
  m_gradNormChart->setLogScale(on);
  refit();
}

void Dashboard::setFollow(bool on) {
  if (m_follow == on) return;
  m_follow = on;
  m_controls->showFollow(on);
  if (on) refit();
}

QString Dashboard::tooltipAt(const QString& chartId, double key) const {
  const DashboardChart* c = findChart(chartId);
  if (!c) return {};
  const QStringList lines =
      QStringList{QStringLiteral("%1 %2").arg(axisTitle(m_mode), formatChartValue(key))} +
      c->valuesAt(key);
  return lines.join(QLatin1Char('\n'));
}

void Dashboard::showTooltip(const QString& chartId, QMouseEvent* event) {
  QCustomPlot* plot = chart(chartId);
  if (!plot->axisRect()->rect().contains(event->pos())) {
    QToolTip::hideText();
    return;
  }
  const double key = plot->xAxis->pixelToCoord(event->pos().x());
  QToolTip::showText(event->globalPosition().toPoint(), tooltipAt(chartId, key), plot);
}

bool Dashboard::saveChartPng(const QString& chartId, const QString& path, QString* error) {
  const DashboardChart* c = findChart(chartId);
  if (!c && error) *error = tr("no chart \"%1\"").arg(chartId);
  return c && c->savePng(path, error);
}

bool Dashboard::saveChartCsv(const QString& chartId, const QString& path, QString* error) {
  const DashboardChart* c = findChart(chartId);
  if (!c && error) *error = tr("no chart \"%1\"").arg(chartId);
  return c &&
         c->saveCsv(path, axisTitle(m_mode).replace(QLatin1Char(' '), QLatin1Char('_')), error);
}

void Dashboard::chartContextMenu(const QString& chartId, const QPoint& pos) {
  QCustomPlot* plot = chart(chartId);
  QMenu menu(plot);
  menu.addAction(tr("Save chart as PNG..."), this, [this, chartId] {
    const QString path = QFileDialog::getSaveFileName(this, tr("Save chart"), chartId + ".png",
                                                      tr("PNG images (*.png)"));
    QString error;
    if (!path.isEmpty() && !saveChartPng(chartId, path, &error))
      QToolTip::showText(QCursor::pos(), error);
  });
  menu.addAction(tr("Save data as CSV..."), this, [this, chartId] {
    const QString path = QFileDialog::getSaveFileName(this, tr("Save chart data"), chartId + ".csv",
                                                      tr("CSV (*.csv)"));
    QString error;
    if (!path.isEmpty() && !saveChartCsv(chartId, path, &error))
      QToolTip::showText(QCursor::pos(), error);
  });
  menu.addSeparator();
  menu.addAction(tr("Fit and follow"), this, [this] { setFollow(true); });
  // A legend taller than a third of the chart folds away by itself; this shows or folds it
  // whatever its size.
  QAction* legend = menu.addAction(tr("Show legend"));
  legend->setObjectName(QStringLiteral("showLegend"));
  legend->setCheckable(true);
  legend->setChecked(legendShown(plot));
  legend->setEnabled(plot->graphCount() > 1);
  connect(legend, &QAction::toggled, plot, [plot](bool on) {
    setLegendMode(plot, on ? LegendMode::Shown : LegendMode::Hidden);
    plot->replot();
  });
  menu.exec(plot->mapToGlobal(pos));
}

}  // namespace netsmith::ui
