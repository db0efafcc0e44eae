#pragma once

// Charts that stay readable at any size: as many ticks as the axis has room for (a short
// Memory chart at 1280x720 showed overlapping labels), legend names elided in the middle so
// that runs sharing a prefix still read apart, with the full name in the tooltip; a legend below
// a chart that would take over a third of its height (six runs overlaid on a 1280x720 screen
// left the loss curve 30 px) is folded away until asked for.
#include <QString>

class QCustomPlot;

namespace netsmith::ui {

/// Before every replot, sets each axis's wanted tick count from its length in pixels (a label
/// every ~40 px up an axis, ~100 px along one), and gives a legend laid out below the plot as
/// many columns as its longest entry leaves room for. Call once, when the chart is made.
void fitTicksToSize(QCustomPlot* plot);

/// How a legend laid out below a chart (legendBelow) is shown.
enum class LegendMode {
  Auto,    ///< shown while it takes at most a third of the chart's height
  Shown,   ///< always (the user asked for it)
  Hidden,  ///< never (the user folded it)
};
void setLegendMode(QCustomPlot* plot, LegendMode mode);
LegendMode legendMode(const QCustomPlot* plot);
/// Whether the chart's legend is drawn, as the last replot laid it out.
bool legendShown(const QCustomPlot* plot);
/// A plottable kept out of the legend whatever its points (a selection drawn over the rest).
void keepOutOfLegend(QObject* plottable);

/// A line in the middle of `plot` while none of its plottables has a point ("Evaluate a
/// checkpoint to see..."), its axes' numbers hidden meanwhile: an empty chart says what fills
/// it instead of showing bare 0..5 axes. Call once, when the chart is made.
void emptyChartText(QCustomPlot* plot, const QString& text);

/// `text` cut to at most `maxChars` by an ellipsis in the middle ("fashion_mnist…-153012").
QString elideMiddle(const QString& text, int maxChars);

/// Shows a legend entry's whole name (its plottable's "netsmithFullName" property, else its
/// name) as a tooltip when the pointer rests on it.
void legendTooltips(QCustomPlot* plot);

}  // namespace netsmith::ui
