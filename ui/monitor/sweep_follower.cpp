#include "monitor/sweep_follower.h"

#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QTimer>
#include <memory>

#include "project/project.h"
#include "run/run_layout.h"
#include "session/project_document.h"
#include "util/background_job.h"

namespace netsmith::ui {

/// What a poll of a sweep folder read, handed from the worker to the follower.
struct SweepPoll {
  bool changed = false;  ///< false: nothing moved since the last poll (nothing else is set)
  QString seen;          ///< the signature the state was read at
  experiment::SweepState state;
  std::map<std::int64_t, run::RunRecordReader> readers;  ///< the running trials, followed
  SweepFollower::TrialHistories runs;                    ///< the readable ones, by trial
  std::uint64_t generation = 0;  ///< the follower's m_generation when the poll started
  bool live = false;             ///< a process runs the sweep (holds its lock)
};

namespace {

/// sweep.json and the running trials' metrics.csv of `state`, each as path, size and time: a
/// poll reads the files again only when this moved (stat calls only otherwise).
QString changeSignature(const QString& dir, const experiment::SweepState& state) {
  QString sig;
  const auto stamp = [&sig](const QString& path) {
    const QFileInfo info(path);
    sig += QStringLiteral("%1:%2:%3;")
               .arg(path)
               .arg(info.size())
               .arg(info.exists() ? info.lastModified().toMSecsSinceEpoch() : -1);
  };
  stamp(QDir(dir).filePath(QStringLiteral("sweep.json")));
  for (const auto& t : state.trials)
    if (t.status == experiment::TrialStatus::Running && !t.runDir.empty())
      stamp(QString::fromStdString(
          run_layout::runFile(QDir(dir).filePath(QString::fromStdString(t.runDir)).toStdString(),
                              run_layout::kMetrics)));
  return sig;
}

/// On the poll's worker thread: the sweep record when its signature moved since `seen` ("":
/// read it anyway), and what each running trial appended to its run folder (at most 4 MiB a
/// trial a poll), through the readers kept from the last poll.
SweepPoll readSweep(const QString& dir, const QString& seen, const experiment::SweepState& previous,
                    std::map<std::int64_t, run::RunRecordReader> readers) {
  SweepPoll p;
  p.readers = std::move(readers);
  p.live = experiment::sweepInUse(dir.toStdString());
  if (!QFileInfo::exists(QDir(dir).filePath("sweep.json"))) return p;
  if (!seen.isEmpty() && changeSignature(dir, previous) == seen) return p;
  try {
    p.state = experiment::loadSweepState(dir.toStdString());
  } catch (const Error&) {
    return p;  // the next poll reads it again
  }
  p.seen = changeSignature(dir, p.state);
  p.changed = true;
  std::map<std::int64_t, run::RunRecordReader> following;  // finished trials are let go
  for (const auto& t : p.state.trials) {
    if (t.status != experiment::TrialStatus::Running || t.runDir.empty()) continue;
    const std::string runDir = QDir(dir).filePath(QString::fromStdString(t.runDir)).toStdString();
    auto it = p.readers.find(t.id);
    auto reader = it != p.readers.end() && it->second.dir() == runDir
                      ? std::move(it->second)
                      : run::RunRecordReader(runDir);
    reader.update(std::uint64_t(4) << 20);
    if (reader.record().error.empty())
      p.runs.emplace_back(t.id, RunHistory::fromRecord(reader.record()));
    following.emplace(t.id, std::move(reader));
  }
  p.readers = std::move(following);
  return p;
}

}  // namespace

SweepFollower::SweepFollower(ProjectDocument* document, QObject* parent)
    : QObject(parent),
      m_document(document),
      m_timer(new QTimer(this)),
      m_job(new BackgroundJob(this)) {
  connect(m_timer, &QTimer::timeout, this, [this] { poll(); });
  m_timer->setInterval(1000);
}

void SweepFollower::startPolling() {
  m_timer->start();
}

void SweepFollower::stopPolling() {
  m_timer->stop();
}

void SweepFollower::expect(const QString& dir) {
  m_hasSpec = false;  // read again from the sweep's folder
  ++m_generation;     // a poll still running reads what was shown before
  if (!dir.isEmpty()) m_dir = dir;
}

void SweepFollower::setDir(const QString& dir) {
  m_dir = dir;
  ++m_generation;
}

void SweepFollower::forget() {
  m_timer->stop();
  m_job->cancel();
  ++m_generation;  // a poll still on its way is dropped
  m_pollAgain = false;
  m_dir.clear();
  m_state = experiment::SweepState{};
  m_spec = experiment::SweepSpec{};
  m_hasSpec = false;
  m_live = false;
  m_trialRuns.clear();
  m_seen.clear();
}

bool SweepFollower::open(const QString& dir) {
  try {
    m_state = experiment::loadSweepState(dir.toStdString());
    const auto base = project::loadProject(QDir(dir).filePath("base.netsmith.json").toStdString());
    Problems problems;
    if (!base.project.extra.contains("sweep")) throw Error("its base project has no sweep");
    m_spec = experiment::parseSweep(base.project.extra["sweep"], base.project, problems,
                                    *m_document->registries());
    if (!problems.empty()) throw Error(formatProblems(problems));
    m_hasSpec = true;
  } catch (const Error& e) {
    emit unreadable(QString::fromUtf8(e.what()));
    return false;
  }
  m_dir = dir;
  ++m_generation;
  m_live = experiment::sweepInUse(dir.toStdString());
  emit opened();
  poll(true);  // the running trials' run folders, on a worker thread
  return true;
}

bool SweepFollower::poll(bool force) {
  if (m_dir.isEmpty()) return false;
  if (!m_hasSpec) {
    // sweep.json is replaced atomically: a read sees one whole version.
    if (QFileInfo::exists(QDir(m_dir).filePath("sweep.json"))) open(m_dir);
    return m_job->isRunning();  // open() polls what it opened
  }
  if (m_job->isRunning()) {
    m_pollAgain = m_pollAgain || force;
    return true;
  }
  // The followed trials travel to the worker and back with the poll's result.
  auto readers =
      std::make_shared<std::map<std::int64_t, run::RunRecordReader>>(std::move(m_trialRuns));
  m_trialRuns.clear();
  m_job->start(
      [dir = m_dir, seen = force ? QString() : m_seen, state = m_state, readers,
       generation = m_generation](const JobContext&) {
        auto result = readSweep(dir, seen, state, std::move(*readers));
        result.generation = generation;
        return result;
      },
      [this](SweepPoll result) { showPoll(std::move(result)); },
      [this](const QString&) { afterPoll(); });  // the next poll reads it again
  return true;
}

void SweepFollower::afterPoll() {
  if (m_pollAgain) {
    m_pollAgain = false;
    if (poll(true)) return;  // settled() waits for that one
  }
  emit settled();
}

void SweepFollower::showPoll(SweepPoll result) {
  if (result.generation != m_generation) {
    // Read for a sweep shown before: dropped, and the one shown now is read.
    m_pollAgain = true;
    afterPoll();
    return;
  }
  m_trialRuns = std::move(result.readers);
  const bool liveChanged = result.live != m_live;
  m_live = result.live;
  const bool changed = result.changed || liveChanged;
  if (changed) {
    m_state = std::move(result.state);
    m_seen = result.seen;
    for (auto& [id, run] : result.runs)
      run.name = tr("trial %1").arg(id);
  }
  emit polled(changed, result.runs);
  afterPoll();
}

}  // namespace netsmith::ui
