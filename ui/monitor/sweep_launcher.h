#pragma once

// Runs the project's sweep as `netsmith-cli sweep` in a child process (SweepSession): the
// command's arguments (the Training page's sample limits among them), and a snapshot of the
// project's unsaved edits for the sweep to start from, so that sweeping never saves the project
// for the user. The snapshot is removed once the sweep has its own copy.
#include <QObject>
#include <QString>
#include <QStringList>

#include "experiment/sweep_event.h"

namespace netsmith::ui {

class ProjectDocument;
class SweepSession;

class SweepLauncher : public QObject {
  Q_OBJECT

 public:
  explicit SweepLauncher(ProjectDocument* document, QObject* parent = nullptr);
  /// Stops a running sweep (its trials write checkpoints), then removes its snapshot.
  ~SweepLauncher() override;

  /// The program run for sweeps (default: netsmith-cli beside the studio, else on PATH).
  void setProgram(const QString& program) { m_program = program; }
  /// False when netsmith-cli was found neither beside the studio nor on PATH.
  bool hasProgram() const { return !m_program.isEmpty(); }
  /// Trials train and validate on subsets of this many samples (0: all), passed as
  /// --limit-train and --limit-val.
  void setSampleLimits(qint64 train, qint64 validation) {
    m_limitTrain = train;
    m_limitValidation = validation;
  }
  /// The arguments that run the project's sweep, writing the snapshot of its unsaved edits
  /// first; empty, with `error` set, when the project was never saved or the snapshot cannot
  /// be written.
  ///
  ///     sweep experiments.netsmith.json --out sweeps --json --limit-train 512
  QStringList runArguments(QString* error);
  /// Starts the program with `args`; false with `error` set (and the snapshot removed) when it
  /// cannot be started.
  bool start(const QStringList& args, QString* error);
  /// Asks the sweep to stop: its trials write checkpoints, and it ends (finished()).
  void stop();
  bool isRunning() const;

 Q_SIGNALS:
  void eventArrived(const netsmith::experiment::SweepEvent& event);
  /// A line the sweep printed that is not an event, or what it wrote to standard error.
  void textArrived(const QString& text);
  /// The process ended with `exitCode`, its output all read and its snapshot removed.
  void finished(int exitCode);

 private:
  /// Removes the snapshot of unsaved edits a sweep was started from, once it is not needed.
  void dropSnapshot();

  ProjectDocument* m_document;
  QString m_program;
  SweepSession* m_session;
  /// The unsaved project as the running sweep was started from ("" : it ran the saved file).
  QString m_snapshot;
  qint64 m_limitTrain = 0;
  qint64 m_limitValidation = 0;
};

}  // namespace netsmith::ui
