#include "monitor/cost_plot.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>
#include <cmath>

#include "experiment/pareto.h"
#include "util/chart_fit.h"
#include "util/theme_colors.h"

namespace netsmith::ui {

CostPlot::CostPlot(QWidget* parent)
    : QWidget(parent),
      m_axis(new QComboBox(this)),
      m_plot(new QCustomPlot(this)),
      m_note(new QLabel(this)) {
  m_axis->setObjectName(QStringLiteral("costPlotAxis"));
  m_axis->addItem(tr("Batch-1 latency (ms)"), QStringLiteral("latency"));
  m_axis->addItem(tr("File size (MiB)"), QStringLiteral("size"));
  m_axis->setToolTip(
      tr("What each model costs deployed (measured by train --deploy-bench or "
         "bench RUN_DIR)"));
  m_plot->setObjectName(QStringLiteral("costPlot"));
  m_plot->setMinimumSize(200, 160);
  followTheme(m_plot);
  fitTicksToSize(m_plot);
  m_note->setObjectName(QStringLiteral("costPlotNote"));
  m_note->setWordWrap(true);
  auto* top = new QHBoxLayout;
  top->addWidget(new QLabel(tr("Figure against"), this));
  top->addWidget(m_axis);
  top->addStretch(1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(top);
  layout->addWidget(m_plot, 1);
  layout->addWidget(m_note);
  connect(m_axis, &QComboBox::currentIndexChanged, this, [this] { draw(); });
  legendBelow(m_plot, 2);
}

QString CostPlot::costAxis() const {
  return m_axis->currentData().toString();
}

void CostPlot::setPoints(QVector<CostPlotPoint> points, const task::FigureSpec& figure) {
  m_points = std::move(points);
  m_figure = figure;
  draw();
}

void CostPlot::draw() {
  m_plot->clearPlottables();
  m_plot->clearItems();
  m_front.clear();
  const bool latency = costAxis() == QLatin1String("latency");
  const double scale = m_figure.percent ? 100.0 : 1.0;
  std::vector<experiment::CostPoint> measured;
  QVector<int> index;  // measured -> m_points
  for (int i = 0; i < m_points.size(); ++i) {
    const auto& p = m_points[i];
    const double cost = latency ? p.latencyMs : p.mebibytes;
    if (cost < 0 || std::isnan(p.score)) continue;
    measured.push_back({cost, p.score});
    index.push_back(i);
  }
  auto* models = m_plot->addGraph();
  models->setName(tr("models"));
  models->setLineStyle(QCPGraph::lsNone);
  models->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, QColor(31, 119, 180), 7));
  for (std::size_t k = 0; k < measured.size(); ++k) {
    models->addData(measured[k].cost, scale * measured[k].score);
    const auto& p = m_points[index[int(k)]];
    auto* label = new QCPItemText(m_plot);
    label->position->setCoords(measured[k].cost, scale * measured[k].score);
    label->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
    label->setText(QStringLiteral(" ") + p.name);
    label->setColor(p.color.isValid() ? p.color : themeColors().text);
    label->setFont(QFont(font().family(), font().pointSize() - 1));
  }
  // The front: the points no other beats on both, joined by rising cost.
  const auto front = experiment::paretoFront(measured, m_figure.higherIsBetter);
  auto* line = new QCPCurve(m_plot->xAxis, m_plot->yAxis);
  line->setName(tr("Pareto front"));
  line->setPen(QPen(QColor(214, 39, 40), 2));
  line->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(QColor(214, 39, 40), 2),
                                        QBrush(Qt::NoBrush), 12));
  for (std::size_t k : front) {
    line->addData(measured[k].cost, scale * measured[k].score);
    m_front << m_points[index[int(k)]].name;
  }
  m_plot->xAxis->setLabel(latency ? tr("batch-1 latency, ms") : tr("file size, MiB"));
  m_plot->yAxis->setLabel(
      QString::fromStdString(m_figure.name) +
      (m_figure.percent ? QStringLiteral(" (%)") : QString()) +
      (m_figure.higherIsBetter ? tr(", higher is better") : tr(", lower is better")));
  m_plot->rescaleAxes();
  m_plot->xAxis->scaleRange(1.25);
  m_plot->yAxis->scaleRange(1.25);
  if (m_plot->xAxis->range().lower < 0) m_plot->xAxis->setRangeLower(0);
  // The limit drawn where it lies near the points; far to their right, said in words (the axis
  // stretched to it would press the points together at its left).
  const bool limitFar =
      latency && m_limitMs > 0 && !measured.empty() && m_limitMs > 2 * m_plot->xAxis->range().upper;
  if (limitFar) {
    auto* text = new QCPItemText(m_plot);
    text->position->setType(QCPItemPosition::ptAxisRectRatio);
    text->position->setCoords(0.98, 0.02);
    text->setPositionAlignment(Qt::AlignRight | Qt::AlignTop);
    text->setText(tr("latency limit %1 ms: all within").arg(m_limitMs, 0, 'g', 3));
    text->setColor(themeColors().text);
  } else if (latency && m_limitMs > 0) {
    auto* limit = new QCPItemStraightLine(m_plot);
    limit->point1->setCoords(m_limitMs, 0);
    limit->point2->setCoords(m_limitMs, 1);
    limit->setPen(QPen(themeColors().text, 1, Qt::DashLine));
    auto* text = new QCPItemText(m_plot);
    text->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
    text->position->setCoords(m_limitMs, 0.02);
    text->setPositionAlignment(Qt::AlignRight | Qt::AlignTop);
    text->setText(tr("limit %1 ms ").arg(m_limitMs, 0, 'g', 3));
    text->setColor(themeColors().text);
    m_plot->xAxis->setRangeUpper(std::max(m_plot->xAxis->range().upper, 1.1 * m_limitMs));
  }
  m_plot->legend->setVisible(true);
  m_plot->replot();
  const int unmeasured = m_points.size() - int(measured.size());
  m_note->setText(
      measured.empty()
          ? tr("No model measured yet: train with --deploy-bench, run netsmith-cli bench RUN_DIR, "
               "or give the sweep a latency limit.")
          : tr("%n model(s) on the Pareto front", nullptr, int(front.size())) +
                (unmeasured ? tr("; %n not measured", nullptr, unmeasured) : QString()) +
                QStringLiteral("."));
}

}  // namespace netsmith::ui
