#pragma once

// The Experiments page (issue 21): the project's sweep section edited from a form (settings are
// added with "Sweep this setting" on the Training, Augment and Model pages' fields), a sweep run
// as `netsmith-cli sweep` in a child process (stopped with a checkpoint, resumed later), its
// trials in a sortable live table, a parallel-coordinates plot of the settings against the
// objective and a scatter of the objective against one setting, the running trials' curves on
// the Dashboard, and "Apply best" (one undoable edit). Everything shown is read from the
// sweep's own record (sweep.json).
#include <QString>

#include <QWidget>
#include <cstdint>

#include "experiment/sweep_event.h"
#include "experiment/sweep_spec.h"
#include "experiment/sweep_state.h"
#include "run/run_records.h"

class QCheckBox;
class QComboBox;
class QCustomPlot;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;
class QTableWidget;
class QTimer;

namespace netsmith::ui {

class BackgroundJob;
struct SweepPoll;

class Dashboard;
class ProjectDocument;
class SweepSession;

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
  QString sweepDir() const { return m_dir; }
  const experiment::SweepState& state() const { return m_state; }
  QString statusText() const;
  /// The program run for sweeps (default: netsmith-cli beside the studio, else on PATH).
  void setCliProgram(const QString& program) { m_cli = program; }
  /// Trials train and validate on subsets of this many samples (0: all): the Training page's
  /// quick run, passed to netsmith-cli sweep as --limit-train and --limit-val.
  void setSampleLimits(qint64 train, qint64 validation) {
    m_limitTrain = train;
    m_limitValidation = validation;
  }

  QTableWidget* trialsTable() const { return m_table; }
  QCustomPlot* parallelPlot() const { return m_parallel; }
  QCustomPlot* scatterPlot() const { return m_scatter; }

 Q_SIGNALS:
  /// The sweep process ended: `finished` when the sweep did (not stopped or failed).
  void sweepEnded(bool finished);
  /// A sweep's process started (run or resumed from this page).
  void sweepStarted();

 private:
  /// The sweep section's form fields: names, ranges, tooltips.
  void setupSweepFormWidgets();
  /// The run buttons, status, trials table, charts and log: names and looks.
  void setupRunAndResultWidgets();
  /// The sweep's definition and run buttons (left), in a scroll area.
  QWidget* buildDefinitionPanel();
  /// The trials table over the two charts (right).
  QWidget* buildResultsPanel();
  /// The form's fields write the sweep section.
  void connectSweepForm();
  /// Run, Stop, Open, Apply best, the scatter's setting and the poll timer.
  void connectRunAndResults();
  /// The project's changes refresh the form and Run; a project loaded shows its last sweep.
  void connectDocument();
  void refreshDefinition();
  /// Run's state and reason from the sweep section's and the project's problems.
  void updateRunButton();
  /// An objective's value as the rest of the studio writes it: "68.80%" for an accuracy,
  /// "0.4123" for a loss.
  static QString objectiveText(double value, const std::string& objective);
  void editSweep(const char* key, const Json& value, const QString& text);
  bool start(const QStringList& args);
  void onSweepEvent(const experiment::SweepEvent& event);
  void onSweepFinished(int exitCode);
  /// Reads what changed in the sweep folder on a worker thread (m_pollJob): sweep.json and the
  /// running trials' run folders, when their signature moved (or always, `force`). Returns
  /// false when there is nothing to read (no sweep shown).
  bool poll(bool force = false);
  void showPoll(SweepPoll poll);
  /// After a poll: the one asked for meanwhile, else the sweep's end when it waits.
  void afterPoll();
  /// What onSweepFinished says, once the sweep's last poll is shown.
  void reportEnd();
  void fillTable();
  /// The Time column of the trials under way, counted on to now (between polls that change).
  void showTrialTimes();
  /// Whether the sweep shown is being run now (by this studio, or a process holding its lock).
  bool sweepLive() const;
  void drawParallel();
  void drawScatter();
  void say(const QString& text);
  /// Removes the snapshot of unsaved edits a sweep was started from, once it is not needed.
  void dropSnapshot();

  ProjectDocument* m_document;
  Dashboard* m_dashboard;
  QString m_cli;
  // The sweep section's form.
  QComboBox* m_method;
  QSpinBox* m_trials;
  QSpinBox* m_parallelTrials;
  QComboBox* m_objective;
  QCheckBox* m_asha;
  QSpinBox* m_minEpochs;
  QSpinBox* m_reduction;
  QTableWidget* m_params;
  QPushButton* m_removeParam;
  QLabel* m_problems;
  // Running and results.
  QPushButton* m_run;
  QPushButton* m_stop;
  QPushButton* m_open;
  QPushButton* m_applyBest;
  QLabel* m_status;
  QTableWidget* m_table;
  QCustomPlot* m_parallel;
  QCustomPlot* m_scatter;
  QComboBox* m_scatterParam;
  QPlainTextEdit* m_log;
  SweepSession* m_session = nullptr;
  /// The unsaved project as the running sweep was started from ("" : it ran the saved file).
  QString m_snapshot;
  QTimer* m_poll;
  BackgroundJob* m_pollJob;
  bool m_pollAgain = false;  ///< a forced poll was asked for while one ran
  /// Counts the sweeps shown: a poll's result for an earlier one is dropped.
  std::uint64_t m_pollGeneration = 0;
  int m_endCode = -1;  ///< the sweep process's exit code, until its last poll is shown
  QString m_dir;
  experiment::SweepState m_state;
  experiment::SweepSpec m_spec;
  bool m_hasSpec = false;
  bool m_live = false;  ///< the last poll found a process running the sweep shown
  QStringList m_overlaid;
  /// Each running trial's run folder, followed between polls: a poll reads what the trial
  /// appended since the last one, at most 4 MiB of it (handed to the poll's worker and back).
  std::map<std::int64_t, run::RunRecordReader> m_trialRuns;
  // What the last poll saw: sweep.json and the running trials' metrics.csv (size, mtime).
  QString m_seen;
  bool m_refreshing = false;
  bool m_tableSorted = false;
  bool m_scatterLegendPlaced = false;
  bool m_sweepProblems = false;
  qint64 m_limitTrain = 0;
  qint64 m_limitValidation = 0;
};

}  // namespace netsmith::ui
