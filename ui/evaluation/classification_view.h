#pragma once

// The Evaluation page for classification: the confusion matrix as a heatmap (counts and row
// percentages; a click lists that cell's images, highest loss first, with true label,
// prediction and top-3 probabilities), per-class precision / recall / F1 / AP as a table and
// bars, each class's precision-recall curve, the misclassified gallery, the scores'
// calibration (evaluation/calibration_panel.h) with temperature scaling, and the samples'
// features laid out in 2-D (evaluation/embedding_panel.h). A click on a sample opens it with
// its Grad-CAM maps (evaluation/sample_dialog.h).
#include <optional>

#include "eval/evaluation.h"
#include "evaluation/task_view.h"

class QSplitter;
class QTabWidget;

namespace netsmith::ui {

class CalibrationPanel;
class EmbeddingPanel;

class ClassificationView : public TaskView {
  Q_OBJECT

 public:
  explicit ClassificationView(QWidget* parent = nullptr);
  void showResult(const eval::Evaluation& evaluation) override;
  void clearResult() override;
  QDialog* sampleDialog(const QString& checkpoint, const RegistriesPtr& registries,
                        const eval::SampleOutcome& sample,
                        const eval::Evaluation& evaluation) override;
  QString summaryLine(const eval::Evaluation& evaluation, const QString& headline) const override;
  void setBusy(bool busy) override;

  /// Lists the samples of cell (true `row`, predicted `column`), highest loss first.
  void showCell(int row, int column);

  QTableWidget* confusion() const { return m_confusion; }
  QTableWidget* perClass() const { return m_perClass; }
  QCustomPlot* prCurves() const { return m_prCurves; }
  QListWidget* cellList() const { return m_cell; }
  QListWidget* misclassified() const { return m_misclassified; }
  CalibrationPanel* calibration() const { return m_calibration; }
  EmbeddingPanel* embedding() const { return m_embedding; }

 protected:
  /// Class names in the matrix's header are elided again for the columns' new width (stretched
  /// sections do not always report their resize).
  void resizeEvent(QResizeEvent* event) override;
  /// The galleries' thumbnails (top-3 bars and their names) are drawn again in a new theme.
  void changeEvent(QEvent* event) override;

 private:
  void showMatrix(const QStringList& names);
  void showPerClass(const QStringList& names);
  /// The Calibration tab for the result, with the checkpoint's scores before a fit beside it.
  void showCalibration();
  void fillMisclassified();
  /// The matrix's column headers, elided to their columns' widths (whole in their tooltips).
  void elideClassNames();
  /// Sizes the matrix for `classes` columns beside its tabs (scrolling past half the view).
  void fitMatrix(int classes);
  void fillGallery(QListWidget* list, const std::vector<const eval::SampleOutcome*>& samples);
  QString className(std::int64_t c) const;

  const eval::Evaluation* m_result = nullptr;
  QTableWidget* m_confusion;
  QTableWidget* m_perClass;
  QCustomPlot* m_bars;
  QCustomPlot* m_prCurves;  ///< each class's precision-recall curve
  QLabel* m_cellTitle;
  QTabWidget* m_details = nullptr;  ///< per class, the clicked cell, the misclassified
  QSplitter* m_split = nullptr;
  QWidget* m_matrixBox = nullptr;
  QLabel* m_matrixHint = nullptr;  ///< shown while the matrix scrolls sideways
  CalibrationPanel* m_calibration;
  EmbeddingPanel* m_embedding;
  /// The calibration at temperature 1 of the checkpoint and split in m_uncalibratedKey: what a
  /// fit is shown against.
  std::optional<eval::Calibration> m_uncalibrated;
  QString m_uncalibratedKey;
  QListWidget* m_cell;
  QListWidget* m_misclassified;
  QComboBox* m_order;
  int m_cellRow = -1;  ///< the matrix cell whose samples the Cell tab lists (-1: none)
  int m_cellColumn = -1;
};

}  // namespace netsmith::ui
