#pragma once

// The part the Evaluation page's per-class threshold views share (detection's classes,
// multi-label's labels): a table with a row per class, the chosen row's precision-recall curve,
// a threshold slider and a line of counts at the threshold. A view built on it fills the rows,
// gives the chosen row's scored outcomes and writes the counts; the row choice, the slider and
// their resets are kept here.
#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include <QString>
#include <QStringList>

#include "evaluation/task_view.h"

class QCustomPlot;
class QLabel;
class QSlider;
class QSplitter;
class QTableWidget;

namespace netsmith::ui {

class ThresholdCurveView : public TaskView {
  Q_OBJECT

 public:
  void clearResult() override;

  /// The score from which an outcome counts, in [0, 1] (the slider shows it to its 1/1000
  /// steps); the counts follow.
  void setThreshold(double threshold);
  double threshold() const { return m_threshold; }

  QTableWidget* table() const { return m_table; }
  QCustomPlot* curve() const { return m_curve; }
  QSlider* slider() const { return m_slider; }
  QLabel* countsLabel() const { return m_countsLabel; }

 Q_SIGNALS:
  /// The threshold moved (the slider or setThreshold); the counts already follow it.
  void thresholdChanged(double threshold);

 protected:
  /// What tells one such view's parts from another's.
  struct Parts {
    QString tableName;
    QStringList headers;  ///< the table's columns, the class's name first
    QString tableTip;
    QString curveName;
    QString recallLabel;  ///< the curve's x axis
    QString sliderName;
    QString sliderTip;
    QString countsName;
  };
  /// The chosen row's outcomes: (score, whether it is a true positive) for each that counts,
  /// and the positives a full recall finds.
  struct RowScores {
    std::vector<std::pair<float, bool>> scored;
    double positives = 0;
  };

  ThresholdCurveView(const Parts& parts, double threshold, QWidget* parent);

  /// The rows of `evaluation` (one per class, its name first) in the table, the slider at the
  /// threshold, and the first row chosen.
  void showRows(const eval::Evaluation& evaluation, const std::vector<QStringList>& rows);
  /// Chooses row `row` (a class) for the curve and the counts; one out of range is ignored.
  void selectRow(int row);
  int currentRow() const { return m_row; }
  /// The evaluation shown, or nullptr.
  const eval::Evaluation* evaluation() const { return m_evaluation; }
  /// The chosen row's outcomes (rowScores of it).
  const RowScores& scores() const { return m_scores; }
  /// The chosen row's class name.
  QString rowName() const;

  /// The table and the curve panel (the slider labelled `sliderLabel`, the counts line under
  /// it) in a splitter of `orientation`, for the view's layout.
  QSplitter* figuresSplit(Qt::Orientation orientation, const QString& sliderLabel);

  /// Row `row`'s outcomes, for its curve and its counts.
  virtual RowScores rowScores(std::size_t row) const = 0;
  /// The chosen row's counts at the threshold: written to the counts line and marked on the
  /// curve (markPrPoint).
  virtual void showCounts() = 0;
  /// The threshold a row brings when chosen (a tuned one); none keeps the slider's.
  virtual std::optional<double> rowThreshold(std::size_t row) const {
    (void)row;
    return std::nullopt;
  }

 private:
  void moveSlider();
  void updateCounts();

  const eval::Evaluation* m_evaluation = nullptr;
  int m_row = -1;
  double m_threshold;
  RowScores m_scores;
  QTableWidget* m_table;
  QCustomPlot* m_curve;
  QSlider* m_slider;
  QLabel* m_countsLabel;
};

}  // namespace netsmith::ui
