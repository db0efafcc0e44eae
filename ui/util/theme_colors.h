#pragma once

// One source of colours for what Qt's palette does not paint by itself: QCustomPlot charts,
// the canvas's nodes, error banners. Everything is derived from the application palette, so
// the light and dark themes (View > Theme) reach every chart and custom-painted widget, live.
#include <QColor>

class QCustomPlot;
class QLabel;
class QWidget;

namespace netsmith::ui {

struct ThemeColors {
  QColor text;        ///< axis labels, tick labels, titles, legend text
  QColor background;  ///< a chart's background (the palette's Base)
  QColor grid;        ///< grid lines and legend borders: text at low alpha
  QColor errorFill;   ///< a red node, a field or banner with a problem
  QColor errorBorder;
  QColor errorText;
  QColor cautionText;  ///< a word of warning that is not an error (amber, readable on Base)
  bool dark = false;
};

/// The colours for the current application palette.
ThemeColors themeColors();

/// Series colour `k` of ten (matplotlib's tab10, readable on light and dark backgrounds),
/// repeating after the tenth: one per class in the charts that colour by class.
QColor seriesColor(int k);

/// Styles a chart for the current palette (background, axes, grid, legend, title) and keeps it
/// styled: it follows every later palette change. Call once, when the chart is made.
void followTheme(QCustomPlot* plot);
/// Styles a chart for the current palette once.
void styleChart(QCustomPlot* plot);
/// Styles every chart under `root` (hidden pages too) for the current palette.
void styleCharts(QWidget* root);
/// Moves the chart's legend from inside the plot area to a row below it, laid out across, so
/// that it never covers data.
void legendBelow(QCustomPlot* plot, int columns = 4);
/// The style sheet of the error banner (a frame named `objectName` holding labels) in the
/// current theme.
QString errorBannerStyle(const QString& objectName);
/// The style sheet of a notice banner (something to read, not an error) in the current theme.
QString noticeBannerStyle(const QString& objectName);
/// Colours `label`'s text as a caution (ThemeColors::cautionText) and keeps it so across
/// theme changes.
void cautionLabel(QLabel* label);
/// The style sheet of a field with a problem, in the current theme.
QString errorFieldStyle();
/// `base` tinted by an op's palette group ("Convolution", "Activation", ...): the canvas's
/// compact blocks and the start page's network pictures, lighter in a light theme, darker in a
/// dark one. Unknown groups keep `base`.
QColor opGroupTint(const QString& group, const QColor& base);

}  // namespace netsmith::ui
