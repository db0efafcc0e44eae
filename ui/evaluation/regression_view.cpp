#include "evaluation/regression_view.h"

#include <qcustomplot.h>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "eval/evaluation.h"
#include "util/chart_fit.h"
#include "util/image_convert.h"
#include "util/theme_colors.h"

namespace netsmith::ui {

namespace {

constexpr int kRegressionThumb = 96;

QString targetFigure(double v) {
  return std::isfinite(v) ? QString::number(v, 'g', 5) : QStringLiteral("-");
}

QString targetName(const eval::Evaluation& e, std::size_t k) {
  return k < e.targets.size() ? QString::fromStdString(e.targets[k])
                              : QStringLiteral("target %1").arg(k);
}

}  // namespace

RegressionView::RegressionView(QWidget* parent)
    : TaskView(parent),
      m_targetChoice(new QComboBox(this)),
      m_table(new QTableWidget(0, 5, this)),
      m_scatter(new QCustomPlot(this)),
      m_residuals(new QCustomPlot(this)),
      m_worst(new QListWidget(this)) {
  setObjectName(QStringLiteral("regressionView"));
  m_targetChoice->setObjectName(QStringLiteral("regressionTarget"));
  connect(m_targetChoice, qOverload<int>(&QComboBox::currentIndexChanged), this,
          &RegressionView::selectTarget);
  setUpFigureTable(m_table, QStringLiteral("targetTable"),
                   {tr("Target"), tr("MAE"), tr("RMSE"), tr("R²"), tr("MAE / std")});
  m_table->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
  m_scatter->setObjectName(QStringLiteral("regressionScatter"));
  m_scatter->xAxis->setLabel(tr("true"));
  m_scatter->yAxis->setLabel(tr("predicted"));
  m_residuals->setObjectName(QStringLiteral("residualHistogram"));
  m_residuals->xAxis->setLabel(tr("residual (predicted - true)"));
  m_residuals->yAxis->setLabel(tr("samples"));
  for (auto* plot : {m_scatter, m_residuals}) {
    plot->setMinimumHeight(200);
    followTheme(plot);
    fitTicksToSize(plot);
  }
  setUpGallery(m_worst, QStringLiteral("worstSamples"), QSize(kRegressionThumb, kRegressionThumb),
               QSize(kRegressionThumb + 60, kRegressionThumb + 76));

  auto* choice = new QHBoxLayout;
  choice->addWidget(new QLabel(tr("Target"), this));
  choice->addWidget(m_targetChoice);
  choice->addStretch(1);
  auto* charts = new QSplitter(Qt::Horizontal, this);
  charts->addWidget(m_scatter);
  charts->addWidget(m_residuals);
  auto* worstBox = new QWidget(this);
  auto* wl = new QVBoxLayout(worstBox);
  wl->setContentsMargins(0, 0, 0, 0);
  wl->addWidget(new QLabel(tr("<b>Largest errors first</b> (mean absolute error over the "
                              "targets)"),
                           worstBox));
  wl->addWidget(m_worst, 1);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(charts);
  split->addWidget(worstBox);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(m_table);
  layout->addLayout(choice);
  layout->addWidget(split, 1);
}

void RegressionView::clearResult() {
  m_evaluation = nullptr;
  m_target = 0;
  m_binCounts.clear();
  m_binStart = m_binWidth = 0;
  m_table->setRowCount(0);
  {
    const QSignalBlocker block(m_targetChoice);
    m_targetChoice->clear();
  }
  for (auto* plot : {m_scatter, m_residuals}) {
    plot->clearPlottables();
    plot->replot();
  }
  m_worst->clear();
}

void RegressionView::showResult(const eval::Evaluation& e) {
  clearResult();
  m_evaluation = &e;
  const auto& per = e.metrics.perClass;
  std::size_t targets = e.targets.size();
  if (!e.samples.empty()) targets = std::max(targets, e.samples.front().view.truth.size());
  m_table->setRowCount(int(targets));
  {
    const QSignalBlocker block(m_targetChoice);
    for (std::size_t k = 0; k < targets; ++k) {
      const QStringList cells = {targetName(e, k), targetFigure(perClassFigure(per, "mae", k)),
                                 targetFigure(perClassFigure(per, "rmse", k)),
                                 targetFigure(perClassFigure(per, "r2", k)),
                                 targetFigure(perClassFigure(per, "nmae", k))};
      setFigureRow(m_table, int(k), cells);
      m_targetChoice->addItem(targetName(e, k));
    }
  }
  m_targetChoice->setEnabled(targets > 1);
  // As tall as its rows (at most 4 before it scrolls): the charts get the rest.
  const int rows = std::min<int>(int(targets), 4);
  m_table->setFixedHeight(m_table->horizontalHeader()->height() + 2 * m_table->frameWidth() +
                          rows * m_table->verticalHeader()->defaultSectionSize() + 2);
  fillWorst();
  selectTarget(0);
}

QDialog* RegressionView::sampleDialog(const QString&, const RegistriesPtr&,
                                      const eval::SampleOutcome& s, const eval::Evaluation& e) {
  QStringList rows;
  for (std::size_t k = 0; k < s.view.truth.size() && k < s.view.output.size(); ++k)
    rows << tr("%1: true %2, predicted %3")
                .arg(targetName(e, k).toHtmlEscaped())
                .arg(double(s.view.truth[k]), 0, 'g', 5)
                .arg(double(s.view.output[k]), 0, 'g', 5);
  return pictureDialog(s.position, largePicture(s.picture),
                       tr("<b>#%1</b>: mean absolute error %2<br>%3")
                           .arg(s.position)
                           .arg(s.loss, 0, 'g', 5)
                           .arg(rows.join(QStringLiteral("<br>"))));
}

void RegressionView::selectTarget(int index) {
  if (!m_evaluation || index < 0 || index >= m_targetChoice->count()) return;
  m_target = index;
  if (m_targetChoice->currentIndex() != index) {
    const QSignalBlocker block(m_targetChoice);
    m_targetChoice->setCurrentIndex(index);
  }
  drawTarget();
}

void RegressionView::drawTarget() {
  const auto k = std::size_t(m_target);
  QVector<double> truth, predicted, residual;
  for (const auto& s : m_evaluation->samples) {
    if (k >= s.view.output.size() || k >= s.view.truth.size()) continue;
    const double t = s.view.truth[k], p = s.view.output[k];
    if (!std::isfinite(t) || !std::isfinite(p)) continue;
    truth << t;
    predicted << p;
    residual << p - t;
  }
  // Scatter with the y = x line over the range both share.
  m_scatter->clearPlottables();
  if (!truth.isEmpty()) {
    const auto [tMin, tMax] = std::minmax_element(truth.begin(), truth.end());
    const auto [pMin, pMax] = std::minmax_element(predicted.begin(), predicted.end());
    double lo = std::min(*tMin, *pMin), hi = std::max(*tMax, *pMax);
    if (hi <= lo) hi = lo + 1;
    const double pad = 0.04 * (hi - lo);
    auto* diagonal = m_scatter->addGraph();
    diagonal->setName(tr("predicted = true"));
    diagonal->setPen(QPen(QColor(127, 127, 127), 1, Qt::DashLine));
    diagonal->setData({lo, hi}, {lo, hi});
    auto* points = m_scatter->addGraph();
    points->setName(tr("samples"));
    points->setLineStyle(QCPGraph::lsNone);
    QColor dot(31, 119, 180);
    dot.setAlpha(truth.size() > 2000 ? 60 : 140);
    points->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, dot, 4));
    points->setData(truth, predicted);  // not sorted: the order does not matter without lines
    m_scatter->xAxis->setRange(lo - pad, hi + pad);
    m_scatter->yAxis->setRange(lo - pad, hi + pad);
  }
  m_scatter->replot();

  // Residuals in kBins equal bins over their range.
  m_residuals->clearPlottables();
  m_binCounts.fill(0, kBins);
  if (!residual.isEmpty()) {
    const auto [rMin, rMax] = std::minmax_element(residual.begin(), residual.end());
    m_binStart = *rMin;
    m_binWidth = *rMax > *rMin ? (*rMax - *rMin) / kBins : 1.0;
    for (double r : residual)
      m_binCounts[std::clamp(int((r - m_binStart) / m_binWidth), 0, kBins - 1)] += 1;
    QVector<double> centres;
    for (int b = 0; b < kBins; ++b)
      centres << m_binStart + (b + 0.5) * m_binWidth;
    auto* bars = new QCPBars(m_residuals->xAxis, m_residuals->yAxis);
    bars->setName(tr("residuals"));
    bars->setWidth(m_binWidth);
    bars->setBrush(QColor(255, 127, 14, 180));
    bars->setPen(Qt::NoPen);
    bars->setData(centres, m_binCounts, true);
    m_residuals->xAxis->setRange(m_binStart - m_binWidth, m_binStart + (kBins + 1) * m_binWidth);
    m_residuals->yAxis->setRange(
        0, *std::max_element(m_binCounts.begin(), m_binCounts.end()) * 1.1 + 1);
  }
  m_residuals->replot();
}

void RegressionView::fillWorst() {
  m_worst->clear();
  std::vector<const eval::SampleOutcome*> order;
  for (const auto& s : m_evaluation->samples)
    order.push_back(&s);
  std::stable_sort(order.begin(), order.end(),
                   [](const auto* a, const auto* b) { return a->loss > b->loss; });
  const auto values = [](const std::vector<float>& v) {
    QStringList out;
    for (float x : v)
      out << QString::number(double(x), 'g', 4);
    return out.join(QStringLiteral(", "));
  };
  const std::size_t shown = std::min<std::size_t>(order.size(), 500);
  for (std::size_t i = 0; i < shown; ++i) {
    const auto& s = *order[i];
    const QImage picture = toQImage(s.picture);
    auto* item =
        new QListWidgetItem(QIcon(QPixmap::fromImage(picture.scaled(
                                kRegressionThumb, kRegressionThumb, Qt::KeepAspectRatio,
                                picture.width() < kRegressionThumb ? Qt::FastTransformation
                                                                   : Qt::SmoothTransformation))),
                            tr("#%1 error %2\ntrue %3\npredicted %4")
                                .arg(s.position)
                                .arg(s.loss, 0, 'g', 4)
                                .arg(values(s.view.truth), values(s.view.output)),
                            m_worst);
    item->setData(Qt::UserRole, qlonglong(s.position));
  }
}

}  // namespace netsmith::ui
