#include "util/theme_colors.h"

#include <utility>

#include <qcustomplot.h>
#include <QApplication>
#include <QEvent>
#include <QLabel>
#include <QPalette>

namespace netsmith::ui {

QColor seriesColor(int k) {
  static const QColor colors[] = {{31, 119, 180},  {255, 127, 14}, {44, 160, 44},   {214, 39, 40},
                                  {148, 103, 189}, {140, 86, 75},  {227, 119, 194}, {127, 127, 127},
                                  {188, 189, 34},  {23, 190, 207}};
  return colors[((k % 10) + 10) % 10];
}

namespace {

/// Re-styles its chart when the application or widget palette changes.
class ThemeFollower : public QObject {
 public:
  explicit ThemeFollower(QCustomPlot* plot) : QObject(plot), m_plot(plot) {
    plot->installEventFilter(this);
  }
  bool eventFilter(QObject* watched, QEvent* event) override {
    if (watched == m_plot && (event->type() == QEvent::PaletteChange ||
                              event->type() == QEvent::ApplicationPaletteChange))
      styleChart(m_plot);
    return false;
  }

 private:
  QCustomPlot* m_plot;
};

/// Keeps a caution label's colour that of the theme.
class CautionFollower : public QObject {
 public:
  explicit CautionFollower(QLabel* label) : QObject(label), m_label(label) {
    restyle();
    label->installEventFilter(this);
  }
  bool eventFilter(QObject* watched, QEvent* event) override {
    if (watched == m_label && (event->type() == QEvent::PaletteChange ||
                               event->type() == QEvent::ApplicationPaletteChange))
      restyle();
    return false;
  }

 private:
  void restyle() {
    // The label's own text colour over the application's palette (a style sheet would keep
    // later palettes from reaching it); only a change sets it, since that comes back here.
    const QColor caution = themeColors().cautionText;
    QPalette p = m_label->palette();
    if (p.color(QPalette::WindowText) == caution) return;
    p.setColor(QPalette::WindowText, caution);
    m_label->setPalette(p);
  }
  QLabel* m_label;
};

}  // namespace

void cautionLabel(QLabel* label) {
  new CautionFollower(label);
}

ThemeColors themeColors() {
  const QPalette pal = QApplication::palette();
  ThemeColors c;
  c.text = pal.color(QPalette::WindowText);
  c.background = pal.color(QPalette::Base);
  c.dark = c.background.lightness() < 128;
  c.grid = c.text;
  c.grid.setAlpha(c.dark ? 60 : 40);
  if (c.dark) {
    c.errorFill = QColor(92, 34, 34);
    c.errorBorder = QColor(235, 90, 90);
    c.errorText = QColor(255, 214, 214);
    c.cautionText = QColor(240, 190, 90);
  } else {
    c.errorFill = QColor(253, 226, 226);
    c.errorBorder = QColor(200, 30, 30);
    c.errorText = QColor(120, 0, 0);
    c.cautionText = QColor(138, 90, 0);
  }
  return c;
}

void styleChart(QCustomPlot* plot) {
  const ThemeColors c = themeColors();
  plot->setBackground(c.background);
  for (QCPAxisRect* rect : plot->axisRects()) {
    rect->setBackground(c.background);
    for (QCPAxis* axis : rect->axes()) {
      axis->setBasePen(QPen(c.text));
      axis->setTickPen(QPen(c.text));
      axis->setSubTickPen(QPen(c.text));
      axis->setTickLabelColor(c.text);
      axis->setLabelColor(c.text);
      axis->grid()->setPen(QPen(c.grid, 1, Qt::DotLine));
      axis->grid()->setZeroLinePen(QPen(c.grid, 1, Qt::SolidLine));
    }
  }
  for (int i = 0; i < plot->itemCount(); ++i)
    if (auto* text = qobject_cast<QCPItemText*>(plot->item(i))) text->setColor(c.text);
  plot->legend->setBrush(c.background);
  plot->legend->setTextColor(c.text);
  plot->legend->setBorderPen(QPen(c.grid));
  for (int i = 0; i < plot->plotLayout()->elementCount(); ++i)
    if (auto* title = qobject_cast<QCPTextElement*>(plot->plotLayout()->elementAt(i)))
      title->setTextColor(c.text);
  plot->replot(QCustomPlot::rpQueuedReplot);
}

void styleCharts(QWidget* root) {
  for (auto* plot : root->findChildren<QCustomPlot*>())
    styleChart(plot);
}

void followTheme(QCustomPlot* plot) {
  styleChart(plot);
  new ThemeFollower(plot);
}

void legendBelow(QCustomPlot* plot, int columns) {
  QCPLayoutGrid* main = plot->plotLayout();
  if (plot->legend->layout() != plot->axisRect()->insetLayout()) return;  // moved already
  plot->axisRect()->insetLayout()->take(plot->legend);
  auto* row = new QCPLayoutGrid;
  const int at = main->rowCount();
  main->addElement(at, 0, row);
  row->setMargins(QMargins(4, 0, 4, 2));
  row->addElement(0, 0, plot->legend);
  plot->setProperty("netsmithLegendRow", QVariant::fromValue<QObject*>(row));  // chart_fit.cpp
  plot->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
  plot->legend->setWrap(columns);
  plot->legend->setBorderPen(Qt::NoPen);
  plot->legend->setBrush(Qt::NoBrush);
  plot->legend->setRowSpacing(0);
  plot->legend->setColumnSpacing(8);
  main->setRowStretchFactor(at, 0.001);
  main->simplify();
}

QString errorBannerStyle(const QString& objectName) {
  const ThemeColors c = themeColors();
  return QStringLiteral(
             "#%1 { background: %2; border: 1px solid %3; border-radius: 3px; }"
             "#%1 QLabel { color: %4; }")
      .arg(objectName, c.errorFill.name(), c.errorBorder.name(), c.errorText.name());
}

QString noticeBannerStyle(const QString& objectName) {
  const QPalette pal = QApplication::palette();
  return QStringLiteral(
             "#%1 { background: %2; border: 1px solid %3; border-radius: 3px; }"
             "#%1 QLabel { color: %4; }")
      .arg(objectName, pal.color(QPalette::AlternateBase).name(),
           pal.color(QPalette::Highlight).name(), pal.color(QPalette::WindowText).name());
}

QString errorFieldStyle() {
  const ThemeColors c = themeColors();
  return QStringLiteral("background: %1; color: %2;").arg(c.errorFill.name(), c.errorText.name());
}

QColor opGroupTint(const QString& group, const QColor& base) {
  static const std::pair<const char*, int> hues[] = {
      {"Convolution", 210}, {"Normalisation", 120},  {"Activation", 30},
      {"Pooling", 280},     {"Linear", 0},           {"Merge", 180},
      {"Reshape", 55},      {"Regularisation", 320}, {"Resize", 250}};
  for (const auto& [name, hue] : hues)
    if (group == QLatin1String(name)) {
      const QColor tint = QColor::fromHsl(hue, 140, base.lightness() < 128 ? 70 : 200);
      return QColor((base.red() + 2 * tint.red()) / 3, (base.green() + 2 * tint.green()) / 3,
                    (base.blue() + 2 * tint.blue()) / 3);
    }
  return base;
}

}  // namespace netsmith::ui
