#include "evaluation/calibration_panel.h"

#include <qcustomplot.h>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

#include <cmath>

#include "eval/evaluation.h"
#include "util/chart_fit.h"
#include "util/theme_colors.h"

namespace netsmith::ui {

namespace {

/// Bars of `calibration`'s per-bin accuracy at the bins' centres, `offset` of a bin's width
/// aside and `width` of it wide (empty bins are left out: no bar claims an accuracy of 0).
QCPBars* reliabilityBars(QCustomPlot* plot, const eval::Calibration& calibration,
                         const QString& name, const QColor& color, double offset, double width) {
  auto* bars = new QCPBars(plot->xAxis, plot->yAxis);
  bars->setName(name);
  QColor fill = color;
  fill.setAlpha(170);
  bars->setBrush(fill);
  bars->setPen(QPen(color.darker(130)));
  const double binWidth = 1.0 / eval::kCalibrationBins;
  bars->setWidth(width * binWidth);
  QVector<double> x, y;
  for (const auto& bin : calibration.bins) {
    if (bin.count == 0) continue;
    x << (bin.lower + bin.upper) / 2 + offset * binWidth;
    y << bin.accuracy;
  }
  bars->setData(x, y, true);
  return bars;
}

}  // namespace

CalibrationPanel::CalibrationPanel(QWidget* parent)
    : QWidget(parent),
      m_chart(new QCustomPlot(this)),
      m_figures(new QLabel(this)),
      m_fit(new QPushButton(tr("Fit temperature on validation"), this)) {
  setObjectName(QStringLiteral("calibrationPanel"));
  m_chart->setObjectName(QStringLiteral("reliabilityDiagram"));
  m_chart->setMinimumHeight(200);
  m_chart->xAxis->setLabel(tr("confidence (largest class probability)"));
  m_chart->yAxis->setLabel(tr("accuracy"));
  m_chart->xAxis->setRange(0, 1);
  m_chart->yAxis->setRange(0, 1.02);
  legendBelow(m_chart, 3);
  followTheme(m_chart);
  fitTicksToSize(m_chart);
  m_figures->setObjectName(QStringLiteral("calibrationFigures"));
  m_figures->setWordWrap(true);
  m_figures->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_fit->setObjectName(QStringLiteral("fitTemperature"));
  m_fit->setToolTip(
      tr("Temperature scaling: find the one number T the logits are divided by that makes the "
         "validation split's probabilities most likely, record it beside the checkpoint "
         "(CHECKPOINT.calibration.json, for eval --temperature and export --temperature), and "
         "evaluate again with it. Predictions do not change; their confidence does."));
  m_fit->setEnabled(false);
  connect(m_fit, &QPushButton::clicked, this, &CalibrationPanel::fitRequested);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(m_figures);
  layout->addWidget(m_fit, 0, Qt::AlignLeft);
  layout->addWidget(m_chart, 1);
  clear();
}

void CalibrationPanel::clear() {
  m_shown = false;
  m_chart->clearPlottables();
  m_chart->clearItems();
  m_chart->legend->setVisible(false);
  m_chart->replot();
  m_figures->setText(tr("Evaluate a checkpoint to see how far its scores can be trusted."));
  m_fit->setEnabled(false);
}

void CalibrationPanel::setBusy(bool busy) {
  m_fit->setEnabled(!busy && m_shown);
}

void CalibrationPanel::showCalibration(const eval::Evaluation& e, const eval::Calibration* before,
                                       const QString& recorded) {
  const auto& c = e.calibration;
  m_chart->clearPlottables();
  m_chart->clearItems();
  // The diagonal: a confidence of p right a share p of the time.
  auto* diagonal = m_chart->addGraph();
  diagonal->setName(tr("perfectly calibrated"));
  diagonal->setPen(QPen(themeColors().text, 1, Qt::DashLine));
  diagonal->setData({0.0, 1.0}, {0.0, 1.0});
  const QString now = tr("accuracy at T = %1").arg(e.temperature, 0, 'g', 4);
  if (before) {
    reliabilityBars(m_chart, *before, tr("before (T = 1)"), QColor(150, 150, 150), -0.21, 0.4);
    reliabilityBars(m_chart, c, now, QColor(31, 119, 180), 0.21, 0.4);
  } else {
    reliabilityBars(m_chart, c, now, QColor(31, 119, 180), 0, 0.85);
  }
  m_chart->legend->setVisible(true);
  m_chart->replot();

  QString text = tr("<b>ECE %1</b>, MCE %2 over %3 equal-width confidence bins, on %4 %5 images at "
                    "temperature %6.")
                     .arg(c.ece, 0, 'f', 4)
                     .arg(c.mce, 0, 'f', 4)
                     .arg(eval::kCalibrationBins)
                     .arg(c.samples)
                     .arg(QString::fromStdString(e.split).toHtmlEscaped())
                     .arg(e.temperature, 0, 'g', 4);
  if (e.temperatureFitted) {
    const auto& f = e.temperatureFit;
    text += QStringLiteral("<br>") +
            tr("Temperature %1 fitted on %2 validation images: NLL %3 &rarr; %4, ECE %5 &rarr; %6.")
                .arg(f.temperature, 0, 'f', 4)
                .arg(f.samples)
                .arg(f.nllBefore, 0, 'f', 4)
                .arg(f.nllAfter, 0, 'f', 4)
                .arg(f.eceBefore, 0, 'f', 4)
                .arg(f.eceAfter, 0, 'f', 4);
    if (before)
      text += QStringLiteral(" ") + tr("On %1: ECE %2 &rarr; %3.")
                                        .arg(QString::fromStdString(e.split).toHtmlEscaped())
                                        .arg(before->ece, 0, 'f', 4)
                                        .arg(c.ece, 0, 'f', 4);
    if (!recorded.isEmpty())
      text += QStringLiteral("<br>") + tr("Recorded in %1 (eval and export --temperature read it).")
                                           .arg(recorded.toHtmlEscaped());
  }
  m_figures->setText(text);
  m_shown = true;
  m_fit->setEnabled(true);
}

}  // namespace netsmith::ui
