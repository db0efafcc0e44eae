#pragma once

// The class view's Calibration tab: how far the model's scores can be trusted. The reliability
// diagram (accuracy against confidence over eval/calibration.h's 15 bins, the diagonal where
// they agree), ECE and MCE, and a button that fits temperature scaling on the validation split;
// after a fit the diagram shows the scores before and after it, with the fit's figures. The
// figures are core's (eval::Evaluation::calibration, what `netsmith-cli eval` prints).
#include <QWidget>

class QCustomPlot;
class QLabel;
class QPushButton;

namespace netsmith::eval {
struct Calibration;
struct Evaluation;
}  // namespace netsmith::eval

namespace netsmith::ui {

class CalibrationPanel : public QWidget {
  Q_OBJECT

 public:
  explicit CalibrationPanel(QWidget* parent = nullptr);

  /// Shows the calibration of `evaluation`; `before` (or null) is the same checkpoint and split
  /// evaluated before a fit, drawn beside it. `recorded` names the file the fit was written to.
  void showCalibration(const eval::Evaluation& evaluation, const eval::Calibration* before,
                       const QString& recorded);
  void clear();
  /// While an evaluation runs, the fit button waits.
  void setBusy(bool busy);

  QCustomPlot* chart() const { return m_chart; }
  QPushButton* fitButton() const { return m_fit; }
  QLabel* figures() const { return m_figures; }

 Q_SIGNALS:
  /// The user asked to fit the temperature on the validation split and evaluate with it.
  void fitRequested();

 private:
  QCustomPlot* m_chart;
  QLabel* m_figures;
  QPushButton* m_fit;
  bool m_shown = false;
};

}  // namespace netsmith::ui
