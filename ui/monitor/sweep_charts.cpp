#include "monitor/sweep_charts.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QHBoxLayout>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "monitor/cost_plot.h"
#include "monitor/sweep_follower.h"
#include "monitor/sweep_text.h"
#include "util/chart_fit.h"
#include "util/theme_colors.h"

namespace netsmith::ui {

namespace {

/// A setting's value on [0, 1] along its axis (log for log-uniform, the index for choices).
double axisPosition(const experiment::SweepParam& p, const Json& v) {
  using K = experiment::SweepParam::Kind;
  if (p.kind == K::Choice) {
    for (std::size_t i = 0; i < p.values.size(); ++i)
      if (p.values[i] == v)
        return p.values.size() > 1 ? double(i) / double(p.values.size() - 1) : 0.5;
    return std::nan("");
  }
  if (!v.is_number()) return std::nan("");
  const double x = v.get<double>();
  if (p.kind == K::LogUniform)
    return (std::log(x) - std::log(p.low)) / (std::log(p.high) - std::log(p.low));
  return (x - p.low) / (p.high - p.low);
}

QString shortName(const std::string& path) {
  const auto dot = path.rfind('.');
  return QString::fromStdString(dot == std::string::npos ? path : path.substr(dot + 1));
}

/// Low (0) to high (1) objective: blue to orange.
QColor scoreColor(double t) {
  t = std::clamp(std::isnan(t) ? 0.0 : t, 0.0, 1.0);
  return QColor::fromRgbF(0.12 + 0.88 * t, 0.47 - 0.05 * t, 0.71 - 0.66 * t);
}

}  // namespace

SweepCharts::SweepCharts(const SweepFollower* sweep, QWidget* parent)
    : QWidget(parent),
      m_sweep(sweep),
      m_parallel(new QCustomPlot(this)),
      m_scatter(new QCustomPlot(this)),
      m_scatterParam(new QComboBox(this)),
      m_cost(new CostPlot(this)) {
  m_cost->setObjectName(QStringLiteral("sweepCosts"));
  m_cost->setVisible(false);
  m_parallel->setObjectName(QStringLiteral("sweepParallelCoordinates"));
  m_scatter->setObjectName(QStringLiteral("sweepScatter"));
  for (auto* plot : {m_parallel, m_scatter}) {
    plot->setMinimumSize(200, 180);
    followTheme(plot);
    fitTicksToSize(plot);
  }
  m_scatterParam->setObjectName(QStringLiteral("sweepScatterParam"));
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(m_parallel, 3);
  auto* scatterBox = new QWidget(this);
  auto* sl = new QVBoxLayout(scatterBox);
  sl->setContentsMargins(0, 0, 0, 0);
  sl->addWidget(m_scatterParam);
  sl->addWidget(m_scatter, 1);
  layout->addWidget(scatterBox, 2);
  layout->addWidget(m_cost, 2);
  connect(m_scatterParam, &QComboBox::currentIndexChanged, this, [this] { drawScatter(); });
}

void SweepCharts::redraw() {
  listSettings();
  drawParallel();
  drawScatter();
  drawCosts();
}

void SweepCharts::drawCosts() {
  const auto& spec = m_sweep->spec();
  const auto& trials = m_sweep->state().trials;
  const bool measured =
      std::any_of(trials.begin(), trials.end(), [](const auto& t) { return t.latencyMs >= 0; });
  m_cost->setVisible(spec.deployBench || measured);
  if (!m_cost->isVisibleTo(this)) return;
  QVector<CostPlotPoint> points;
  for (const auto& t : trials) {
    CostPlotPoint p;
    p.name = tr("trial %1").arg(t.id);
    p.latencyMs = t.latencyMs;
    p.mebibytes = t.fileBytes >= 0 ? double(t.fileBytes) / (1024.0 * 1024.0) : -1;
    // Only a completed trial's figure stands for its model.
    p.score = t.status == experiment::TrialStatus::Completed ? t.objective() : std::nan("");
    points.push_back(p);
  }
  task::FigureSpec figure;
  figure.name = spec.objective;
  figure.higherIsBetter = spec.maximize;
  figure.percent = objectiveInPercent(spec.objective);
  m_cost->setLimit(spec.maxLatencyMs);
  m_cost->setPoints(std::move(points), figure);
}

void SweepCharts::listSettings() {
  const QString chosen = m_scatterParam->currentText();
  QSignalBlocker block(m_scatterParam);
  m_scatterParam->clear();
  for (const auto& p : m_sweep->spec().params)
    m_scatterParam->addItem(QString::fromStdString(p.path));
  if (!chosen.isEmpty()) m_scatterParam->setCurrentText(chosen);
}

void SweepCharts::drawParallel() {
  const auto& state = m_sweep->state();
  const auto& spec = m_sweep->spec();
  QCustomPlot* plot = m_parallel;
  plot->clearPlottables();
  plot->clearItems();
  const auto& params = spec.params;
  const int axes = int(params.size()) + 1;  // the settings, then the objective
  double lo = INFINITY, hi = -INFINITY;
  for (const auto& t : state.trials) {
    const double v = t.objective();
    if (!std::isnan(v)) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  const auto scaled = [&](double v) {
    return std::isnan(v) ? std::nan("") : hi > lo ? (v - lo) / (hi - lo) : 0.5;
  };
  for (const auto& t : state.trials) {
    auto* curve = new QCPCurve(plot->xAxis, plot->yAxis);
    QVector<double> x, y;
    for (int a = 0; a < int(params.size()); ++a) {
      const auto it = t.params.find(params[std::size_t(a)].path);
      x << a;
      y << (it == t.params.end() ? std::nan("") : axisPosition(params[std::size_t(a)], it->second));
    }
    const double score = scaled(t.objective());
    x << axes - 1;
    y << score;
    curve->setData(x, y);
    QPen pen(t.status == experiment::TrialStatus::Failed ? QColor(150, 150, 150)
                                                         : scoreColor(score));
    pen.setWidthF(t.status == experiment::TrialStatus::Completed ? 2.0 : 1.0);
    if (t.status == experiment::TrialStatus::Stopped || t.status == experiment::TrialStatus::Failed)
      pen.setStyle(Qt::DashLine);
    curve->setPen(pen);
    curve->setName(tr("trial %1").arg(t.id));
  }
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  for (int a = 0; a < int(params.size()); ++a) {
    const auto& p = params[std::size_t(a)];
    QString range = p.kind == experiment::SweepParam::Kind::Choice
                        ? QStringLiteral("%1 choices").arg(p.values.size())
                        : QStringLiteral("%1..%2").arg(p.low, 0, 'g', 3).arg(p.high, 0, 'g', 3);
    ticker->addTick(a, shortName(p.path) + QLatin1Char('\n') + range);
  }
  ticker->addTick(axes - 1,
                  QString::fromStdString(spec.objective) + QLatin1Char('\n') +
                      (hi >= lo ? objectiveText(lo, spec.objective) + QStringLiteral("..") +
                                      objectiveText(hi, spec.objective)
                                : QStringLiteral("-")));
  // The colour key: what blue and orange stand for, and the line styles.
  if (hi >= lo) {
    const auto key = [plot](const QString& text, const QColor& colour, double y) {
      auto* label = new QCPItemText(plot);
      label->position->setType(QCPItemPosition::ptAxisRectRatio);
      label->position->setCoords(0.01, y);
      label->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
      label->setText(text);
      label->setColor(colour);
      label->setClipToAxisRect(false);
    };
    const QString name = QString::fromStdString(spec.objective);
    key(tr("\u25A0 %1 %2 (lowest)").arg(name, objectiveText(lo, spec.objective)), scoreColor(0),
        0.0);
    key(tr("\u25A0 %1 %2 (highest)").arg(name, objectiveText(hi, spec.objective)), scoreColor(1),
        0.07);
    key(tr("thick: completed; dashed: stopped early or failed; grey: failed"), themeColors().text,
        0.14);
  }
  plot->xAxis->setTicker(ticker);
  plot->xAxis->setNumberFormat(QStringLiteral("g"));  // the labels' "1e-05" as written
  plot->xAxis->setRange(-0.3, axes - 1 + 0.3);
  plot->yAxis->setRange(-0.05, 1.05);
  plot->yAxis->setLabel(tr("position in range"));
  plot->xAxis->grid()->setVisible(true);
  plot->replot();
}

void SweepCharts::drawScatter() {
  const auto& state = m_sweep->state();
  const auto& spec = m_sweep->spec();
  QCustomPlot* plot = m_scatter;
  plot->clearPlottables();
  const int index = m_scatterParam->currentIndex();
  if (index < 0 || index >= int(spec.params.size())) {
    plot->replot();
    return;
  }
  const auto& p = spec.params[std::size_t(index)];
  auto* done = plot->addGraph();
  auto* early = plot->addGraph();
  auto* running = plot->addGraph();
  done->setName(tr("completed"));
  early->setName(tr("stopped early"));
  running->setName(tr("running (so far)"));
  for (auto* g : {done, early, running}) {
    g->setLineStyle(QCPGraph::lsNone);
  }
  done->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, QColor(31, 119, 180), 7));
  early->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QColor(255, 127, 14), 7));
  running->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCross, QColor(44, 160, 44), 8));
  const double scale = objectiveInPercent(spec.objective) ? 100.0 : 1.0;
  const bool choice = p.kind == experiment::SweepParam::Kind::Choice;
  for (const auto& t : state.trials) {
    const auto it = t.params.find(p.path);
    const double y = t.objective();
    if (it == t.params.end() || std::isnan(y)) continue;
    const double x =
        choice ? axisPosition(p, it->second) * double(std::max<std::size_t>(1, p.values.size() - 1))
               : it->second.get<double>();
    using S = experiment::TrialStatus;
    (t.status == S::Completed                          ? done
     : t.status == S::Running || t.status == S::Paused ? running
                                                       : early)
        ->addData(x, scale * y);
  }
  const bool log = p.kind == experiment::SweepParam::Kind::LogUniform;
  plot->xAxis->setScaleType(log ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
  if (log) {
    plot->xAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
  } else if (choice) {
    QSharedPointer<QCPAxisTickerText> t(new QCPAxisTickerText);
    for (std::size_t i = 0; i < p.values.size(); ++i)
      t->addTick(double(i), sweepValueText(p.values[i]));
    plot->xAxis->setTicker(t);
  } else {
    plot->xAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
  }
  // Choices are all labelled: slanted when there are many, so that they do not run together.
  plot->xAxis->setTickLabelRotation(choice && p.values.size() > 4 ? 30 : 0);
  plot->xAxis->setLabel(QString::fromStdString(p.path));
  plot->yAxis->setLabel(QString::fromStdString(spec.objective) +
                        (scale != 1.0 ? QStringLiteral(" (%)") : QString()));
  plot->rescaleAxes();
  plot->yAxis->scaleRange(1.1);
  // The x axis spans the range sampled, with a margin so that no point sits on the frame
  // (not what the points alone span: with one trial, or none yet, that is nothing).
  if (choice) {
    plot->xAxis->setRange(-0.5, double(p.values.size()) - 0.5);
  } else if (log && p.low > 0 && p.high > p.low) {
    const double margin = std::pow(p.high / p.low, 0.05);
    plot->xAxis->setRange(p.low / margin, p.high * margin);
  } else if (p.high > p.low) {
    const double margin = 0.05 * (p.high - p.low);
    plot->xAxis->setRange(p.low - margin, p.high + margin);
  }
  if (!m_scatterLegendPlaced) {
    m_scatterLegendPlaced = true;
    legendBelow(plot, 2);
  }
  plot->legend->setVisible(true);
  plot->replot();
}

}  // namespace netsmith::ui
