#pragma once

// A sweep run by a `netsmith-cli sweep ... --json` child process, as TrainerSession is a
// training run: it owns the process, reads its lines into experiment::SweepEvent (the type the
// sweep runner sends and the CLI prints), and says when it ends. The Experiments page shows
// what it hears; stopping sends SIGTERM, so the running trials write checkpoints first.
#include <QByteArray>
#include <QObject>
#include <QString>
#include <QStringList>

#include "experiment/sweep_event.h"

class QProcess;

namespace netsmith::ui {

class SweepSession : public QObject {
  Q_OBJECT

 public:
  explicit SweepSession(QObject* parent = nullptr);
  /// Stops a running sweep (its trials write checkpoints) and waits for it, up to 30 s.
  ~SweepSession() override;

  /// Starts `program` (netsmith-cli) with `args` (sweep PROJECT --json, sweep --resume DIR
  /// --json). False, with `error` set, when it cannot be started or one is running.
  bool start(const QString& program, const QStringList& args, QString* error);
  /// Asks the sweep to stop (SIGTERM): the trials write checkpoints and it exits 130.
  void stop();
  bool isRunning() const;

 signals:
  void eventArrived(const netsmith::experiment::SweepEvent& event);
  /// A line of standard output that is not a sweep event, or what it wrote to standard error.
  void textArrived(const QString& text);
  /// The process ended with `exitCode` (kExitOk, kExitInterrupted, ...), its output all read.
  void finished(int exitCode);

 private:
  void readOutput();
  /// One line of output: a sweep event, or text.
  void emitLine(const QByteArray& line);

  QProcess* m_process = nullptr;
  QByteArray m_buffer;
  bool m_skippingLine = false;  ///< the rest of a line shown cut is dropped up to its newline
};

}  // namespace netsmith::ui
