#include "dashboard.h"

#include <qcustomplot.h>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QSaveFile>
#include <QSlider>
#include <QSplitter>
#include <QToolTip>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <cmath>
#include <limits>

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

QString formatValue(double v) {
  if (!std::isfinite(v)) return QStringLiteral("-");
  const double a = std::fabs(v);
  if (a != 0 && (a < 1e-3 || a >= 1e6)) return QString::number(v, 'e', 3);
  return QString::number(v, 'g', 5);
}

QColor faint(QColor c) {
  c.setAlpha(70);
  return c;
}

}  // namespace

Dashboard::Dashboard(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("dashboard"));
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(0, 0, 0, 0);

  // Controls: x axis, smoothing, log scale, follow.
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
  outer->addLayout(controls);

  auto* splitter = new QSplitter(Qt::Horizontal, this);
  auto* grid = new QWidget(splitter);
  auto* gridLayout = new QGridLayout(grid);
  gridLayout->setContentsMargins(0, 0, 0, 0);
  gridLayout->setSpacing(4);
  const QStringList titles = {tr("Loss"),          tr("Accuracy"), tr("Learning rate"),
                              tr("Gradient norm"), tr("Memory"),   tr("Throughput")};
  const QStringList yLabels = {tr("loss"),    tr("accuracy"),          tr("learning rate"),
                               tr("L2 norm"), tr("process RSS (MiB)"), tr("images/s")};
  const auto ids = chartIds();
  for (int i = 0; i < ids.size(); ++i)
    gridLayout->addWidget(makeChart(ids[i], titles[i], yLabels[i]), i / 2, i % 2);

  const QColor blue(31, 119, 180), orange(255, 127, 14), green(44, 160, 44), red(214, 39, 40),
      purple(148, 103, 189), brown(140, 86, 75), grey(127, 127, 127);
  addSeries(QStringLiteral("train_loss"), QStringLiteral("loss"), tr("train (step)"), faint(blue),
            false, false);
  addSeries(QStringLiteral("train_loss_ema"), QStringLiteral("loss"), tr("train (smoothed)"), blue,
            false, false);
  addSeries(QStringLiteral("val_loss"), QStringLiteral("loss"), tr("validation (epoch)"), red, true,
            true);
  addSeries(QStringLiteral("train_accuracy"), QStringLiteral("accuracy"), tr("train"), blue, true,
            true);
  addSeries(QStringLiteral("val_accuracy"), QStringLiteral("accuracy"), tr("validation"), red, true,
            true);
  addSeries(QStringLiteral("lr"), QStringLiteral("lr"), tr("learning rate"), green, false, false);
  addSeries(QStringLiteral("grad_norm"), QStringLiteral("grad_norm"), tr("gradient norm"), purple,
            false, false);
  addSeries(QStringLiteral("memory"), QStringLiteral("memory"), tr("process RSS"), brown, false,
            false);
  addSeries(QStringLiteral("memory_reserved"), QStringLiteral("memory"), tr("reserved"), orange,
            false, false);
  addSeries(QStringLiteral("memory_peak"), QStringLiteral("memory"), tr("peak"), grey, false,
            false);
  addSeries(QStringLiteral("throughput"), QStringLiteral("throughput"), tr("images/s"), orange,
            false, false);
  series(QStringLiteral("memory_reserved"))->setVisible(false);
  series(QStringLiteral("memory_peak"))->setVisible(false);
  for (const auto& c : m_charts)
    c.plot->legend->setVisible(c.plot->graphCount() > 1);
  series(QStringLiteral("memory_reserved"))->removeFromLegend();
  series(QStringLiteral("memory_peak"))->removeFromLegend();

  m_clipLine = new QCPItemStraightLine(chart(QStringLiteral("grad_norm")));
  m_clipLine->setPen(QPen(red, 1, Qt::DashLine));
  m_clipLine->setVisible(false);

  m_table = new QTreeWidget(splitter);
  m_table->setObjectName(QStringLiteral("epochTable"));
  m_table->setRootIsDecorated(false);
  m_table->setAlternatingRowColors(true);
  m_table->setHeaderLabels({tr("Epoch"), tr("Train loss"), tr("Train acc"), tr("Val loss"),
                            tr("Val acc"), tr("LR"), tr("Time (s)")});
  m_table->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
  splitter->addWidget(grid);
  splitter->addWidget(m_table);
  splitter->setStretchFactor(0, 1);
  splitter->setStretchFactor(1, 0);
  m_table->setMinimumWidth(200);
  splitter->setSizes({1000, 380});
  outer->addWidget(splitter, 1);

  m_replotTimer = new QTimer(this);
  m_replotTimer->setSingleShot(true);
  connect(m_replotTimer, &QTimer::timeout, this, &Dashboard::replotNext);
  m_dirty.fill(false, m_charts.size());
  m_round.fill(false, m_charts.size());

  connect(m_axisBox, qOverload<int>(&QComboBox::currentIndexChanged), this,
          [this](int i) { setXAxisMode(static_cast<XAxisMode>(i)); });
  connect(m_smoothSlider, &QSlider::valueChanged, this, [this](int v) { setSmoothing(v / 100.0); });
  connect(m_logBox, &QCheckBox::toggled, this, &Dashboard::setGradNormLogScale);
  connect(m_followBox, &QCheckBox::toggled, this, &Dashboard::setFollow);
  applyPalette();
}

QStringList Dashboard::chartIds() {
  return {QStringLiteral("loss"),      QStringLiteral("accuracy"), QStringLiteral("lr"),
          QStringLiteral("grad_norm"), QStringLiteral("memory"),   QStringLiteral("throughput")};
}

QCustomPlot* Dashboard::makeChart(const QString& id, const QString& title, const QString& yLabel) {
  auto* plot = new QCustomPlot(this);
  plot->setObjectName(id + QStringLiteral("Chart"));
  plot->setMinimumSize(260, 170);
  plot->plotLayout()->insertRow(0);
  auto* heading = new QCPTextElement(plot, title, QFont(font().family(), 9, QFont::Bold));
  heading->setObjectName(QStringLiteral("title"));
  plot->plotLayout()->addElement(0, 0, heading);
  plot->xAxis->setLabel(axisTitle(m_mode));
  plot->yAxis->setLabel(yLabel);
  plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  plot->axisRect()->setRangeDrag(Qt::Horizontal | Qt::Vertical);
  plot->axisRect()->setRangeZoom(Qt::Horizontal | Qt::Vertical);
  plot->legend->setFont(QFont(font().family(), 8));
  plot->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
  plot->setNoAntialiasingOnDrag(true);
  plot->setPlottingHints(QCP::phFastPolylines | QCP::phCacheLabels);
  plot->setContextMenuPolicy(Qt::CustomContextMenu);
  plot->setMouseTracking(true);
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
              if (c.plot != plot) {
                c.plot->xAxis->setRange(range);
                c.plot->replot(QCustomPlot::rpQueuedReplot);
              }
            m_syncingRange = false;
          });
  connect(plot, &QCustomPlot::customContextMenuRequested, this,
          [this, id](const QPoint& pos) { chartContextMenu(id, pos); });
  connect(plot, &QCustomPlot::mouseMove, this, [this, id](QMouseEvent* e) { showTooltip(id, e); });
  m_charts.push_back({id, plot});
  return plot;
}

Dashboard::Series& Dashboard::addSeries(const QString& id, const QString& chartId,
                                        const QString& name, const QColor& color, bool perEpoch,
                                        bool markers) {
  QCustomPlot* plot = chart(chartId);
  QCPGraph* g = plot->addGraph();
  g->setName(name);
  // Width 1: the raster engine's fast (cosmetic) line path; wider pens go through the stroker,
  // which is ~50x slower on a dense series.
  g->setPen(QPen(color, markers ? 1.5 : 1.0));
  g->setAdaptiveSampling(true);
  if (markers) g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, color, color, 6));
  Series s;
  s.id = id;
  s.chart = chartId;
  s.graph = g;
  s.perEpoch = perEpoch;
  m_seriesIndex.insert(id, m_series.size());
  m_series.push_back(s);
  return m_series.back();
}

QCustomPlot* Dashboard::chart(const QString& id) const {
  for (const auto& c : m_charts)
    if (c.id == id) return c.plot;
  return nullptr;
}

QCPGraph* Dashboard::series(const QString& id) const {
  const int i = m_seriesIndex.value(id, -1);
  return i < 0 ? nullptr : m_series[i].graph;
}

int Dashboard::pointCount(const QString& id) const {
  const QCPGraph* g = series(id);
  return g ? g->dataCount() : -1;
}

QString Dashboard::memoryLabel() const {
  return chart(QStringLiteral("memory"))->yAxis->label();
}

void Dashboard::clear() {
  for (auto& s : m_series) {
    s.graph->data()->clear();
    s.hasRange = false;
  }
  for (auto& keys : m_batchKeys)
    keys.clear();
  for (auto& keys : m_epochKeys)
    keys.clear();
  m_emaValue = 0;
  m_emaCount = 0;
  m_bestRow = -1;
  m_lastBatchSeconds = 0;
  m_lastStep = 0;
  m_table->clear();
  setFollow(true);
  replotAll();
}

void Dashboard::configure(double clipGradNorm, const QString& monitor, bool maximize) {
  m_clip = clipGradNorm;
  m_monitor = monitor;
  m_maximize = maximize;
  m_clipLine->setVisible(m_clip > 0);
  if (m_clip > 0) {
    m_clipLine->point1->setCoords(0, m_clip);
    m_clipLine->point2->setCoords(1, m_clip);
  }
  m_table->headerItem()->setToolTip(0, tr("The best epoch by %1 is marked").arg(monitor));
}

void Dashboard::append(Series& s, double key, double value) {
  s.graph->data()->add(QCPGraphData(key, value));
  if (!std::isfinite(value)) return;
  if (!s.hasRange) {
    s.minValue = s.maxValue = value;
    s.minPositive = value > 0 ? value : 0;
    s.hasRange = true;
  } else {
    s.minValue = std::min(s.minValue, value);
    s.maxValue = std::max(s.maxValue, value);
  }
  if (value > 0 && (s.minPositive <= 0 || value < s.minPositive)) s.minPositive = value;
}

void Dashboard::addBatches(const QVector<train::BatchMetrics>& batches) {
  if (batches.isEmpty()) return;
  auto at = [this](const char* id) -> Series& { return m_series[m_seriesIndex.value(id)]; };
  Series& loss = at("train_loss");
  Series& ema = at("train_loss_ema");
  Series& lr = at("lr");
  Series& grad = at("grad_norm");
  Series& mem = at("memory");
  Series& reserved = at("memory_reserved");
  Series& peak = at("memory_peak");
  Series& speed = at("throughput");
  if (batches.front().memory.kind != m_memoryKind) updateMemoryLabels(batches.front().memory.kind);
  const bool cuda = m_memoryKind == "cuda_allocator";
  // Keys are appended in order, so every add() is an append at the end of the container.
  for (const auto& b : batches) {
    const double keys[3] = {double(b.step),
                            double(b.epoch) + double(b.batch + 1) / double(std::max<std::int64_t>(
                                                                        1, b.batchesPerEpoch)),
                            b.seconds};
    for (int m = 0; m < 3; ++m)
      m_batchKeys[m].push_back(keys[m]);
    const double key = keys[modeIndex(m_mode)];
    append(loss, key, b.loss);
    if (std::isfinite(b.loss)) {
      m_emaValue = m_smoothing * m_emaValue + (1 - m_smoothing) * b.loss;
      ++m_emaCount;
    }
    const double debias = 1 - std::pow(m_smoothing, double(std::max<std::int64_t>(1, m_emaCount)));
    append(ema, key, m_emaCount ? m_emaValue / (debias > 0 ? debias : 1) : b.loss);
    append(lr, key, b.lr);
    append(grad, key, b.gradNorm);
    append(mem, key, double(b.memory.bytes) / (1024.0 * 1024.0));
    if (cuda) {
      append(reserved, key, double(b.memory.reservedBytes) / (1024.0 * 1024.0));
      append(peak, key, double(b.memory.peakBytes) / (1024.0 * 1024.0));
    }
    append(speed, key, b.imagesPerSecond);
    m_lastBatchSeconds = b.seconds;
    m_lastStep = b.step;
  }
  if (m_follow)
    refit();
  else
    replotAll();
}

void Dashboard::updateMemoryLabels(const std::string& kind) {
  m_memoryKind = kind;
  const bool cuda = kind == "cuda_allocator";
  chart(QStringLiteral("memory"))
      ->yAxis->setLabel(cuda ? tr("CUDA memory (MiB)") : tr("process RSS (MiB)"));
  series(QStringLiteral("memory"))->setName(cuda ? tr("allocated") : tr("process RSS"));
  for (const char* id : {"memory_reserved", "memory_peak"}) {
    QCPGraph* g = series(QLatin1String(id));
    g->setVisible(cuda);
    if (cuda)
      g->addToLegend();
    else
      g->removeFromLegend();
  }
  chart(QStringLiteral("memory"))->legend->setVisible(true);
}

void Dashboard::addEpoch(const train::EpochMetrics& e) {
  const double keys[3] = {double(m_lastStep), double(e.epoch + 1), m_lastBatchSeconds};
  for (int m = 0; m < 3; ++m)
    m_epochKeys[m].push_back(keys[m]);
  const double key = keys[modeIndex(m_mode)];
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto at = [this](const char* id) -> Series& { return m_series[m_seriesIndex.value(id)]; };
  append(at("train_accuracy"), key, e.trainAccuracy);
  append(at("val_accuracy"), key, e.hasValidation ? e.validation.accuracy : nan);
  append(at("val_loss"), key, e.hasValidation ? e.validation.loss : nan);

  auto* row = new QTreeWidgetItem(m_table);
  auto percent = [](double v) { return QString::number(100.0 * v, 'f', 2) + QLatin1Char('%'); };
  row->setText(0, QString::number(e.epoch + 1));
  row->setText(1, QString::number(e.trainLoss, 'f', 4));
  row->setText(2, percent(e.trainAccuracy));
  row->setText(3, e.hasValidation ? QString::number(e.validation.loss, 'f', 4) : QString());
  row->setText(4, e.hasValidation ? percent(e.validation.accuracy) : QString());
  row->setText(5, formatValue(e.lr));
  row->setText(6, QString::number(e.seconds, 'f', 1));
  for (int c = 1; c < 7; ++c)
    row->setTextAlignment(c, Qt::AlignRight | Qt::AlignVCenter);
  // The monitored metric of this epoch
  double value = nan;
  if (m_monitor == QLatin1String("val_loss") && e.hasValidation) value = e.validation.loss;
  if (m_monitor == QLatin1String("val_accuracy") && e.hasValidation) value = e.validation.accuracy;
  if (m_monitor == QLatin1String("train_loss")) value = e.trainLoss;
  if (m_monitor == QLatin1String("train_accuracy")) value = e.trainAccuracy;
  row->setData(0, Qt::UserRole, value);
  if (std::isfinite(value) &&
      (m_bestRow < 0 || (m_maximize ? value > m_bestValue : value < m_bestValue))) {
    m_bestValue = value;
    m_bestRow = m_table->topLevelItemCount() - 1;
    markBest();
  }
  m_table->scrollToItem(row);
  if (m_follow)
    refit();
  else
    replotAll();
}

void Dashboard::markBest() {
  for (int i = 0; i < m_table->topLevelItemCount(); ++i) {
    auto* item = m_table->topLevelItem(i);
    const bool best = i == m_bestRow;
    QFont f = item->font(0);
    f.setBold(best);
    const QString epoch = QString::number(i + 1);
    item->setText(0, best ? epoch + QStringLiteral(" \u2605") : epoch);
    item->setToolTip(0, best ? tr("best %1").arg(m_monitor) : QString());
    for (int c = 0; c < m_table->columnCount(); ++c)
      item->setFont(c, f);
  }
}

void Dashboard::refit() {
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
    c.plot->xAxis->setRange(m_mode == XAxisMode::Step && lo >= 1 ? 0 : lo, hi + span * 0.03);
    const bool log = c.plot->yAxis->scaleType() == QCPAxis::stLogarithmic;
    double ylo = std::numeric_limits<double>::infinity(), yhi = -ylo;
    for (const auto& s : m_series) {
      if (s.chart != c.id || !s.hasRange || !s.graph->visible()) continue;
      ylo = std::min(ylo, log ? s.minPositive : s.minValue);
      yhi = std::max(yhi, s.maxValue);
    }
    for (const auto& o : m_overlays)
      for (auto* g : o.graphs)
        if (g->parentPlot() == c.plot) {
          bool found = false;
          const auto r = g->getValueRange(found, QCP::sdBoth);
          if (found) {
            ylo = std::min(ylo, r.lower);
            yhi = std::max(yhi, r.upper);
          }
        }
    if (c.id == QLatin1String("grad_norm") && m_clip > 0) {
      ylo = std::min(ylo, m_clip);
      yhi = std::max(yhi, m_clip);
    }
    if (!std::isfinite(ylo) || !std::isfinite(yhi)) continue;
    if (log) {
      if (ylo <= 0) ylo = yhi > 0 ? yhi * 1e-3 : 1e-3;
      c.plot->yAxis->setRange(ylo / 1.3, std::max(yhi, ylo) * 1.3);
    } else {
      const double pad = std::max((yhi - ylo) * 0.08, std::max(std::fabs(yhi) * 0.02, 1e-9));
      c.plot->yAxis->setRange(ylo - pad, yhi + pad);
    }
  }
  m_syncingRange = false;
  replotAll();
}

void Dashboard::replotAll() {
  m_dirty.fill(true, m_charts.size());
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
    m_dirty.fill(false, m_charts.size());
  }
  const int next = int(m_round.indexOf(true));
  if (next >= 0) {
    m_round[next] = false;
    m_charts[next].plot->replot(QCustomPlot::rpImmediateRefresh);
  }
  if (m_round.indexOf(true) >= 0) {
    m_replotTimer->start(0);  // the next chart after the timers and input due now
    return;
  }
  m_roundRunning = false;
  m_lastRoundMs = double(m_roundClock.nsecsElapsed()) / 1e6;
  if (m_dirty.indexOf(true) >= 0) scheduleReplot();
}

void Dashboard::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  for (int i = 0; i < m_round.size(); ++i)  // a round cut short by hiding
    if (m_round[i]) m_dirty[i] = true;
  m_round.fill(false, m_charts.size());
  m_roundRunning = false;
  if (m_dirty.indexOf(true) >= 0) scheduleReplot();
}

double Dashboard::keyOf(const std::vector<double>* keys, std::size_t index) const {
  return keys[modeIndex(m_mode)][index];
}

void Dashboard::rekey() {
  // Every series holds one point per batch (or per epoch) in order; the keys in each mode are
  // increasing, so re-keying in place keeps the containers sorted.
  for (auto& s : m_series) {
    const auto& keys = s.perEpoch ? m_epochKeys[modeIndex(m_mode)] : m_batchKeys[modeIndex(m_mode)];
    auto data = s.graph->data();
    std::size_t i = 0;
    for (auto it = data->begin(); it != data->end() && i < keys.size(); ++it, ++i)
      it->key = keys[i];
  }
}

void Dashboard::setXAxisMode(XAxisMode mode) {
  if (mode == m_mode) return;
  m_mode = mode;
  if (m_axisBox->currentIndex() != int(mode)) m_axisBox->setCurrentIndex(int(mode));
  rekey();
  for (auto& o : m_overlays)
    redrawOverlay(o);
  for (const auto& c : m_charts)
    c.plot->xAxis->setLabel(axisTitle(m_mode));
  refit();
  if (!m_follow) {
    setFollow(true);  // the old zoom means nothing on the new axis
  }
}

void Dashboard::recomputeEma() {
  auto raw = series(QStringLiteral("train_loss"))->data();
  auto& emaSeries = m_series[m_seriesIndex.value(QStringLiteral("train_loss_ema"))];
  auto ema = emaSeries.graph->data();
  m_emaValue = 0;
  m_emaCount = 0;
  emaSeries.hasRange = false;
  QVector<QCPGraphData> out;
  out.reserve(raw->size());
  for (auto it = raw->constBegin(); it != raw->constEnd(); ++it) {
    if (std::isfinite(it->value)) {
      m_emaValue = m_smoothing * m_emaValue + (1 - m_smoothing) * it->value;
      ++m_emaCount;
    }
    const double debias = 1 - std::pow(m_smoothing, double(std::max<std::int64_t>(1, m_emaCount)));
    const double v = m_emaCount ? m_emaValue / (debias > 0 ? debias : 1) : it->value;
    out.push_back(QCPGraphData(it->key, v));
    if (std::isfinite(v)) {
      emaSeries.minValue = emaSeries.hasRange ? std::min(emaSeries.minValue, v) : v;
      emaSeries.maxValue = emaSeries.hasRange ? std::max(emaSeries.maxValue, v) : v;
      emaSeries.hasRange = true;
    }
  }
  ema->set(out, true);
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
  recomputeEma();
  for (auto& o : m_overlays)
    redrawOverlay(o);
  replotAll();
}

void Dashboard::setGradNormLogScale(bool on) {
  if (m_logBox->isChecked() != on) m_logBox->setChecked(on);
  QCustomPlot* plot = chart(QStringLiteral("grad_norm"));
  plot->yAxis->setScaleType(on ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
  if (on)
    plot->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
  else
    plot->yAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
  refit();
}

void Dashboard::setFollow(bool on) {
  if (m_follow == on) return;
  m_follow = on;
  if (m_followBox->isChecked() != on) m_followBox->setChecked(on);
  if (on) refit();
}

QString Dashboard::tooltipAt(const QString& chartId, double key) const {
  QStringList lines;
  lines << QStringLiteral("%1 %2").arg(axisTitle(m_mode), formatValue(key));
  QCustomPlot* plot = chart(chartId);
  if (!plot) return {};
  for (int i = 0; i < plot->graphCount(); ++i) {
    QCPGraph* g = plot->graph(i);
    if (!g->visible() || g->dataCount() == 0) continue;
    auto data = g->data();
    auto it = data->findBegin(key, false);
    if (it == data->constEnd()) --it;
    if (it != data->constBegin()) {
      auto prev = it - 1;
      if (std::fabs(prev->key - key) < std::fabs(it->key - key)) it = prev;
    }
    lines << QStringLiteral("%1: %2 (at %3)")
                 .arg(g->name(), formatValue(it->value), formatValue(it->key));
  }
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
  QCustomPlot* plot = chart(chartId);
  if (!plot) {
    if (error) *error = tr("no chart \"%1\"").arg(chartId);
    return false;
  }
  plot->replot();
  if (!plot->savePng(path, std::max(plot->width(), 640), std::max(plot->height(), 400))) {
    if (error) *error = tr("%1: cannot write").arg(path);
    return false;
  }
  return true;
}

bool Dashboard::saveChartCsv(const QString& chartId, const QString& path, QString* error) {
  QCustomPlot* plot = chart(chartId);
  if (!plot) {
    if (error) *error = tr("no chart \"%1\"").arg(chartId);
    return false;
  }
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Text)) {
    if (error) *error = tr("%1: cannot write (%2)").arg(path, file.errorString());
    return false;
  }
  QByteArray out = "series," + axisTitle(m_mode).toUtf8().replace(' ', '_') + ",value\n";
  for (int i = 0; i < plot->graphCount(); ++i) {
    QCPGraph* g = plot->graph(i);
    if (g->dataCount() == 0) continue;
    const QByteArray name = g->name().toUtf8().replace(',', ' ');
    for (auto it = g->data()->constBegin(); it != g->data()->constEnd(); ++it) {
      out += name;
      out += ',';
      out += QByteArray::number(it->key, 'g', 10);
      out += ',';
      out += QByteArray::number(it->value, 'g', 10);
      out += '\n';
    }
    if (out.size() > (1 << 22)) {
      file.write(out);
      out.clear();
    }
  }
  file.write(out);
  if (!file.commit()) {
    if (error) *error = tr("%1: cannot write (%2)").arg(path, file.errorString());
    return false;
  }
  return true;
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
  menu.exec(plot->mapToGlobal(pos));
}

void Dashboard::addOverlay(const RunHistory& run) {
  for (const auto& o : m_overlays)
    if (o.run.dir == run.dir) return;
  OverlayData o;
  o.name = run.name;
  o.run = run;
  static const QColor palette[] = {QColor(23, 190, 207), QColor(188, 189, 34),
                                   QColor(227, 119, 194), QColor(127, 127, 127)};
  const QColor color = palette[m_overlays.size() % 4];
  auto make = [&](const QString& chartId, const QString& what, bool markers) {
    QCustomPlot* plot = chart(chartId);
    QCPGraph* g = plot->addGraph();
    g->setName(run.name + QStringLiteral(": ") + what);
    g->setPen(QPen(color, 1.2, Qt::DashLine));
    g->setAdaptiveSampling(true);
    if (markers) g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, color, 5));
    plot->legend->setVisible(true);
    o.graphs.push_back(g);
  };
  make(QStringLiteral("loss"), tr("train (smoothed)"), false);
  make(QStringLiteral("loss"), tr("validation"), true);
  make(QStringLiteral("accuracy"), tr("validation"), true);
  m_overlays.push_back(o);
  redrawOverlay(m_overlays.back());
  refit();
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
  double ema = 0;
  std::int64_t n = 0;
  for (int i = 0; i < r.stepLoss.size(); ++i) {
    if (std::isfinite(r.stepLoss[i])) {
      ema = m_smoothing * ema + (1 - m_smoothing) * r.stepLoss[i];
      ++n;
    }
    const double debias = 1 - std::pow(m_smoothing, double(std::max<std::int64_t>(1, n)));
    smoothed[i] = n ? ema / (debias > 0 ? debias : 1) : r.stepLoss[i];
  }
  o.graphs[0]->setData(stepKeys, smoothed, true);
  o.graphs[1]->setData(epochKeys, r.epochValLoss, true);
  o.graphs[2]->setData(epochKeys, r.epochValAccuracy, true);
}

void Dashboard::clearOverlays() {
  for (auto& o : m_overlays)
    for (auto* g : o.graphs) {
      QCustomPlot* plot = g->parentPlot();
      plot->removeGraph(g);
    }
  m_overlays.clear();
  for (const auto& c : m_charts)
    c.plot->legend->setVisible(c.plot->graphCount() > 1);
  refit();
}

QStringList Dashboard::overlayNames() const {
  QStringList names;
  for (const auto& o : m_overlays)
    names << o.name;
  return names;
}

void Dashboard::applyPalette() {
  const QPalette pal = QApplication::palette();
  const QColor fg = pal.color(QPalette::WindowText);
  const QColor bg = pal.color(QPalette::Base);
  QColor gridColor = fg;
  gridColor.setAlpha(40);
  for (const auto& c : m_charts) {
    c.plot->setBackground(bg);
    for (QCPAxis* axis : {c.plot->xAxis, c.plot->yAxis}) {
      axis->setBasePen(QPen(fg));
      axis->setTickPen(QPen(fg));
      axis->setSubTickPen(QPen(fg));
      axis->setTickLabelColor(fg);
      axis->setLabelColor(fg);
      axis->grid()->setPen(QPen(gridColor, 1, Qt::DotLine));
    }
    c.plot->legend->setBrush(bg);
    c.plot->legend->setTextColor(fg);
    c.plot->legend->setBorderPen(QPen(gridColor));
    if (auto* title = qobject_cast<QCPTextElement*>(c.plot->plotLayout()->element(0, 0)))
      title->setTextColor(fg);
    c.plot->replot(QCustomPlot::rpQueuedReplot);
  }
}

}  // namespace netsmith::ui
