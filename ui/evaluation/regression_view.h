#pragma once

// The Evaluation page for regression: per target MAE, RMSE and R² (core's figures), and for
// the chosen target the predicted-against-true scatter (with the y = x line), the histogram of
// the residuals (predicted - true) and the samples with the largest errors.
#include <QVector>

#include "evaluation/task_view.h"

class QComboBox;
class QCustomPlot;
class QListWidget;
class QTableWidget;

namespace netsmith::ui {

class RegressionView : public TaskView {
  Q_OBJECT

 public:
  explicit RegressionView(QWidget* parent = nullptr);
  void showResult(const eval::Evaluation& evaluation) override;
  void clearResult() override;
  QDialog* sampleDialog(const QString& checkpoint, const RegistriesPtr& registries,
                        const eval::SampleOutcome& sample,
                        const eval::Evaluation& evaluation) override;

  /// Shows target `index`'s scatter and residuals.
  void selectTarget(int index);
  int currentTarget() const { return m_target; }
  /// The residual histogram's bins: their lower edges, their width and their counts.
  double residualBinStart() const { return m_binStart; }
  double residualBinWidth() const { return m_binWidth; }
  const QVector<double>& residualCounts() const { return m_binCounts; }

  QComboBox* targetChoice() const { return m_targetChoice; }
  QTableWidget* table() const { return m_table; }
  QCustomPlot* scatter() const { return m_scatter; }
  QCustomPlot* residuals() const { return m_residuals; }
  QListWidget* worst() const { return m_worst; }

  static constexpr int kBins = 30;

 private:
  void drawTarget();
  void fillWorst();

  const eval::Evaluation* m_evaluation = nullptr;
  int m_target = 0;
  double m_binStart = 0, m_binWidth = 0;
  QVector<double> m_binCounts;
  QComboBox* m_targetChoice;
  QTableWidget* m_table;
  QCustomPlot* m_scatter;
  QCustomPlot* m_residuals;
  QListWidget* m_worst;
};

}  // namespace netsmith::ui
