#include "util/chart_fit.h"

#include <qcustomplot.h>

#include <QToolTip>
#include <algorithm>

namespace netsmith::ui {

namespace {
constexpr const char* kFullName = "netsmithFullName";
}

void fitTicksToSize(QCustomPlot* plot) {
  QObject::connect(plot, &QCustomPlot::beforeReplot, plot, [plot] {
    // A legend laid out below the plot (legendBelow): as many columns as its longest entry
    // leaves room for, so that no name is cut.
    if (QCPLegend* legend = plot->legend;
        legend && legend->visible() && legend->layout() != plot->axisRect()->insetLayout()) {
      // Only what is drawn is named: a live series without points yet leaves room to the rest.
      for (int i = 0; i < plot->graphCount(); ++i) {
        QCPGraph* g = plot->graph(i);
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
