#pragma once

// The Experiments page (issue 21): the project's sweep section edited from a form (settings are
// added with "Sweep this setting" on the Training, Augment and Model pages' fields), a sweep run
// as `netsmith-cli sweep` in a child process (stopped with a checkpoint, resumed later), its
// trials in a sortable live table, a parallel-coordinates plot of the settings against the
// objective and a scatter of the objective against one setting, the running trials' curves on
// the Dashboard, and "Apply best" (one undoable edit). Everything shown is read from the
// sweep's own record (sweep.json).
#include <QString>
#include <QStringList>
#include <QWidget>

#include "experiment/sweep_event.h"
#include "experiment/sweep_state.h"
#include "monitor/sweep_follower.h"

class QCustomPlot;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QTableWidget;

namespace netsmith::ui {

class Dashboard;
class ProjectDocument;
class SweepCharts;
class SweepForm;
class SweepLauncher;
class SweepTrialsTable;

class ExperimentsPage : public QWidget {
  Q_OBJECT

 public:
  ExperimentsPage(ProjectDocument* document, Dashboard* dashboard, QWidget* parent = nullptr);
  ~ExperimentsPage() override;

  /// Runs the project's sweep (saving the project first); false with a message when it cannot.
  bool runSweep();
  /// Goes on with the sweep in `dir` (a killed or stopped one).
  bool resumeSweep(const QString& dir);
  /// Asks the running sweep to stop: its trials write checkpoints; Resume goes on.
  void stopSweep();
  bool isRunning() const;
  /// Shows the sweep in `dir` (its sweep.json); false with a message when it cannot be read.
  bool openSweep(const QString& dir);
  /// Lets go of the sweep shown (its table, charts, log and dashboard overlays): another
  /// project was opened or the project was closed.
  void forget();
  /// The newest record of the project's sweep under its folder's sweeps/ ("" for none).
  QString latestSweepDir() const;
  /// The best trial's settings applied to the project, as one undoable edit.
  bool applyBest();
  QString sweepDir() const { return m_sweep->dir(); }
  const experiment::SweepState& state() const { return m_sweep->state(); }
  QString statusText() const;
  /// The program run for sweeps (default: netsmith-cli beside the studio, else on PATH).
  void setCliProgram(const QString& program);
  /// Trials train and validate on subsets of this many samples (0: all): the Training page's
  /// quick run, passed to netsmith-cli sweep as --limit-train and --limit-val.
  void setSampleLimits(qint64 train, qint64 validation);

  QTableWidget* trialsTable() const;
  QCustomPlot* parallelPlot() const;
  QCustomPlot* scatterPlot() const;

 Q_SIGNALS:
  /// The sweep process ended: `finished` when the sweep did (not stopped or failed).
  void sweepEnded(bool finished);
  /// A sweep's process started (run or resumed from this page).
  void sweepStarted();

 private:
  /// The run buttons, status and log: names and looks.
  void setupRunWidgets();
  /// The sweep's definition and run buttons (left), in a scroll area.
  QWidget* buildDefinitionPanel();
  /// The trials table over the two charts (right).
  QWidget* buildResultsPanel();
  /// Run, Stop, Open and Apply best.
  void connectRunButtons();
  /// The sweep's process and the reads of its folder.
  void connectSweep();
  /// The project's changes refresh Run; a project loaded shows its last sweep.
  void connectDocument();
  /// Run's state and reason from the sweep section's and the project's problems.
  void updateRunButton();
  bool start(const QStringList& args);
  void onSweepEvent(const experiment::SweepEvent& event);
  void onSweepFinished(int exitCode);
  /// A poll's result: the sweep shown again when it changed (and the running trials overlaid
  /// on the dashboard), else the running trials' times counted on.
  void onPolled(bool changed, const SweepFollower::TrialHistories& runs);
  /// The table, the status line, Apply best and the charts from the sweep's record.
  void showSweep();
  /// The status line: trials by status, epochs trained, the best trial.
  QString summaryText(const experiment::Trial* best, bool live) const;
  /// What onSweepFinished says, once the sweep's last poll is shown.
  void reportEnd();
  /// Whether the sweep shown is being run now (by this studio, or a process holding its lock).
  bool sweepLive() const;
  void say(const QString& text);

  ProjectDocument* m_document;
  Dashboard* m_dashboard;
  SweepLauncher* m_launcher;
  SweepFollower* m_sweep;
  SweepForm* m_form;
  QPushButton* m_run;
  QPushButton* m_stop;
  QPushButton* m_open;
  QPushButton* m_applyBest;
  QLabel* m_status;
  SweepTrialsTable* m_table;
  SweepCharts* m_charts;
  QPlainTextEdit* m_log;
  int m_endCode = -1;  ///< the sweep process's exit code, until its last poll is shown
  QStringList m_overlaid;
};

}  // namespace netsmith::ui
