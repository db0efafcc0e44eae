#include "monitor/dashboard_charts.h"

#include <qcustomplot.h>
#include <QSaveFile>
#include <QWidget>

#include <algorithm>
#include <cmath>
#include <limits>

#include "data/csv_table.h"
#include "util/chart_fit.h"
#include "util/theme_colors.h"

namespace netsmith::ui {

namespace {

const QColor kBlue(31, 119, 180), kOrange(255, 127, 14), kGreen(44, 160, 44), kRed(214, 39, 40),
    kPurple(148, 103, 189), kBrown(140, 86, 75), kGrey(127, 127, 127);

QColor faint(QColor c) {
  c.setAlpha(70);
  return c;
}

double mebibytes(std::int64_t bytes) {
  return double(bytes) / (1024.0 * 1024.0);
}

}  // namespace

QString formatChartValue(double v) {
  if (!std::isfinite(v)) return QStringLiteral("-");
  const double a = std::fabs(v);
  if (a != 0 && (a < 1e-3 || a >= 1e6)) return QString::number(v, 'e', 3);
  return QString::number(v, 'g', 5);
}

double LossEma::add(double value) {
  if (std::isfinite(value)) {
    m_value = m_weight * m_value + (1 - m_weight) * value;
    ++m_count;
  }
  const double debias = 1 - std::pow(m_weight, double(std::max<std::int64_t>(1, m_count)));
  return m_count ? m_value / (debias > 0 ? debias : 1) : value;
}

void DashboardSeries::append(double key, double value) {
  graph->data()->add(QCPGraphData(key, value));
  if (!std::isfinite(value)) return;
  if (!hasRange) {
    minValue = maxValue = value;
    minPositive = value > 0 ? value : 0;
    hasRange = true;
  } else {
    minValue = std::min(minValue, value);
    maxValue = std::max(maxValue, value);
  }
  if (value > 0 && (minPositive <= 0 || value < minPositive)) minPositive = value;
}

void DashboardSeries::clear() {
  graph->data()->clear();
  hasRange = false;
}

DashboardChart::DashboardChart(const QString& id, const QString& title, const QString& yLabel,
                               QWidget* parent)
    : m_id(id), m_plot(new QCustomPlot(parent)) {
  const QString family = parent->font().family();
  m_plot->setObjectName(id + QStringLiteral("Chart"));
  m_plot->setMinimumSize(220, 130);
  m_plot->plotLayout()->insertRow(0);
  auto* heading = new QCPTextElement(m_plot, title, QFont(family, 9, QFont::Bold));
  heading->setObjectName(QStringLiteral("title"));
  m_plot->plotLayout()->addElement(0, 0, heading);
  m_plot->yAxis->setLabel(yLabel);
  if (id == QLatin1String("accuracy")) m_plot->yAxis->setRange(0, 1);  // before any figure
  m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  m_plot->axisRect()->setRangeDrag(Qt::Horizontal | Qt::Vertical);
  m_plot->axisRect()->setRangeZoom(Qt::Horizontal | Qt::Vertical);
  m_plot->legend->setFont(QFont(family, 8));
  legendBelow(m_plot, 3);
  // An empty chart says how to fill it, rather than showing bare 0..5 axes.
  m_hint = new QCPItemText(m_plot);
  m_hint->setObjectName(QStringLiteral("emptyHint"));
  m_hint->position->setType(QCPItemPosition::ptAxisRectRatio);
  m_hint->position->setCoords(0.5, 0.5);
  m_hint->setText(QObject::tr("Press F5 to train"));
  m_hint->setFont(QFont(family, 10));
  m_hint->setClipToAxisRect(false);
  m_plot->xAxis->setTickLabels(false);
  m_plot->yAxis->setTickLabels(false);
  followTheme(m_plot);
  fitTicksToSize(m_plot);
  legendTooltips(m_plot);
  m_plot->setNoAntialiasingOnDrag(true);
  m_plot->setPlottingHints(QCP::phFastPolylines | QCP::phCacheLabels);
  m_plot->setContextMenuPolicy(Qt::CustomContextMenu);
  m_plot->setMouseTracking(true);
}

DashboardSeries* DashboardChart::findSeries(const QString& id) {
  for (auto& s : m_series)
    if (s.id == id) return &s;
  return nullptr;
}

void DashboardChart::addBatches(const QVector<run::BatchMetrics>&, const QVector<double>&) {}

void DashboardChart::addEpoch(const run::EpochMetrics&, double) {}

void DashboardChart::clear() {
  for (auto& s : m_series)
    s.clear();
  updateHint();
}

bool DashboardChart::hintShown() const {
  return m_hint->visible();
}

void DashboardChart::updateHint() {
  bool empty = true;
  for (int i = 0; i < m_plot->graphCount() && empty; ++i)
    empty = m_plot->graph(i)->dataCount() == 0;
  m_hint->setVisible(empty);
  m_plot->xAxis->setTickLabels(!empty);
  m_plot->yAxis->setTickLabels(!empty);
}

void DashboardChart::extendYRange(double& lo, double& hi) const {
  const bool log = m_plot->yAxis->scaleType() == QCPAxis::stLogarithmic;
  for (const auto& s : m_series) {
    if (!s.hasRange || !s.graph->visible()) continue;
    lo = std::min(lo, log ? s.minPositive : s.minValue);
    hi = std::max(hi, s.maxValue);
  }
}

QStringList DashboardChart::valuesAt(double key) const {
  QStringList lines;
  for (int i = 0; i < m_plot->graphCount(); ++i) {
    QCPGraph* g = m_plot->graph(i);
    if (!g->visible() || g->dataCount() == 0) continue;
    auto data = g->data();
    auto it = data->findBegin(key, false);
    if (it == data->constEnd()) --it;
    if (it != data->constBegin()) {
      auto prev = it - 1;
      if (std::fabs(prev->key - key) < std::fabs(it->key - key)) it = prev;
    }
    lines << QStringLiteral("%1: %2 (at %3)")
                 .arg(g->name(), formatChartValue(it->value), formatChartValue(it->key));
  }
  return lines;
}

bool DashboardChart::savePng(const QString& path, QString* error) const {
  m_plot->replot();
  if (!m_plot->savePng(path, std::max(m_plot->width(), 640), std::max(m_plot->height(), 400))) {
    if (error) *error = tr("%1: cannot write").arg(path);
    return false;
  }
  return true;
}

bool DashboardChart::saveCsv(const QString& path, const QString& xName, QString* error) const {
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Text)) {
    if (error) *error = tr("%1: cannot write (%2)").arg(path, file.errorString());
    return false;
  }
  QByteArray out = "series," + xName.toUtf8() + ",value\n";
  for (int i = 0; i < m_plot->graphCount(); ++i) {
    QCPGraph* g = m_plot->graph(i);
    if (g->dataCount() == 0) continue;
    // Run and series names can come from someone else's run folders: a cell a spreadsheet
    // would run is written as text.
    const QByteArray name = QByteArray::fromStdString(
        data::csvTextCell(g->name().toUtf8().replace(',', ' ').toStdString()));
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

QCPGraph* DashboardChart::addOverlayGraph(const QString& run, const QString& series,
                                          const QColor& color, bool markers) {
  QCPGraph* g = m_plot->addGraph();
  // Runs of one project share their name up to the time: the legend keeps the time.
  const QString tail = series.isEmpty() ? QString() : QStringLiteral(": ") + series;
  g->setName(elideMiddle(run, 22) + tail);
  g->setProperty("netsmithFullName", run + tail);
  g->setPen(QPen(color, 1.2, Qt::DashLine));
  g->setAdaptiveSampling(true);
  if (markers) g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, color, 5));
  m_plot->legend->setVisible(true);
  return g;
}

DashboardSeries& DashboardChart::addSeries(const QString& id, const QString& name,
                                           const QColor& color, bool perEpoch, bool markers) {
  QCPGraph* g = m_plot->addGraph();
  g->setName(name);
  // Width 1: the raster engine's fast (cosmetic) line path; wider pens go through the stroker,
  // which is ~50x slower on a dense series.
  g->setPen(QPen(color, markers ? 1.5 : 1.0));
  g->setAdaptiveSampling(true);
  if (markers) g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, color, color, 6));
  DashboardSeries s;
  s.id = id;
  s.graph = g;
  s.perEpoch = perEpoch;
  m_series.push_back(s);
  return m_series.back();
}

LossChart::LossChart(double smoothing, QWidget* parent)
    : DashboardChart(QStringLiteral("loss"), tr("Loss"), tr("loss"), parent),
      m_smoothing(smoothing),
      m_ema(smoothing) {
  addSeries(QStringLiteral("train_loss"), tr("train (step)"), faint(kBlue), false, false);
  addSeries(QStringLiteral("train_loss_ema"), tr("train (smoothed)"), kBlue, false, false);
  addSeries(QStringLiteral("val_loss"), tr("validation (epoch)"), kRed, true, true);
}

void LossChart::addBatches(const QVector<run::BatchMetrics>& batches, const QVector<double>& keys) {
  auto& step = series()[kStep];
  auto& smoothed = series()[kSmoothed];
  for (int i = 0; i < batches.size(); ++i) {
    step.append(keys[i], batches[i].loss);
    smoothed.append(keys[i], m_ema.add(batches[i].loss));
  }
}

void LossChart::addEpoch(const run::EpochMetrics& e, double key) {
  series()[kValidation].append(
      key, e.hasValidation ? e.validation.loss : std::numeric_limits<double>::quiet_NaN());
}

void LossChart::clear() {
  DashboardChart::clear();
  m_ema = LossEma(m_smoothing);
}

void LossChart::setSmoothing(double weight) {
  m_smoothing = weight;
  m_ema = LossEma(weight);
  auto raw = series()[kStep].graph->data();
  auto& smoothed = series()[kSmoothed];
  smoothed.hasRange = false;
  QVector<QCPGraphData> out;
  out.reserve(raw->size());
  for (auto it = raw->constBegin(); it != raw->constEnd(); ++it) {
    const double v = m_ema.add(it->value);
    out.push_back(QCPGraphData(it->key, v));
    if (std::isfinite(v)) {
      smoothed.minValue = smoothed.hasRange ? std::min(smoothed.minValue, v) : v;
      smoothed.maxValue = smoothed.hasRange ? std::max(smoothed.maxValue, v) : v;
      smoothed.hasRange = true;
    }
  }
  smoothed.graph->data()->set(out, true);
}

AccuracyChart::AccuracyChart(QWidget* parent)
    : DashboardChart(QStringLiteral("accuracy"), tr("Accuracy"), tr("accuracy"), parent) {
  addSeries(QStringLiteral("train_accuracy"), tr("train"), kBlue, true, true);
  addSeries(QStringLiteral("val_accuracy"), tr("validation"), kRed, true, true);
  // Step by step during an epoch: the running accuracy of the epoch so far, as the loss has.
  addSeries(QStringLiteral("train_accuracy_step"), tr("train (running)"), faint(kBlue), false,
            false);
}

void AccuracyChart::addBatches(const QVector<run::BatchMetrics>& batches,
                               const QVector<double>& keys) {
  auto& running = series()[2];
  for (int i = 0; i < batches.size(); ++i)
    running.append(keys[i], batches[i].epochHeadlineValue);
}

double headlineFigure(const run::EpochMetrics& e, bool validation, QString* name,
                      const QString& preferred) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (std::isfinite(e.trainAccuracy) || (e.trainFigures.empty() && e.validation.figures.empty())) {
    if (name) name->clear();
    return validation ? (e.hasValidation ? e.validation.accuracy : nan) : e.trainAccuracy;
  }
  const std::string wanted = preferred.toStdString();
  std::string figure;
  if (!wanted.empty() && wanted != "loss" &&
      (e.trainFigures.count(wanted) || e.validation.figures.count(wanted)))
    figure = wanted;
  else if (!e.trainFigures.empty())
    figure = e.trainFigures.begin()->first;
  else
    figure = e.validation.figures.begin()->first;
  if (name) *name = QString::fromStdString(figure);
  const auto& figures = validation ? e.validation.figures : e.trainFigures;
  if (validation && !e.hasValidation) return nan;
  const auto it = figures.find(figure);
  return it != figures.end() ? it->second : nan;
}

void AccuracyChart::addEpoch(const run::EpochMetrics& e, double key) {
  QString figure;
  const double train = headlineFigure(e, false, &figure, m_preferred);
  if (figure != m_figure) setTitle(figure);  // another task's figure: the chart says which
  series()[0].append(key, train);
  series()[1].append(key, headlineFigure(e, true, nullptr, m_preferred));
}

void AccuracyChart::clear() {
  DashboardChart::clear();
  setTitle({});
}

void AccuracyChart::setTitle(const QString& figure) {
  m_figure = figure;
  auto* title = qobject_cast<QCPTextElement*>(plot()->plotLayout()->element(0, 0));
  if (title) title->setText(figure.isEmpty() ? tr("Accuracy") : figure);
  plot()->yAxis->setLabel(figure.isEmpty() ? tr("accuracy") : figure);
}

BatchValueChart::BatchValueChart(const QString& id, const QString& title, const QString& yLabel,
                                 const QString& name, const QColor& color, Value value,
                                 QWidget* parent)
    : DashboardChart(id, title, yLabel, parent), m_value(std::move(value)) {
  addSeries(id, name, color, false, false);
}

std::unique_ptr<BatchValueChart> BatchValueChart::learningRate(QWidget* parent) {
  return std::make_unique<BatchValueChart>(
      QStringLiteral("lr"), tr("Learning rate"), tr("learning rate"), tr("learning rate"), kGreen,
      [](const run::BatchMetrics& b) { return b.lr; }, parent);
}

std::unique_ptr<BatchValueChart> BatchValueChart::throughput(QWidget* parent) {
  return std::make_unique<BatchValueChart>(
      QStringLiteral("throughput"), tr("Throughput"), tr("images/s"), tr("images/s"), kOrange,
      [](const run::BatchMetrics& b) { return b.imagesPerSecond; }, parent);
}

void BatchValueChart::addBatches(const QVector<run::BatchMetrics>& batches,
                                 const QVector<double>& keys) {
  for (int i = 0; i < batches.size(); ++i)
    series()[0].append(keys[i], m_value(batches[i]));
}

GradNormChart::GradNormChart(QWidget* parent)
    : DashboardChart(QStringLiteral("grad_norm"), tr("Gradient norm"), tr("L2 norm"), parent) {
  addSeries(QStringLiteral("grad_norm"), tr("gradient norm"), kPurple, false, false);
  m_clipLine = new QCPItemStraightLine(plot());
  m_clipLine->setPen(QPen(kRed, 1, Qt::DashLine));
  m_clipLine->setVisible(false);
}

void GradNormChart::addBatches(const QVector<run::BatchMetrics>& batches,
                               const QVector<double>& keys) {
  for (int i = 0; i < batches.size(); ++i)
    series()[0].append(keys[i], batches[i].gradNorm);
}

void GradNormChart::extendYRange(double& lo, double& hi) const {
  DashboardChart::extendYRange(lo, hi);
  if (m_clip > 0) {
    lo = std::min(lo, m_clip);
    hi = std::max(hi, m_clip);
  }
}

void GradNormChart::setClip(double clip) {
  m_clip = clip;
  m_clipLine->setVisible(m_clip > 0);
  if (m_clip > 0) {
    m_clipLine->point1->setCoords(0, m_clip);
    m_clipLine->point2->setCoords(1, m_clip);
  }
}

void GradNormChart::setLogScale(bool on) {
  plot()->yAxis->setScaleType(on ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
  if (on)
    plot()->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
  else
    plot()->yAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
}

MemoryChart::MemoryChart(QWidget* parent)
    : DashboardChart(QStringLiteral("memory"), tr("Memory"), tr("process RSS (MiB)"), parent) {
  addSeries(QStringLiteral("memory"), tr("process RSS"), kBrown, false, false);
  addSeries(QStringLiteral("memory_reserved"), tr("reserved"), kOrange, false, false);
  addSeries(QStringLiteral("memory_peak"), tr("peak"), kGrey, false, false);
  // Reserved and peak bytes exist on CUDA only: hidden until a batch says so.
  for (int i : {int(kReserved), int(kPeak)}) {
    series()[i].graph->setVisible(false);
    series()[i].graph->removeFromLegend();
  }
}

void MemoryChart::addBatches(const QVector<run::BatchMetrics>& batches,
                             const QVector<double>& keys) {
  if (batches.isEmpty()) return;
  if (batches.front().memory.kind != m_kind) setKind(batches.front().memory.kind);
  const bool cuda = m_kind == "cuda_allocator";
  for (int i = 0; i < batches.size(); ++i) {
    const auto& memory = batches[i].memory;
    series()[kAllocated].append(keys[i], mebibytes(memory.bytes));
    if (cuda) {
      series()[kReserved].append(keys[i], mebibytes(memory.reservedBytes));
      series()[kPeak].append(keys[i], mebibytes(memory.peakBytes));
    }
  }
}

void MemoryChart::setKind(const std::string& kind) {
  m_kind = kind;
  const bool cuda = kind == "cuda_allocator";
  plot()->yAxis->setLabel(cuda ? tr("CUDA memory (MiB)") : tr("process RSS (MiB)"));
  series()[kAllocated].graph->setName(cuda ? tr("allocated") : tr("process RSS"));
  for (int i : {int(kReserved), int(kPeak)}) {
    QCPGraph* g = series()[i].graph;
    g->setVisible(cuda);
    if (cuda)
      g->addToLegend();
    else
      g->removeFromLegend();
  }
  plot()->legend->setVisible(true);
}

}  // namespace netsmith::ui
