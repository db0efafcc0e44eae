#pragma once

// The Evaluation page: a checkpoint (the current run's best, or one chosen) evaluated on a
// split by core (the numbers `netsmith-cli eval` prints), on a background thread with progress,
// its figures in a summary line and the evaluated task's own view (evaluation/task_view.h, made
// by TaskViewRegistry: classification's matrix, calibration and embedding; the other tasks'
// views). The page never asks which task it shows.
#include <QString>
#include <QWidget>
#include <memory>
#include <string>

#include "eval/evaluation.h"
#include "evaluation/task_views_fwd.h"

class QComboBox;
class QDialog;
class QLabel;
class QProgressBar;
class QPushButton;
class QStackedWidget;

namespace netsmith::ui {

class BackgroundJob;
class SampleDialog;
class TaskView;

class EvaluationPage : public QWidget {
  Q_OBJECT

 public:
  /// `registries`: the program's (evaluation and Grad-CAM read checkpoints with them).
  /// `views`: the task views this program knows (TaskViewRegistry).
  EvaluationPage(RegistriesPtr registries, TaskViewsPtr views, QWidget* parent = nullptr);

  void setCheckpoint(const QString& path);
  QString checkpoint() const { return m_checkpoint; }
  /// The task of the checkpoints evaluated (the open project's; a result's own once it comes):
  /// the TTA choice shows only where the task's evaluator scales class scores.
  void setTask(const std::string& task);
  /// Evaluates the checkpoint on the chosen split in the background; evaluated() follows.
  void evaluate();
  /// Fits temperature scaling on the checkpoint's validation split, records it beside the
  /// checkpoint (eval::writeCalibrationFile) and evaluates the chosen split with it; the
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
  const eval::Evaluation& result() const { return *m_result; }
  QString errorText() const { return m_error; }

  /// The view of the evaluated task (null before a result, or for a task without one).
  TaskView* taskView() const { return m_taskView; }
  /// Opens sample `position` of the evaluated split large, with its Grad-CAM maps (a click on
  /// a thumbnail does this). Returns the dialog, or nullptr when the sample was not kept.
  /// The sample opens as the task's view makes it (openSampleDialog); openSample returns it
  /// when it is a SampleDialog (classification's, multi-label's with a map per label).
  SampleDialog* openSample(qint64 position);
  QDialog* openSampleDialog(qint64 position);

 Q_SIGNALS:
  void evaluated();

 private:
  void startEvaluation(bool fitTemperature);
  void evaluationDone(eval::Evaluation result, const QString& error);
  /// The checkpoint's data is not named by the user (see data/named_paths.h): ask to read it.
  void askToReadData(const std::vector<std::string>& paths);
  /// The summary and the evaluated task's own view (made for its task, shown, filled).
  void showResult();
  /// `text` in the view's place.
  void showPlaceholder(const QString& text);
  void clearResult();

  QString m_checkpoint;
  RegistriesPtr m_registries;
  TaskViewsPtr m_taskViews;
  bool m_dataFromCheckpoint = false;  ///< the user said yes to this checkpoint's data paths
  QLabel* m_checkpointLabel;
  QComboBox* m_split;
  QComboBox* m_tta;  ///< test-time augmentation: none, flip, crops
  QPushButton* m_run;
  QPushButton* m_cancelButton;
  QProgressBar* m_progress;
  QLabel* m_summary;
  QStackedWidget* m_views;  ///< the placeholder or the task's view
  QLabel* m_placeholder;
  TaskView* m_taskView = nullptr;
  std::string m_taskViewTask;  ///< the task m_taskView is of
  std::unique_ptr<eval::Evaluation> m_result;
  QString m_error;
  BackgroundJob* m_job;
};

}  // namespace netsmith::ui
