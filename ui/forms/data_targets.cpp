// The Data page's view of what a task counts of its training targets (data::TargetSummary):
// its chart (bars per class, or one histogram per target) and its table (a co-occurrence
// matrix, box sizes per class). Drawn as the summary says, whatever the task.
#include <qcustomplot.h>
#include <QHeaderView>
#include <QTableWidget>

#include <algorithm>

#include "forms/data_page.h"
#include "util/theme_colors.h"

namespace netsmith::ui {

namespace {

QString text(const std::string& s) {
  return QString::fromStdString(s);
}

/// Bars of each series per name, the names along the axis.
void drawBars(QCustomPlot* plot, const data::SummaryChart& chart) {
  QVector<double> ticks;
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  const int names = int(chart.names.size());
  for (int c = 0; c < names; ++c) {
    ticks << c;
    ticker->addTick(c, text(chart.names[std::size_t(c)]));
  }
  double top = 1e-9;
  auto* group = chart.series.size() > 1 ? new QCPBarsGroup(plot) : nullptr;
  for (std::size_t k = 0; k < chart.series.size(); ++k) {
    const auto& series = chart.series[k];
    QVector<double> values(ticks.size(), 0.0);
    for (int c = 0; c < names && std::size_t(c) < series.y.size(); ++c) {
      values[c] = series.y[std::size_t(c)];
      top = std::max(top, values[c]);
    }
    auto* bars = new QCPBars(plot->xAxis, plot->yAxis);
    bars->setName(text(series.name));
    bars->setBrush(seriesColor(int(k)));
    bars->setPen(Qt::NoPen);
    bars->setWidth(group ? 0.8 / double(chart.series.size()) : 0.6);
    if (group) bars->setBarsGroup(group);
    bars->setData(ticks, values, true);
  }
  plot->xAxis->setTicker(ticker);
  plot->xAxis->setTickLabelRotation(names > 6 ? 40 : 0);
  plot->xAxis->setRange(-0.6, names - 0.4);
  plot->yAxis->setRange(0, top * 1.1);
}

/// One histogram per series, drawn as steps over its bin centres.
void drawHistograms(QCustomPlot* plot, const data::SummaryChart& chart) {
  double lo = 0, hi = 0, top = 1, width = 1;
  bool any = false;
  for (std::size_t k = 0; k < chart.series.size(); ++k) {
    const auto& series = chart.series[k];
    QVector<double> x(series.x.begin(), series.x.end()), y(series.y.begin(), series.y.end());
    for (const double v : series.x) {
      lo = any ? std::min(lo, v) : v;
      hi = any ? std::max(hi, v) : v;
      any = true;
    }
    if (series.x.size() > 1) width = series.x[1] - series.x[0];
    for (const double v : series.y)
      top = std::max(top, v);
    auto* graph = plot->addGraph();
    graph->setName(text(series.name));
    graph->setLineStyle(QCPGraph::lsStepCenter);
    QColor colour = seriesColor(int(k));
    graph->setPen(QPen(colour, 2));
    colour.setAlpha(50);
    graph->setBrush(colour);
    graph->setData(x, y, true);
  }
  plot->xAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
  plot->xAxis->setTickLabelRotation(0);
  plot->xAxis->setRange(lo - width, hi + width);
  plot->yAxis->setRange(0, top * 1.1);
}

}  // namespace

void drawSummaryChart(QCustomPlot* plot, const data::SummaryChart& chart) {
  plot->clearPlottables();
  plot->clearGraphs();
  if (chart.names.empty())
    drawHistograms(plot, chart);
  else
    drawBars(plot, chart);
  plot->xAxis->setLabel(text(chart.xLabel));
  plot->yAxis->setLabel(text(chart.yLabel));
  plot->legend->setVisible(true);
  plot->replot();
}

void fillSummaryTable(QTableWidget* table, const data::SummaryTable& summary) {
  table->clear();
  table->clearSpans();
  // A matrix names its rows in the header; other tables in their first column.
  const int skip = summary.rowHeader ? 1 : 0;
  const int columns = int(summary.columns.size()) - skip;
  const int rows = int(summary.rows.size());
  table->setColumnCount(std::max(columns, 0));
  table->setRowCount(rows + (summary.footer.empty() ? 0 : 1));
  QStringList header;
  for (int c = skip; c < int(summary.columns.size()); ++c)
    header << text(summary.columns[std::size_t(c)]);
  table->setHorizontalHeaderLabels(header);
  table->verticalHeader()->setVisible(summary.rowHeader);
  QStringList rowNames;
  for (int r = 0; r < rows; ++r) {
    const auto& row = summary.rows[std::size_t(r)];
    if (summary.rowHeader) rowNames << (row.empty() ? QString() : text(row.front()));
    for (int c = skip; c < int(row.size()); ++c) {
      auto* item = new QTableWidgetItem(text(row[std::size_t(c)]));
      const auto cell = std::size_t(c - 1);  // heat and tips leave out column 0
      if (c > 0) {
        item->setTextAlignment(summary.rowHeader ? Qt::AlignCenter
                                                 : Qt::AlignRight | Qt::AlignVCenter);
        if (std::size_t(r) < summary.heat.size() && cell < summary.heat[std::size_t(r)].size()) {
          const double heat = summary.heat[std::size_t(r)][cell];
          QColor shade = cell == std::size_t(r) ? QColor(44, 160, 44) : QColor(31, 119, 180);
          shade.setAlphaF(float(std::clamp(heat, 0.0, 1.0)));
          item->setBackground(heat > 0 ? shade : QColor(Qt::transparent));
        }
        if (std::size_t(r) < summary.cellTips.size() &&
            cell < summary.cellTips[std::size_t(r)].size())
          item->setToolTip(text(summary.cellTips[std::size_t(r)][cell]));
      }
      table->setItem(r, c - skip, item);
    }
  }
  if (summary.rowHeader) table->setVerticalHeaderLabels(rowNames);
  if (!summary.footer.empty()) {
    table->setItem(rows, 0, new QTableWidgetItem(text(summary.footer)));
    if (columns > 1) table->setSpan(rows, 0, 1, columns);
  }
  table->setToolTip(text(summary.tooltip));
  table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
}

}  // namespace netsmith::ui
