#include "evaluation/threshold_curve_view.h"

#include <qcustomplot.h>
#include <QLabel>
#include <QSignalBlocker>
#include <QSlider>
#include <QSplitter>
#include <QTableWidget>

#include <algorithm>
#include <cmath>

#include "eval/evaluation.h"

namespace netsmith::ui {

ThresholdCurveView::ThresholdCurveView(const Parts& parts, double threshold, QWidget* parent)
    : TaskView(parent),
      m_threshold(threshold),
      m_table(new QTableWidget(0, int(parts.headers.size()), this)),
      m_curve(new QCustomPlot(this)),
      m_slider(new QSlider(Qt::Horizontal, this)),
      m_countsLabel(new QLabel(this)) {
  setUpFigureTable(m_table, parts.tableName, parts.headers);
  m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_table->setSelectionMode(QAbstractItemView::SingleSelection);
  m_table->setToolTip(parts.tableTip);
  connect(m_table, &QTableWidget::currentCellChanged, this,
          [this](int row, int, int, int) { selectRow(row); });
  setUpPrCurve(m_curve, parts.curveName, parts.recallLabel);
  setUpThresholdSlider(m_slider, parts.sliderName, parts.sliderTip);
  connect(m_slider, &QSlider::valueChanged, this, [this](int value) {
    m_threshold = double(value) / kThresholdSteps;
    updateCounts();
    Q_EMIT thresholdChanged(m_threshold);
  });
  m_countsLabel->setObjectName(parts.countsName);
  m_countsLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
}

QSplitter* ThresholdCurveView::figuresSplit(Qt::Orientation orientation,
                                            const QString& sliderLabel) {
  auto* split = new QSplitter(orientation, this);
  split->addWidget(m_table);
  split->addWidget(curvePanel(m_curve, sliderLabel, m_slider, m_countsLabel));
  return split;
}

void ThresholdCurveView::clearResult() {
  m_evaluation = nullptr;
  m_row = -1;
  m_scores = {};
  m_table->setRowCount(0);
  m_curve->clearGraphs();
  m_curve->replot();
  m_countsLabel->clear();
}

void ThresholdCurveView::showRows(const eval::Evaluation& evaluation,
                                  const std::vector<QStringList>& rows) {
  m_evaluation = &evaluation;
  m_table->setRowCount(int(rows.size()));
  for (std::size_t k = 0; k < rows.size(); ++k)
    setFigureRow(m_table, int(k), rows[k]);
  moveSlider();
  if (!rows.empty()) m_table->setCurrentCell(0, 0);  // selectRow(0) through currentCellChanged
}

void ThresholdCurveView::selectRow(int row) {
  if (!m_evaluation || row < 0 || row >= m_table->rowCount()) return;
  m_row = row;
  if (m_table->currentRow() != row) m_table->setCurrentCell(row, 0);
  m_scores = rowScores(std::size_t(row));
  drawPrCurve(m_curve, m_scores.scored, m_scores.positives, rowName());
  // A row's own threshold is set exactly (a tuned one is a score, not a slider step).
  if (const auto own = rowThreshold(std::size_t(row)))
    setThreshold(*own);
  else
    updateCounts();
}

QString ThresholdCurveView::rowName() const {
  return QString::fromStdString(m_evaluation->classes[std::size_t(m_row)]);
}

void ThresholdCurveView::setThreshold(double threshold) {
  m_threshold = std::clamp(threshold, 0.0, 1.0);
  moveSlider();
  updateCounts();
  Q_EMIT thresholdChanged(m_threshold);
}

void ThresholdCurveView::moveSlider() {
  const QSignalBlocker block(m_slider);
  m_slider->setValue(int(std::lround(m_threshold * kThresholdSteps)));
}

void ThresholdCurveView::updateCounts() {
  if (m_evaluation && m_row >= 0) showCounts();
}

}  // namespace netsmith::ui
