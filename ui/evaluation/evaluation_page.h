#pragma once

// The Evaluation page: a checkpoint (the current run's best, or one chosen) evaluated on a
// split by core (the numbers `netsmith-cli eval` prints), on a background thread with progress:
// the confusion matrix as a heatmap (counts and row percentages; a click lists that cell's
// images, highest loss first, with true label, prediction and top-3 probabilities), per-class
// precision / recall / F1 as a table and bars, accuracy and top-k, the misclassified gallery,
// the scores' calibration (evaluation/calibration_panel.h) with temperature scaling, and the
// samples' features laid out in 2-D (evaluation/embedding_panel.h).
// A task without the class view shows its own view instead (evaluation/task_view.h).
#include <QString>
#include <QWidget>
#include <memory>
#include <optional>

#include "train/evaluation.h"

class QEvent;
class QResizeEvent;
class QComboBox;
class QDialog;
class QCustomPlot;
class QLabel;
class QListWidget;
class QProgressBar;
class QPushButton;
class QSplitter;
class QStackedWidget;
class QTabWidget;
class QTableWidget;

namespace netsmith::ui {

class BackgroundJob;
class CalibrationPanel;
class EmbeddingPanel;
class SampleDialog;
class TaskView;

class EvaluationPage : public QWidget {
  Q_OBJECT

 public:
  /// `registries`: the program's (evaluation and Grad-CAM read checkpoints with them).
  explicit EvaluationPage(RegistriesPtr registries, QWidget* parent = nullptr);

  void setCheckpoint(const QString& path);
  QString checkpoint() const { return m_checkpoint; }
  /// Evaluates the checkpoint on the chosen split in the background; evaluated() follows.
  void evaluate();
  /// Fits temperature scaling on the checkpoint's validation split, records it beside the
  /// checkpoint (train::writeCalibrationFile) and evaluates the chosen split with it; the
  /// Calibration tab then shows the scores before and after.
  void fitTemperature();
  /// After a run: `path` on `split` ("test": what the run's test figure measured; without a
  /// test split, "validation": the split the run held out).
  void evaluateAfterRun(const QString& path, const QString& split);
  /// "test accuracy 85.27% on 10000 images (checkpoint best)", as the CLI prints it; "" when
  /// nothing has been evaluated.
  QString summaryText() const;
  void cancel();
  bool isRunning() const;
  const train::Evaluation& result() const { return *m_result; }
  QString errorText() const { return m_error; }

  QTableWidget* confusion() const { return m_confusion; }
  QTableWidget* perClass() const { return m_perClass; }
  QCustomPlot* prCurves() const { return m_prCurves; }
  QListWidget* cellList() const { return m_cell; }
  QListWidget* misclassified() const { return m_misclassified; }
  CalibrationPanel* calibration() const { return m_calibration; }
  EmbeddingPanel* embedding() const { return m_embedding; }
  /// The view of the evaluated task when it has no class view (null before one is shown).
  TaskView* taskView() const { return m_taskView; }
  /// Lists the samples of cell (true `row`, predicted `column`), highest loss first.
  void showCell(int row, int column);
  /// Opens sample `position` of the evaluated split large, with its Grad-CAM maps (a click on
  /// a thumbnail does this). Returns the dialog, or nullptr when the sample was not kept.
  /// A task view's sample opens as its view makes it (openSampleDialog); openSample returns it
  /// when it is a SampleDialog (multi-label's, with a map per label).
  SampleDialog* openSample(qint64 position);
  QDialog* openSampleDialog(qint64 position);

 Q_SIGNALS:
  void evaluated();

 protected:
  /// Class names in the matrix's header are elided again for the columns' new width (stretched
  /// sections do not always report their resize).
  void resizeEvent(QResizeEvent* event) override;
  /// The galleries' thumbnails (top-3 bars and their names) are drawn again in a new theme.
  void changeEvent(QEvent* event) override;

 private:
  void startEvaluation(bool fitTemperature);
  void evaluationDone(train::Evaluation result, const QString& error);
  /// The Calibration tab for the result, with the checkpoint's scores before a fit beside it.
  void showCalibration();
  /// The checkpoint's data is not named by the user (see data/named_paths.h): ask to read it.
  void askToReadData(const std::vector<std::string>& paths);
  void showResult();
  /// The evaluated task's own view (made for its task, shown, filled).
  void showTaskView();
  void clearResult();
  void fillMisclassified();
  /// The matrix's column headers, elided to their columns' widths (whole in their tooltips).
  void elideClassNames();
  /// Sizes the matrix for `classes` columns beside its tabs (scrolling past half the page).
  void fitMatrix(int classes);
  void fillGallery(QListWidget* list, const std::vector<const train::SampleOutcome*>& samples);

  QString m_checkpoint;
  RegistriesPtr m_registries;
  bool m_dataFromCheckpoint = false;  ///< the user said yes to this checkpoint's data paths
  QLabel* m_checkpointLabel;
  QComboBox* m_split;
  QComboBox* m_tta;  ///< test-time augmentation: none, flip, crops
  QPushButton* m_run;
  QPushButton* m_cancelButton;
  QProgressBar* m_progress;
  QLabel* m_summary;
  QTableWidget* m_confusion;
  QTableWidget* m_perClass;
  QCustomPlot* m_bars;
  QCustomPlot* m_prCurves;  ///< each class's precision-recall curve
  QLabel* m_cellTitle;
  QTabWidget* m_details = nullptr;  ///< per class, the clicked cell, the misclassified
  QStackedWidget* m_views;          ///< the class view (matrix and tabs) or the task's view
  QWidget* m_classView = nullptr;
  QSplitter* m_classSplit = nullptr;
  QWidget* m_matrixBox = nullptr;
  QLabel* m_matrixHint = nullptr;  ///< shown while the matrix scrolls sideways
  TaskView* m_taskView = nullptr;
  std::string m_taskViewTask;  ///< the task m_taskView is of
  CalibrationPanel* m_calibration;
  EmbeddingPanel* m_embedding;
  /// The calibration at temperature 1 of the checkpoint and split in m_uncalibratedKey: what a
  /// fit is shown against.
  std::optional<train::Calibration> m_uncalibrated;
  QString m_uncalibratedKey;
  QString m_recorded;  ///< the file the last fit was recorded in
  QListWidget* m_cell;
  QListWidget* m_misclassified;
  QComboBox* m_order;
  std::unique_ptr<train::Evaluation> m_result;
  QString m_error;
  BackgroundJob* m_job;
  int m_cellRow = -1;  ///< the matrix cell whose samples the Cell tab lists (-1: none)
  int m_cellColumn = -1;
};

}  // namespace netsmith::ui
