// The Data page's view of targets that are not one class per sample: what a scan's
// data::TargetStats hold, drawn (multi-label label counts and co-occurrence, regression target
// histograms, segmentation class pixel shares, detection boxes per class and their sizes).
#include <qcustomplot.h>
#include <QHeaderView>
#include <QTableWidget>

#include <algorithm>
#include <cmath>

#include "forms/data_page.h"
#include "util/theme_colors.h"

namespace netsmith::ui {

namespace {

/// Bars of `values` per class name, the names along the axis.
void classBars(QCustomPlot* plot, const QStringList& names, const QVector<double>& values,
               const QString& series, const QString& axis) {
  QVector<double> ticks;
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  double top = 1e-9;
  for (int c = 0; c < names.size(); ++c) {
    ticks << c;
    ticker->addTick(c, names[c]);
    top = std::max(top, values.value(c));
  }
  auto* bars = new QCPBars(plot->xAxis, plot->yAxis);
  bars->setName(series);
  bars->setBrush(seriesColor(0));
  bars->setPen(Qt::NoPen);
  bars->setWidth(0.6);
  bars->setData(ticks, values, true);
  plot->xAxis->setTicker(ticker);
  plot->xAxis->setTickLabelRotation(names.size() > 6 ? 40 : 0);
  plot->xAxis->setRange(-0.6, names.size() - 0.4);
  plot->xAxis->setLabel(QString());
  plot->yAxis->setRange(0, top * 1.1);
  plot->yAxis->setLabel(axis);
}

}  // namespace

QString drawTargetChart(QCustomPlot* plot, const DataScan& s) {
  const auto& t = s.targets;
  plot->clearPlottables();
  plot->clearGraphs();
  QString title;
  if (t.kind == data::TargetKind::MultiHot) {
    QVector<double> values;
    for (auto v : t.positives)
      values << double(v);
    classBars(plot, s.classes, values, QObject::tr("train"), QObject::tr("images with the label"));
    title = QObject::tr("Label frequencies");
  } else if (t.kind == data::TargetKind::ClassMask) {
    // Shares of the counted pixels, as the figures' pixel_share (ignored ones left out).
    double all = 0;
    for (auto v : t.classPixels)
      all += double(v);
    QVector<double> shares;
    for (auto v : t.classPixels)
      shares << (all > 0 ? 100.0 * double(v) / all : 0.0);
    classBars(plot, s.classes, shares, QObject::tr("train"),
              QObject::tr("share of the pixels not ignored (%)"));
    title = QObject::tr("Class pixels");
  } else if (t.kind == data::TargetKind::Boxes) {
    QVector<double> values;
    for (auto v : t.boxesPerClass)
      values << double(v);
    classBars(plot, s.classes, values, QObject::tr("train"), QObject::tr("boxes"));
    title = QObject::tr("Boxes per class");
  } else if (t.kind == data::TargetKind::RealVector) {
    // One histogram per target (30 bins over the values of all targets), drawn as steps.
    constexpr int kBins = 30;
    double lo = 0, hi = 0;
    bool any = false;
    for (const auto& values : t.values)
      for (float v : values) {
        if (!std::isfinite(v)) continue;
        lo = any ? std::min(lo, double(v)) : double(v);
        hi = any ? std::max(hi, double(v)) : double(v);
        any = true;
      }
    if (hi <= lo) hi = lo + 1;
    const double width = (hi - lo) / kBins;
    double top = 1;
    for (std::size_t k = 0; k < t.values.size(); ++k) {
      QVector<double> counts(kBins, 0.0), centres;
      for (float v : t.values[k])
        if (std::isfinite(v)) counts[std::clamp(int((double(v) - lo) / width), 0, kBins - 1)] += 1;
      for (int b = 0; b < kBins; ++b) {
        centres << lo + (b + 0.5) * width;
        top = std::max(top, counts[b]);
      }
      auto* graph = plot->addGraph();
      graph->setName(s.targetNames.value(int(k), QObject::tr("target %1").arg(k)));
      graph->setLineStyle(QCPGraph::lsStepCenter);
      QColor colour = seriesColor(int(k));
      graph->setPen(QPen(colour, 2));
      colour.setAlpha(50);
      graph->setBrush(colour);
      graph->setData(centres, counts, true);
    }
    plot->xAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
    plot->xAxis->setTickLabelRotation(0);
    plot->xAxis->setRange(lo - width, hi + width);
    plot->xAxis->setLabel(QObject::tr("value"));
    plot->yAxis->setRange(0, top * 1.1);
    plot->yAxis->setLabel(QObject::tr("training images"));
    title = QObject::tr("Target histogram");
  }
  plot->legend->setVisible(true);
  plot->replot();
  return title;
}

void fillBoxSizes(QTableWidget* table, const DataScan& s) {
  const auto& t = s.targets;
  const auto sizes = data::boxSizeSummaries(t, std::size_t(s.classes.size()));
  const auto spread = [](const std::array<double, 3>& v, int decimals) {
    return QStringLiteral("%1 / %2 / %3")
        .arg(v[0], 0, 'f', decimals)
        .arg(v[1], 0, 'f', decimals)
        .arg(v[2], 0, 'f', decimals);
  };
  table->setColumnCount(5);
  table->setHorizontalHeaderLabels(
      {QObject::tr("Class"), QObject::tr("Boxes"), QObject::tr("Width min / median / max"),
       QObject::tr("Height min / median / max"), QObject::tr("Aspect (w / h)")});
  table->verticalHeader()->hide();
  table->setRowCount(int(sizes.size()) + 1);
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    const auto& z = sizes[k];
    const QStringList cells = {s.classes.value(int(k)), QString::number(z.boxes),
                               z.boxes ? spread(z.width, 0) : QStringLiteral("-"),
                               z.boxes ? spread(z.height, 0) : QStringLiteral("-"),
                               z.boxes ? spread(z.aspect, 2) : QStringLiteral("-")};
    for (int c = 0; c < cells.size(); ++c) {
      auto* item = new QTableWidgetItem(cells[c]);
      if (c > 0) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
      table->setItem(int(k), c, item);
    }
  }
  // The last row: training images by their number of boxes (the first: images without any).
  QStringList perImage;
  for (std::size_t n = 0; n < t.boxesPerImage.size(); ++n)
    if (t.boxesPerImage[n] > 0)
      perImage << QObject::tr("%1 with %2").arg(t.boxesPerImage[n]).arg(n);
  const int last = int(sizes.size());
  table->setItem(
      last, 0,
      new QTableWidgetItem(
          QObject::tr("Training images by boxes: %1").arg(perImage.join(QStringLiteral(", ")))));
  table->setSpan(last, 0, 1, 5);
  table->setToolTip(QObject::tr("Box sizes in their images' pixels, per class (training split)"));
  table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
}

void fillCooccurrence(QTableWidget* table, const DataScan& s) {
  const auto& t = s.targets;
  table->clear();
  table->clearSpans();
  if (t.kind == data::TargetKind::Boxes) {
    fillBoxSizes(table, s);
    return;
  }
  table->verticalHeader()->setVisible(true);
  // The scan counts the co-occurrence of the most frequent labels only (a table of thousands
  // of labels is unreadable and slow to fill); the tooltip says so.
  const int all = t.kind == data::TargetKind::MultiHot ? int(t.positives.size()) : 0;
  const int k = t.kind == data::TargetKind::MultiHot ? int(t.cooccurrence.size()) : 0;
  table->setRowCount(k);
  table->setColumnCount(k);
  if (k == 0) return;
  QStringList names;
  for (const auto a : t.cooccurrenceLabels)
    names << s.classes.value(int(a));
  table->setHorizontalHeaderLabels(names);
  table->setVerticalHeaderLabels(names);
  if (all > k) table->setToolTip(QObject::tr("The %1 most frequent of %2 labels").arg(k).arg(all));
  for (int r = 0; r < k; ++r) {
    const auto a = std::size_t(r);
    const double positives = double(t.cooccurrence[a][a]);
    for (int c = 0; c < k; ++c) {
      const auto b = std::size_t(c);
      const auto count = t.cooccurrence[a][b];
      auto* item = new QTableWidgetItem(QString::number(count));
      item->setTextAlignment(Qt::AlignCenter);
      // Heat by the share of the row label's images that also hold the column's.
      QColor heat = a == b ? QColor(44, 160, 44) : QColor(31, 119, 180);
      heat.setAlphaF(float(std::min(1.0, 0.05 + (positives > 0 ? double(count) / positives : 0))));
      item->setBackground(count ? heat : QColor(Qt::transparent));
      item->setToolTip(
          QObject::tr("%1 training images hold both %2 and %3").arg(count).arg(names[r], names[c]));
      table->setItem(r, c, item);
    }
  }
}

}  // namespace netsmith::ui
