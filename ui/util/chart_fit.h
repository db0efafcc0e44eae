#pragma once

// Charts that stay readable at any size: as many ticks as the axis has room for (a short
// Memory chart at 1280x720 showed overlapping labels), legend names elided in the middle so
// that runs sharing a prefix still read apart, with the full name in the tooltip.
#include <QString>

class QCustomPlot;

namespace netsmith::ui {

/// Before every replot, sets each axis's wanted tick count from its length in pixels (a label
/// every ~40 px up an axis, ~100 px along one), and gives a legend laid out below the plot as
/// many columns as its longest entry leaves room for. Call once, when the chart is made.
void fitTicksToSize(QCustomPlot* plot);

/// `text` cut to at most `maxChars` by an ellipsis in the middle ("fashion_mnist…-153012").
QString elideMiddle(const QString& text, int maxChars);

/// Shows a legend entry's whole name (its plottable's "netsmithFullName" property, else its
/// name) as a tooltip when the pointer rests on it.
void legendTooltips(QCustomPlot* plot);

}  // namespace netsmith::ui
