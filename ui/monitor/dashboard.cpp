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
#include "train/callback.h"
#include "train/train_options.h"
#include "util/chart_fit.h"

namespace netsmith::ui {

namespace {

constexpr int kMode[] = {0, 1, 2};
int modeIndex(XAxisMode m) {
  return kMode[static_cast<int>(m)];
}

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

}  // namespace

Dashboard::Dashboard(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("dashboard"));
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(0, 0, 0, 0);
  outer->addLayout(buildControls());

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
  for (std::size_t i = 0; i < m_charts.size(); ++i) {
    DashboardChart* chart = m_charts[i].get();
    gridLayout->addWidget(chart->plot(), int(i / 2), int(i % 2));
    chart->plot()->xAxis->setLabel(axisTitle(m_mode));
    chart->plot()->legend->setVisible(chart->plot()->graphCount() > 1);
    connectChart(chart);
  }

  m_table = buildEpochTable(splitter);
  splitter->addWidget(grid);
  splitter->addWidget(m_table);
  fitEpochTable();
  splitter->setStretchFactor(0, 1);
  splitter->setStretchFactor(1, 0);
  splitter->setCollapsible(1, false);
  splitter->installEventFilter(this);
  splitter->setSizes({1000, 380});
  outer->addWidget(splitter, 1);

  m_replotTimer = new QTimer(this);
  m_replotTimer->setSingleShot(true);
  connect(m_replotTimer, &QTimer::timeout, this, &Dashboard::replotNext);
  m_dirty.fill(false, chartCount());
  m_round.fill(false, chartCount());

  connect(m_axisBox, qOverload<int>(&QComboBox::currentIndexChanged), this,
          [this](int i) { setXAxisMode(static_cast<XAxisMode>(i)); });
  connect(m_smoothSlider, &QSlider::valueChanged, this, [this](int v) { setSmoothing(v / 100.0); });
  connect(m_logBox, &QCheckBox::toggled, this, &Dashboard::setGradNormLogScale);
  connect(m_followBox, &QCheckBox::toggled, this, &Dashboard::setFollow);
}

Dashboard::~Dashboard() = default;

QHBoxLayout* Dashboard::buildControls() {
  // x axis, smoothing, log scale, follow
  auto* controls = new QHBoxLayout;
  controls->addWidget(new QLabel(tr("X axis:"), this));
  m_axisBox = new QComboBox(this);
  m_axisBox->setObjectName(QStringLiteral("xAxisMode"));
  m_axisBox->addItems({tr("Step"), tr("Epoch"), tr("Wall time")});
  controls->addWidget(m_axisBox);
  controls->addSpacing(12);
  controls->addWidget(new QLabel(tr("Smoothing:"), this));
  m_smoothSlider = new QSlider(Qt::Horizontal, this);
  m_smoothSlider->setObjectName(QStringLiteral("smoothing"));
  m_smoothSlider->setRange(0, 99);
  m_smoothSlider->setValue(int(std::lround(m_smoothing * 100)));
  m_smoothSlider->setMaximumWidth(160);
  m_smoothSlider->setToolTip(tr("Exponential moving average of the step loss"));
  controls->addWidget(m_smoothSlider);
  m_smoothLabel = new QLabel(QString::number(m_smoothing, 'f', 2), this);
  controls->addWidget(m_smoothLabel);
  controls->addSpacing(12);
  m_logBox = new QCheckBox(tr("Log gradient norm"), this);
  m_logBox->setObjectName(QStringLiteral("gradNormLog"));
  controls->addWidget(m_logBox);
  m_followBox = new QCheckBox(tr("Follow"), this);
  m_followBox->setObjectName(QStringLiteral("follow"));
  m_followBox->setChecked(true);
  m_followBox->setToolTip(
      tr("Keep the newest points in view; zooming or panning a chart turns this off"));
  controls->addWidget(m_followBox);
  controls->addStretch(1);
  // Shown once the charts fell behind and skipped step points (the run's files have them all).
  m_skippedLabel = new QLabel(this);
  m_skippedLabel->setObjectName(QStringLiteral("skippedPoints"));
  m_skippedLabel->hide();
  controls->addWidget(m_skippedLabel);
  return controls;
}

QTreeWidget* Dashboard::buildEpochTable(QWidget* parent) {
  auto* table = new QTreeWidget(parent);
  table->setObjectName(QStringLiteral("epochTable"));
  table->setRootIsDecorated(false);
  table->setAlternatingRowColors(true);
  table->setHeaderLabels({tr("Epoch"), tr("Train loss"), tr("Train acc"), tr("Val loss"),
                          tr("Val acc"), tr("LR"), tr("Time (s)")});
  table->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table->header()->setStretchLastSection(false);  // its width is its columns' (fitEpochTable)
  return table;
}

void Dashboard::fitEpochTable() {
  // As wide as its columns where the window has the room, so that no header is cut ("Ti" for
  // "Time (s)"); in a narrow window (half a 1920 screen) it scrolls sideways instead.
  auto* header = m_table->header();
  header->resizeSections(QHeaderView::ResizeToContents);
  const int need = header->length() + 2 * m_table->frameWidth() +
                   m_table->verticalScrollBar()->sizeHint().width();
  m_table->setMinimumWidth(std::min(need, kLeastTableWidth));
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

int Dashboard::chartCount() const {
  return int(m_charts.size());
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
  for (auto& keys : m_batchKeys)
    keys.clear();
  for (auto& keys : m_epochKeys)
    keys.clear();
  for (auto& w : m_warnings)
    if (w.line) m_lossChart->plot()->removeItem(w.line);
  m_warnings.clear();
  m_batchIds.clear();
  m_skippedPoints = 0;
  m_skippedLabel->hide();
  m_table->headerItem()->setText(1, tr("Train loss"));
  m_table->headerItem()->setToolTip(1, QString());
  m_table->headerItem()->setText(2, tr("Train acc"));
  m_table->headerItem()->setText(4, tr("Val acc"));
  setMonitor(QStringLiteral("val_accuracy"), true);  // the next run says what it monitors
  m_bestRow = -1;
  m_lastBatchSeconds = 0;
  m_lastStep = 0;
  m_history.reset();
  m_timeOffset = 0;
  m_table->clear();
  fitEpochTable();
  setFollow(true);
  replotAll();
}

void Dashboard::configure(double clipGradNorm) {
  m_gradNormChart->setClip(clipGradNorm);
}

void Dashboard::setMonitor(const QString& monitor, bool maximize) {
  m_monitor = monitor;
  m_maximize = maximize;
  // The figure chart of a task without accuracy draws the monitored figure.
  QString figure = monitor;
  for (const char* prefix : {"val_", "train_"})
    if (figure.startsWith(QLatin1String(prefix))) figure.remove(0, int(qstrlen(prefix)));
  for (const auto& c : m_charts)
    if (auto* accuracy = dynamic_cast<AccuracyChart*>(c.get()))
      accuracy->setPreferredFigure(figure);
  m_table->headerItem()->setToolTip(0, tr("The best epoch by %1 is marked").arg(monitor));
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
    const double modeKeys[3] = {
        double(b.step),
        double(b.epoch) +
            double(b.batch + 1) / double(std::max<std::int64_t>(1, b.batchesPerEpoch)),
        b.seconds + m_timeOffset};
    for (int m = 0; m < 3; ++m)
      m_batchKeys[m].push_back(modeKeys[m]);
    m_batchIds.emplace_back(b.epoch, b.batch);
    keys.push_back(modeKeys[modeIndex(m_mode)]);
    m_lastBatchSeconds = modeKeys[2];
    m_lastStep = b.step;
    m_skippedPoints += b.skippedBefore;
  }
  if (m_skippedPoints > 0) {
    m_skippedLabel->setText(tr("%n step point(s) not drawn", nullptr,
                               int(std::min<std::int64_t>(m_skippedPoints, 1 << 30))));
    m_skippedLabel->setToolTip(
        tr("The charts fell behind training and skipped these steps; the run's metrics.csv and "
           "events.jsonl hold every step"));
    m_skippedLabel->show();
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
    drawHistory(std::numeric_limits<std::int64_t>::max(), e.epoch, 0, m_lastBatchSeconds);
  const double keys[3] = {double(m_lastStep), double(e.epoch + 1), m_lastBatchSeconds};
  for (int m = 0; m < 3; ++m)
    m_epochKeys[m].push_back(keys[m]);
  for (auto& c : m_charts) {
    c->addEpoch(e, keys[modeIndex(m_mode)]);
    c->updateHint();
  }
  fillEpochRow(e);
  if (m_follow)
    refit();
  else
    replotAll();
}

void Dashboard::fillEpochRow(const run::EpochMetrics& e) {
  auto* row = new QTreeWidgetItem(m_table);
  auto percent = [](double v) { return QString::number(100.0 * v, 'f', 2) + QLatin1Char('%'); };
  row->setText(0, QString::number(e.epoch + 1));
  row->setData(0, Qt::UserRole + 1, qint64(e.epoch + 1));  // as the run numbers it (resumed too)
  row->setText(1, QString::number(e.trainLoss, 'f', 4) +
                      (e.trainLabelSmoothing > 0 ? QStringLiteral(" *") : QString()));
  if (e.trainLabelSmoothing > 0) {
    const QString why = tr("* with label smoothing %1: validation's loss has none, so it reads "
                           "lower for the same predictions")
                            .arg(e.trainLabelSmoothing);
    row->setToolTip(1, why);
    m_table->headerItem()->setText(1, tr("Train loss *"));
    m_table->headerItem()->setToolTip(1, why);
  }
  // Accuracy, or the task's training figure (headlineFigure), in the header's name.
  QString figure;
  const auto* chart = dynamic_cast<const AccuracyChart*>(findChart(QStringLiteral("accuracy")));
  const QString preferred = chart ? chart->preferredFigure() : QString();
  const double trainFigure = headlineFigure(e, false, &figure, preferred);
  const auto shown = [&figure, percent](double v) {
    if (!std::isfinite(v)) return QStringLiteral("-");
    return figure.isEmpty() ? percent(v) : QString::number(v, 'g', 4);
  };
  m_table->headerItem()->setText(2,
                                 figure.isEmpty() ? tr("Train acc") : tr("Train %1").arg(figure));
  m_table->headerItem()->setText(4, figure.isEmpty() ? tr("Val acc") : tr("Val %1").arg(figure));
  row->setText(2, shown(trainFigure));
  row->setText(3, e.hasValidation ? QString::number(e.validation.loss, 'f', 4) : QString());
  row->setText(4, e.hasValidation ? shown(headlineFigure(e, true, nullptr, preferred)) : QString());
  row->setText(5, formatChartValue(e.lr));
  row->setToolTip(5, tr("The LR of the epoch's last optimizer step"));
  row->setText(6, QString::number(e.seconds, 'f', 1));
  for (int c = 1; c < 7; ++c)
    row->setTextAlignment(c, Qt::AlignRight | Qt::AlignVCenter);
  fitEpochTable();
  // The monitored metric of this epoch, read as the run's "best" reads it (train::metricOf: any
  // figure of the task, a validation metric falling back to training without validation).
  bool found = false;
  const double value =
      train::metricOf(train::MetricChoice{m_monitor.toStdString(), m_maximize}, e, found);
  row->setData(0, Qt::UserRole, value);
  if (std::isfinite(value) &&
      (m_bestRow < 0 || (m_maximize ? value > m_bestValue : value < m_bestValue))) {
    m_bestValue = value;
    m_bestRow = m_table->topLevelItemCount() - 1;
    markBest();
  }
  m_table->scrollToItem(row);
}

void Dashboard::markBest() {
  for (int i = 0; i < m_table->topLevelItemCount(); ++i) {
    auto* item = m_table->topLevelItem(i);
    const bool best = i == m_bestRow;
    QFont f = item->font(0);
    f.setBold(best);
    const QString epoch = QString::number(item->data(0, Qt::UserRole + 1).toLongLong());
    item->setText(0, best ? epoch + QStringLiteral(" \u2605") : epoch);
    item->setToolTip(0, best ? tr("best %1").arg(m_monitor) : QString());
    for (int c = 0; c < m_table->columnCount(); ++c)
      item->setFont(c, f);
  }
}

void Dashboard::refit() {
  // An overlaid run (a past run, a sweep's trial) fills a chart too: no "Press F5" hint over
  // it, and its axes keep their numbers.
  for (auto& c : m_charts)
    c->updateHint();
  // x: everything drawn so far; y: each chart's series ranges, tracked as points arrive (no
  // pass over a million points per update).
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  const auto& keys = m_batchKeys[modeIndex(m_mode)];
  if (!keys.empty()) {
    lo = std::min(lo, keys.front());
    hi = std::max(hi, keys.back());
  }
  const auto& ekeys = m_epochKeys[modeIndex(m_mode)];
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
  m_syncingRange = true;
  for (const auto& c : m_charts) {
    c->plot()->xAxis->setRange(m_mode == XAxisMode::Step && lo >= 1 ? 0 : lo, hi + span * 0.03);
    refitY(*c);
  }
  m_syncingRange = false;
  replotAll();
}

void Dashboard::refitY(const DashboardChart& chart) {
  QCustomPlot* plot = chart.plot();
  const bool log = plot->yAxis->scaleType() == QCPAxis::stLogarithmic;
  double ylo = std::numeric_limits<double>::infinity(), yhi = -ylo;
  chart.extendYRange(ylo, yhi);
  for (const auto& o : m_overlays)
    for (auto* g : o.graphs)
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

void Dashboard::replotAll() {
  m_dirty.fill(true, chartCount());
  scheduleReplot();
}

void Dashboard::scheduleReplot() {
  if (m_replotTimer->isActive() || m_roundRunning || !isVisible()) return;
  const double minGap = std::clamp(3.0 * m_lastRoundMs, 40.0, 500.0);
  const double since = m_roundClock.isValid() ? double(m_roundClock.elapsed()) : minGap;
  m_replotTimer->start(int(std::max(0.0, minGap - since)));
}

void Dashboard::replotNext() {
  if (!isVisible()) {
    m_roundRunning = false;
    return;  // stays dirty; showEvent() draws it
  }
  if (!m_roundRunning) {
    // A round draws the charts dirty when it starts; later updates wait for the next round.
    m_roundRunning = true;
    m_roundClock.start();
    m_round = m_dirty;
    m_dirty.fill(false, chartCount());
  }
  const int next = int(m_round.indexOf(true));
  if (next >= 0) {
    m_round[next] = false;
    m_charts[std::size_t(next)]->plot()->replot(QCustomPlot::rpImmediateRefresh);
  }
  if (m_round.indexOf(true) >= 0) {
    m_replotTimer->start(0);  // the next chart after the timers and input due now
    return;
  }
  m_roundRunning = false;
  m_lastRoundMs = double(m_roundClock.nsecsElapsed()) / 1e6;
  if (m_dirty.indexOf(true) >= 0) scheduleReplot();
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
  for (int i = 0; i < m_round.size(); ++i)  // a round cut short by hiding
    if (m_round[i]) m_dirty[i] = true;
  m_round.fill(false, chartCount());
  m_roundRunning = false;
  if (m_dirty.indexOf(true) >= 0) scheduleReplot();
}

void Dashboard::rekey() {
  // Every series holds one point per batch (or per epoch) in order; the keys in each mode are
  // increasing, so re-keying in place keeps the containers sorted.
  for (auto& c : m_charts)
    for (auto& s : c->series()) {
      const auto& keys =
          s.perEpoch ? m_epochKeys[modeIndex(m_mode)] : m_batchKeys[modeIndex(m_mode)];
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
  if (m_axisBox->currentIndex() != int(mode)) m_axisBox->setCurrentIndex(int(mode));
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
  m_smoothLabel->setText(QString::number(weight, 'f', 2));
  const int slider = int(std::lround(weight * 100));
  if (m_smoothSlider->value() != slider) {
    const QSignalBlocker block(m_smoothSlider);
    m_smoothSlider->setValue(slider);
  }
  m_lossChart->setSmoothing(weight);
  for (auto& o : m_overlays)
    redrawOverlay(o);
  replotAll();
}

void Dashboard::setGradNormLogScale(bool on) {
  if (m_logBox->isChecked() != on) m_logBox->setChecked(on);
  m_gradNormChart->setLogScale(on);
  refit();
}

void Dashboard::setFollow(bool on) {
  if (m_follow == on) return;
  m_follow = on;
  if (m_followBox->isChecked() != on) m_followBox->setChecked(on);
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
