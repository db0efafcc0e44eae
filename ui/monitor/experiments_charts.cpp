// The Experiments page's trials table and charts, drawn from the sweep's record (sweep.json).
#include <qcustomplot.h>
#include <QComboBox>
#include <QDateTime>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTableWidget>
#include <algorithm>
#include <cmath>

#include "experiment/samplers.h"
#include "experiment/sweep_schedule.h"
#include "monitor/experiments_page.h"
#include "util/number_item.h"
#include "util/theme_colors.h"

namespace netsmith::ui {

namespace {

QString valueText(const Json& v) {
  if (v.is_number_float()) return QString::number(v.get<double>(), 'g', 4);
  if (v.is_string()) return QString::fromStdString(v.get<std::string>());
  return QString::fromStdString(v.dump());
}

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

/// Accuracies read as percentages here, as on the dashboard and the Evaluation page.
bool inPercent(const std::string& objective) {
  return objective.size() >= 8 && objective.compare(objective.size() - 8, 8, "accuracy") == 0;
}

/// Low (0) to high (1) objective: blue to orange.
QColor scoreColor(double t) {
  t = std::clamp(std::isnan(t) ? 0.0 : t, 0.0, 1.0);
  return QColor::fromRgbF(0.12 + 0.88 * t, 0.47 - 0.05 * t, 0.71 - 0.66 * t);
}

/// A trial's time: its ended segments, and while the sweep runs the segment under way.
double trialSeconds(const experiment::Trial& t, bool live) {
  if (!live || t.status != experiment::TrialStatus::Running || !(t.segmentStarted > 0))
    return t.seconds;
  const double now = double(QDateTime::currentMSecsSinceEpoch()) / 1000.0;
  // A clock set back, or a record from elsewhere, never makes it count down or leap ahead.
  return t.seconds + std::clamp(now - t.segmentStarted, 0.0, 366.0 * 24 * 3600);
}

}  // namespace

bool ExperimentsPage::sweepLive() const {
  return isRunning() || m_live;
}

void ExperimentsPage::showTrialTimes() {
  const bool live = sweepLive();
  const bool sorted = m_table->isSortingEnabled();
  m_table->setSortingEnabled(false);  // rows stay put while their cells change
  for (int row = 0; row < m_table->rowCount(); ++row) {
    const auto* id = m_table->item(row, 0);
    auto* time = dynamic_cast<NumberItem*>(m_table->item(row, 4));
    if (!id || !time) continue;
    const auto k = std::size_t(id->text().toLongLong());
    if (k >= m_state.trials.size() || m_state.trials[k].id != std::int64_t(k)) continue;
    const double seconds = trialSeconds(m_state.trials[k], live);
    time->setText(QStringLiteral("%1 s").arg(std::llround(seconds)));
    time->setData(Qt::UserRole, seconds);
  }
  m_table->setSortingEnabled(sorted);
}

QString ExperimentsPage::objectiveText(double v, const std::string& objective) {
  if (std::isnan(v)) return QStringLiteral("-");
  return inPercent(objective) ? QString::number(100 * v, 'f', 2) + QLatin1Char('%')
                              : QString::number(v, 'f', 4);
}

void ExperimentsPage::fillTable() {
  const auto& spec = m_spec;
  QStringList headers{tr("Trial"), tr("Status"), tr("Epochs"),
                      QString::fromStdString(spec.objective), tr("Time")};
  for (const auto& p : spec.params)
    headers << QString::fromStdString(p.path);
  const int sortColumn = m_table->horizontalHeader()->sortIndicatorSection();
  const auto order = m_table->horizontalHeader()->sortIndicatorOrder();
  m_table->setSortingEnabled(false);
  m_table->clear();
  m_table->setColumnCount(headers.size());
  m_table->setHorizontalHeaderLabels(headers);
  m_table->setRowCount(int(m_state.trials.size()));
  std::int64_t epochs = 0;
  int counts[5] = {0, 0, 0, 0, 0};
  const bool live = sweepLive();
  for (int row = 0; row < int(m_state.trials.size()); ++row) {
    const auto& t = m_state.trials[std::size_t(row)];
    epochs += t.epochsDone;
    ++counts[int(t.status)];
    m_table->setItem(row, 0, new NumberItem(QString::number(t.id), double(t.id)));
    // A trial left "running" by a sweep that no process runs any more was interrupted: the
    // record keeps it running so that running the sweep again resumes it.
    const bool interrupted =
        !live && !m_state.finished && t.status == experiment::TrialStatus::Running;
    auto* status = new QTableWidgetItem(
        interrupted ? tr("interrupted")
                    : QString::fromStdString(experiment::trialStatusName(t.status)));
    status->setToolTip(interrupted ? tr("The sweep stopped before this trial ended; run the sweep "
                                        "again to resume it from its checkpoint")
                                   : QString::fromStdString(t.error.empty() ? t.note : t.error));
    m_table->setItem(row, 1, status);
    m_table->setItem(row, 2,
                     new NumberItem(QStringLiteral("%1/%2").arg(t.epochsDone).arg(t.maxEpochs),
                                    double(t.epochsDone)));
    const double obj = t.objective();
    m_table->setItem(row, 3, new NumberItem(objectiveText(obj, spec.objective), obj));
    const double seconds = trialSeconds(t, live);
    m_table->setItem(row, 4,
                     new NumberItem(QStringLiteral("%1 s").arg(std::llround(seconds)), seconds));
    for (int c = 0; c < int(spec.params.size()); ++c) {
      const auto it = t.params.find(spec.params[std::size_t(c)].path);
      const Json v = it == t.params.end() ? Json() : it->second;
      m_table->setItem(row, 5 + c,
                       new NumberItem(valueText(v), v.is_number() ? v.get<double>() : double(c)));
    }
  }
  m_table->setSortingEnabled(true);
  if (!m_tableSorted) {  // at first the best trial on top; then as the user sorts it
    m_tableSorted = true;
    m_table->sortByColumn(3, spec.maximize ? Qt::DescendingOrder : Qt::AscendingOrder);
  } else {
    m_table->sortByColumn(sortColumn < headers.size() ? sortColumn : 0, order);
  }
  m_table->resizeColumnsToContents();
  const auto* best = experiment::bestTrial(m_state, spec);
  m_applyBest->setEnabled(best != nullptr);
  const bool halted = !live && !m_state.finished;  // its running trials were interrupted
  QString text = tr("%1 of %2 trials: %3 %4, %5 completed, %6 stopped early, %7 failed; "
                    "%8 epochs trained")
                     .arg(m_state.trials.size())
                     .arg(experiment::plannedTrials(spec))
                     .arg(counts[int(experiment::TrialStatus::Running)] +
                          counts[int(experiment::TrialStatus::Paused)])
                     .arg(halted ? tr("interrupted") : tr("running"))
                     .arg(counts[int(experiment::TrialStatus::Completed)])
                     .arg(counts[int(experiment::TrialStatus::Stopped)])
                     .arg(counts[int(experiment::TrialStatus::Failed)])
                     .arg(epochs);
  if (best)
    text += tr(". Best: trial %1, %2 %3")
                .arg(best->id)
                .arg(QString::fromStdString(spec.objective))
                .arg(objectiveText(best->objective(), spec.objective));
  m_status->setText(text);
  const QString chosen = m_scatterParam->currentText();
  QSignalBlocker block(m_scatterParam);
  m_scatterParam->clear();
  for (const auto& p : spec.params)
    m_scatterParam->addItem(QString::fromStdString(p.path));
  if (!chosen.isEmpty()) m_scatterParam->setCurrentText(chosen);
}

void ExperimentsPage::drawParallel() {
  QCustomPlot* plot = m_parallel;
  plot->clearPlottables();
  plot->clearItems();
  const auto& params = m_spec.params;
  const int axes = int(params.size()) + 1;  // the settings, then the objective
  double lo = INFINITY, hi = -INFINITY;
  for (const auto& t : m_state.trials) {
    const double v = t.objective();
    if (!std::isnan(v)) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  const auto scaled = [&](double v) {
    return std::isnan(v) ? std::nan("") : hi > lo ? (v - lo) / (hi - lo) : 0.5;
  };
  for (const auto& t : m_state.trials) {
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
                  QString::fromStdString(m_spec.objective) + QLatin1Char('\n') +
                      (hi >= lo ? objectiveText(lo, m_spec.objective) + QStringLiteral("..") +
                                      objectiveText(hi, m_spec.objective)
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
    const QString name = QString::fromStdString(m_spec.objective);
    key(tr("\u25A0 %1 %2 (lowest)").arg(name, objectiveText(lo, m_spec.objective)), scoreColor(0),
        0.0);
    key(tr("\u25A0 %1 %2 (highest)").arg(name, objectiveText(hi, m_spec.objective)), scoreColor(1),
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

void ExperimentsPage::drawScatter() {
  QCustomPlot* plot = m_scatter;
  plot->clearPlottables();
  const int index = m_scatterParam->currentIndex();
  if (index < 0 || index >= int(m_spec.params.size())) {
    plot->replot();
    return;
  }
  const auto& p = m_spec.params[std::size_t(index)];
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
  const double scale = inPercent(m_spec.objective) ? 100.0 : 1.0;
  const bool choice = p.kind == experiment::SweepParam::Kind::Choice;
  for (const auto& t : m_state.trials) {
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
      t->addTick(double(i), valueText(p.values[i]));
    plot->xAxis->setTicker(t);
  } else {
    plot->xAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
  }
  // Choices are all labelled: slanted when there are many, so that they do not run together.
  plot->xAxis->setTickLabelRotation(choice && p.values.size() > 4 ? 30 : 0);
  plot->xAxis->setLabel(QString::fromStdString(p.path));
  plot->yAxis->setLabel(QString::fromStdString(m_spec.objective) +
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
