#include "util/chart_fit.h"

#include <qcustomplot.h>

#include <QPointer>
#include <QToolTip>
#include <algorithm>

namespace netsmith::ui {

namespace {
constexpr const char* kFullName = "netsmithFullName";
constexpr const char* kLegendMode = "netsmithLegendMode";
/// Set by legendBelow: the layout cell below the chart that holds the legend when it shows.
constexpr const char* kLegendRow = "netsmithLegendRow";
/// The legend was folded away here (not by the chart's owner).
constexpr const char* kLegendFolded = "netsmithLegendFolded";
constexpr const char* kNoLegend = "netsmithNoLegend";

/// Puts the legend in its row below the chart, or folds it into the axis rect's inset layout,
/// hidden, where it takes no room.
void placeLegend(QCustomPlot* plot, QCPLayoutGrid* row, bool below) {
  QCPLegend* legend = plot->legend;
  QCPLayoutInset* inset = plot->axisRect()->insetLayout();
  const bool isBelow = legend->layout() == row;
  if (below && !isBelow) {
    inset->take(legend);
    if (row->hasElement(0, 0)) row->remove(row->element(0, 0));  // the stand-in
    row->addElement(0, 0, legend);
    legend->setVisible(true);
    plot->setProperty(kLegendFolded, false);
  } else if (!below && isBelow) {
    row->take(legend);
    // A stand-in of no size that bounds nothing: an empty grid's largest size is its margins,
    // and the chart's column would shrink to the axis rect's least width.
    row->addElement(0, 0, new QCPLayoutElement(plot));
    inset->addElement(legend, Qt::AlignRight | Qt::AlignTop);
    legend->setVisible(false);
    plot->setProperty(kLegendFolded, true);
  }
}

}  // namespace

void setLegendMode(QCustomPlot* plot, LegendMode mode) {
  plot->setProperty(kLegendMode, int(mode));
}

LegendMode legendMode(const QCustomPlot* plot) {
  const QVariant v = plot->property(kLegendMode);
  return v.isValid() ? LegendMode(v.toInt()) : LegendMode::Auto;
}

bool legendShown(const QCustomPlot* plot) {
  return plot->legend && plot->legend->visible() && !plot->property(kLegendFolded).toBool();
}

void keepOutOfLegend(QObject* plottable) {
  plottable->setProperty(kNoLegend, true);
}

void fitTicksToSize(QCustomPlot* plot) {
  QObject::connect(plot, &QCustomPlot::beforeReplot, plot, [plot] {
    // A legend laid out below the plot (legendBelow): as many columns as its longest entry
    // leaves room for, so that no name is cut.
    auto* row = qobject_cast<QCPLayoutGrid*>(plot->property(kLegendRow).value<QObject*>());
    QCPLegend* legend = plot->legend;
    // Folded here, it is still wanted by its owner (who shows it for two curves or more).
    const bool wanted =
        legend &&
        (legend->visible() || (plot->property(kLegendFolded).toBool() && plot->graphCount() > 1));
    if (row && wanted) {
      // Only what is drawn is named: a live series without points yet leaves room to the rest.
      for (int i = 0; i < plot->graphCount(); ++i) {
        QCPGraph* g = plot->graph(i);
        if (g->property(kNoLegend).toBool()) continue;
        const bool listed = legend->hasItemWithPlottable(g);
        if (g->dataCount() == 0 && listed) g->removeFromLegend(legend);
        if (g->dataCount() > 0 && !listed) g->addToLegend(legend);
      }
      const QFontMetrics metrics(legend->font());
      int widest = 0;
      for (int i = 0; i < legend->itemCount(); ++i)
        if (auto* item = qobject_cast<QCPPlottableLegendItem*>(legend->item(i)))
          widest = std::max(widest, metrics.horizontalAdvance(item->plottable()->name()));
      const int entry = widest + legend->iconSize().width() + legend->iconTextPadding() +
                        legend->columnSpacing() + 12;
      const int columns = std::max(1, (plot->width() - 16) / std::max(1, entry));
      if (legend->wrap() != columns) {
        legend->setWrap(columns);
        legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, true);
      }
      const int rows = (legend->itemCount() + columns - 1) / columns;
      const int tall = rows * (metrics.height() + 2) + 4;
      const LegendMode mode = legendMode(plot);
      // Auto: below the plot when it names two curves or more and takes a third of the chart
      // at most (one curve is named by the chart's title).
      placeLegend(
          plot, row,
          mode == LegendMode::Shown ||
              (mode == LegendMode::Auto && tall * 3 <= plot->height() && legend->itemCount() > 1));
    } else if (row && legend->layout() != row && legendMode(plot) != LegendMode::Hidden) {
      placeLegend(plot, row, true);  // folded, then no longer wanted: back in place, hidden
      legend->setVisible(false);
    }
    for (QCPAxisRect* rect : plot->axisRects())
      for (QCPAxis* axis : rect->axes()) {
        const bool vertical = axis->orientation() == Qt::Vertical;
        const int pixels = vertical ? rect->height() : rect->width();
        if (pixels <= 0) continue;
        const int wanted = std::clamp(pixels / (vertical ? 40 : 100), 2, vertical ? 8 : 10);
        if (axis->ticker()->tickCount() != wanted) axis->ticker()->setTickCount(wanted);
      }
  });
}

void emptyChartText(QCustomPlot* plot, const QString& text) {
  auto* hint = new QCPItemText(plot);
  hint->setObjectName(QStringLiteral("emptyHint"));
  hint->position->setType(QCPItemPosition::ptAxisRectRatio);
  hint->position->setCoords(0.5, 0.5);
  hint->setText(text);
  hint->setClipToAxisRect(false);
  hint->setSelectable(false);
  // Held weakly: an owner that clears the chart's items takes the line with them.
  QObject::connect(plot, &QCustomPlot::beforeReplot, plot, [plot, hint = QPointer(hint)] {
    if (!hint) return;
    bool empty = true;
    for (int i = 0; i < plot->plottableCount() && empty; ++i)
      if (const auto* data = plot->plottable(i)->interface1D()) empty = data->dataCount() == 0;
    if (empty == hint->visible()) return;
    hint->setVisible(empty);
    for (QCPAxis* axis : plot->axisRect()->axes())
      axis->setTickLabels(!empty);
  });
  // Shown from the start (the first replot may come late), hidden by the first points.
  hint->setVisible(true);
  for (QCPAxis* axis : plot->axisRect()->axes())
    axis->setTickLabels(false);
}

QString elideMiddle(const QString& text, int maxChars) {
  if (text.size() <= maxChars || maxChars < 5) return text;
  const int tail = (maxChars - 1) / 2;
  const int head = maxChars - 1 - tail;
  return text.left(head) + QChar(0x2026) + text.right(tail);
}

void legendTooltips(QCustomPlot* plot) {
  QObject::connect(plot, &QCustomPlot::mouseMove, plot, [plot](QMouseEvent* event) {
    const QPointF at = event->position();
    for (int i = 0; i < plot->legend->itemCount(); ++i) {
      auto* item = qobject_cast<QCPPlottableLegendItem*>(plot->legend->item(i));
      if (!item || !item->outerRect().contains(at.toPoint())) continue;
      const QVariant full = item->plottable()->property(kFullName);
      QToolTip::showText(event->globalPosition().toPoint(),
                         full.isValid() ? full.toString() : item->plottable()->name(), plot);
      return;
    }
  });
}

}  // namespace netsmith::ui
