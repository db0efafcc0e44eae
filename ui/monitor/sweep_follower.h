#pragma once

// The sweep the Experiments page shows, read from its own record: sweep.json and the spec in
// its base project, then, while a process runs it, polled about once a second on a worker
// thread (sweep.json and the running trials' run folders, read again only when their size or
// time moved).
#include <QObject>
#include <QString>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "experiment/sweep_spec.h"
#include "experiment/sweep_state.h"
#include "monitor/run_history.h"
#include "run/run_records.h"

class QTimer;

namespace netsmith::ui {

class BackgroundJob;
class ProjectDocument;
struct SweepPoll;

class SweepFollower : public QObject {
  Q_OBJECT

 public:
  /// The running trials' histories by trial, each named after its trial ("trial 3").
  using TrialHistories = std::vector<std::pair<std::int64_t, RunHistory>>;

  explicit SweepFollower(ProjectDocument* document, QObject* parent = nullptr);

  /// Reads the sweep in `dir` (its sweep.json, and its spec from base.netsmith.json), says so
  /// (opened()), then polls its running trials' run folders. False, with unreadable(), when it
  /// cannot be read.
  bool open(const QString& dir);
  /// Lets go of the sweep: its folder, record and followed trials; a poll on its way is dropped.
  void forget();
  /// A sweep's process starts: its record is read again once its folder has one; `dir` is a
  /// resumed sweep's folder ("" : the process names it, setDir()).
  void expect(const QString& dir);
  /// The folder the running sweep writes, as its process names it.
  void setDir(const QString& dir);
  /// Polls every second from now on (a sweep is run), until stopPolling().
  void startPolling();
  void stopPolling();
  /// Reads what changed in the sweep folder on a worker thread: sweep.json and the running
  /// trials' run folders, when their signature moved (or always, `force`). Returns false when
  /// there is nothing to read (no sweep shown).
  bool poll(bool force = false);

  QString dir() const { return m_dir; }
  const experiment::SweepState& state() const { return m_state; }
  const experiment::SweepSpec& spec() const { return m_spec; }
  bool hasSpec() const { return m_hasSpec; }
  /// Whether the last look found a process running the sweep (holding its lock).
  bool live() const { return m_live; }

 Q_SIGNALS:
  /// open() read a sweep: its record and spec are new.
  void opened();
  /// open() could not read the sweep: `reason` says why.
  void unreadable(const QString& reason);
  /// A poll's result is in: `changed` when the record, or whether a process runs the sweep,
  /// moved; then `runs` holds the running trials' histories.
  void polled(bool changed, const netsmith::ui::SweepFollower::TrialHistories& runs);
  /// No poll runs and none is asked for: the sweep is shown as its record was last read.
  void settled();

 private:
  void showPoll(SweepPoll poll);
  /// After a poll: the one asked for meanwhile, else settled().
  void afterPoll();

  ProjectDocument* m_document;
  QTimer* m_timer;
  BackgroundJob* m_job;
  bool m_pollAgain = false;  ///< a forced poll was asked for while one ran
  /// Counts the sweeps shown: a poll's result for an earlier one is dropped.
  std::uint64_t m_generation = 0;
  QString m_dir;
  experiment::SweepState m_state;
  experiment::SweepSpec m_spec;
  bool m_hasSpec = false;
  bool m_live = false;
  /// Each running trial's run folder, followed between polls: a poll reads what the trial
  /// appended since the last one, at most 4 MiB of it (handed to the poll's worker and back).
  std::map<std::int64_t, run::RunRecordReader> m_trialRuns;
  // What the last poll saw: sweep.json and the running trials' metrics.csv (size, mtime).
  QString m_seen;
};

}  // namespace netsmith::ui
