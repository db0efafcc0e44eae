#pragma once

// The Runs page: the project's past runs (its runs/ folders) with their colour, start, duration,
// device, epochs, best validation and test figure (the task's headline, with its denominator)
// and checkpoints; a
// run can be overlaid on the dashboard (in the same colour), its best checkpoint loaded for
// export and resume, its folder opened; two selected runs show the settings they differ in.
#include <QVector>
#include <QWidget>

#include "monitor/run_history.h"
#include "task/figures.h"

class QLabel;
class QPlainTextEdit;
class QTreeWidget;

namespace netsmith::ui {

class BackgroundJob;
class CostPlot;
class Dashboard;
class ProjectDocument;

class RunsPage : public QWidget {
  Q_OBJECT

 public:
  /// Lists the runs of `document`'s project; overlays go to `dashboard`.
  RunsPage(ProjectDocument* document, Dashboard* dashboard, QWidget* parent = nullptr);

  /// Re-reads runs/ of the project, on a worker thread (a folder of long runs takes a while);
  /// runsListed() follows when the table shows them.
  void refresh();
  const QVector<RunHistory>& runs() const { return m_runs; }
  /// Selects the run at `row` of the runs table.
  void selectRun(int row);
  /// Overlays the selected run on the dashboard.
  void overlaySelectedRun();
  /// Selects two runs and returns the differences shown ("" unless two are selected).
  QString differencesText() const;
  void selectRuns(int first, int second);
  /// The runs' figure against their deploy cost (Pareto front marked).
  CostPlot* costPlot() const { return m_costPlot; }

 Q_SIGNALS:
  /// The runs are read and listed (after refresh()).
  void runsListed();
  /// "Load best", or a checkpoint double-clicked: it becomes the studio's current one.
  void checkpointChosen(const QString& path);

 private:
  void showRuns(QVector<RunHistory> runs, const QString& root, const QStringList& errors);
  /// The run's headline figure as its task describes it (the name alone when the task is not
  /// one this program knows).
  task::FigureSpec headlineSpec(const RunHistory& run) const;
  /// "accuracy 91.05%", "mae 0.1234".
  static QString figureText(const task::FigureSpec& spec, double value);
  void showRunDetails();
  /// The runs' best validation figure against what they cost deployed, the front marked.
  void showCosts();
  int selectedRow() const;

  ProjectDocument* m_document;
  Dashboard* m_dashboard;
  QLabel* m_info;
  BackgroundJob* m_listJob;
  QTreeWidget* m_runsTable;
  QTreeWidget* m_checkpoints;
  QPlainTextEdit* m_differences;
  CostPlot* m_costPlot;
  QVector<RunHistory> m_runs;
};

}  // namespace netsmith::ui
