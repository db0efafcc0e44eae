#pragma once

// The Evaluation page's view of a task (classification's matrix, multi-label's per-label curves,
// regression's scatter, segmentation's masks, detection's boxes): drawn from the evaluation's
// figures (core's, the numbers `netsmith-cli eval` prints) and its kept samples
// (eval::SampleOutcome::view). One view per task, registered by the task's name in
// TaskViewRegistry (the built-in ones in task_views.cpp), so the page never branches on the
// task.
#include <QPixmap>
#include <QStringList>
#include <QWidget>

#include <functional>
#include <map>
#include <memory>
#include <opencv2/core/mat.hpp>
#include <string>
#include <vector>

#include "evaluation/task_views_fwd.h"
#include "registries/registries_fwd.h"

class QComboBox;
class QCustomPlot;
class QDialog;
class QLabel;
class QSlider;
class QListWidget;
class QTableWidget;

namespace netsmith::eval {
struct Evaluation;
struct SampleOutcome;
}  // namespace netsmith::eval

namespace netsmith::ui {

class TaskView : public QWidget {
  Q_OBJECT

 public:
  using QWidget::QWidget;
  /// Shows `evaluation` (kept by the page for as long as the view shows it).
  virtual void showResult(const eval::Evaluation& evaluation) = 0;
  virtual void clearResult() = 0;
  /// Sample `sample` of `evaluation` opened large (a child of this view, not yet shown), or
  /// nullptr. The default shows its picture and what the view says of it.
  virtual QDialog* sampleDialog(const QString& checkpoint, const RegistriesPtr& registries,
                                const eval::SampleOutcome& sample,
                                const eval::Evaluation& evaluation);
  /// The page's summary line for `evaluation`, after its `headline` ("test accuracy 85.27% on
  /// 10000 images (checkpoint best)"). The default: the task, the loss, a partial result marked.
  virtual QString summaryLine(const eval::Evaluation& evaluation, const QString& headline) const;
  static QString taskSummaryLine(const eval::Evaluation& evaluation, const QString& headline);
  /// While the page evaluates (`busy`), a view offers nothing that would start another.
  virtual void setBusy(bool busy) { (void)busy; }

 protected:
  /// A read-only table of per-class or per-target figures named `name`: names in the first
  /// column (taking the room left), figures as wide as they read.
  static void setUpFigureTable(QTableWidget* table, const QString& name,
                               const QStringList& headers);
  /// Row `row` of such a table: `cells`, the figures right-aligned.
  static void setFigureRow(QTableWidget* table, int row, const QStringList& cells);
  /// A gallery of samples named `name` (icons of `icon`, laid out in cells of `grid`); a click
  /// asks for the sample (sampleRequested with the item's Qt::UserRole position).
  void setUpGallery(QListWidget* gallery, const QString& name, QSize icon, QSize grid);
  /// A precision-recall chart named `name`, recall (`recallLabel`) along x, both axes [0, 1].
  static void setUpPrCurve(QCustomPlot* plot, const QString& name, const QString& recallLabel);
  /// A slider over [0, 1] in steps of 1/kThresholdSteps named `name`.
  static void setUpThresholdSlider(QSlider* slider, const QString& name, const QString& tip);
  static constexpr int kThresholdSteps = 1000;
  /// The curve of `scored` (score, whether it is a true positive) against `positives` as
  /// graph 0 named `name`, a point after each run of equal scores (a threshold at that score
  /// takes all of them); graph 1 (empty) is the threshold's point (markPrPoint).
  static void drawPrCurve(QCustomPlot* plot, std::vector<std::pair<float, bool>> scored,
                          double positives, const QString& name);
  /// Graph 1 at (recall, precision), or empty when `any` is false (nothing predicted).
  static void markPrPoint(QCustomPlot* plot, double recall, double precision, bool any);
  /// The curve over its threshold slider (labelled `sliderLabel`) over the counts line.
  QWidget* curvePanel(QCustomPlot* curve, const QString& sliderLabel, QSlider* slider,
                      QLabel* counts);
  /// The gallery under its title (and its order chooser, when given).
  QWidget* galleryPanel(const QString& title, QListWidget* gallery, QComboBox* order = nullptr);
  /// This view's layout: `first` and `second` in a splitter (`orientation`), with the stretch
  /// factors given.
  void layOutSplit(Qt::Orientation orientation, QWidget* first, QWidget* second, int firstStretch,
                   int secondStretch);
  /// An evaluated sample's picture at the dialogs' size (280 px).
  static QPixmap largePicture(const cv::Mat& picture);
  /// A dialog with `picture` large and `caption` above it.
  QDialog* pictureDialog(qint64 position, const QPixmap& picture, const QString& caption);

 Q_SIGNALS:
  /// The user asked to open sample `position` of the evaluated split large.
  void sampleRequested(qint64 position);
  /// The user asked to fit the temperature (a view with calibration).
  void temperatureFitRequested();
};

/// Makes a task's view, a child of `parent`.
using TaskViewFactory = std::function<TaskView*(QWidget* parent)>;

/// The studio's evaluation views by task name, the way ops are registered: built by the
/// program's main (the built-in tasks' views, builtins()) and passed to the main window, which
/// hands it to the Evaluation page; a new task adds its own.
class TaskViewRegistry {
 public:
  /// A registry of the built-in tasks' views.
  static std::shared_ptr<const TaskViewRegistry> builtins();
  /// Registers (or replaces) the view of `task`.
  void add(const std::string& task, TaskViewFactory make);
  /// The view of `task`, or nullptr when it has none (the page then shows its figures as text).
  TaskView* make(const std::string& task, QWidget* parent) const;

 private:
  std::map<std::string, TaskViewFactory> m_views;
};

/// The built-in tasks' views (task_views.cpp).
void addBuiltinTaskViews(TaskViewRegistry& registry);

/// Figure `name` of class or target `k` in an evaluation's per-class figures; NaN when absent.
double perClassFigure(const std::map<std::string, std::vector<double>>& perClass, const char* name,
                      std::size_t k);

}  // namespace netsmith::ui
