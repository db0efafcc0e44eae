#include "experiment/sweep_runner.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <csignal>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <thread>

#include "common/error.h"
#include "common/exit_codes.h"
#include "common/file_util.h"
#include "common/subprocess.h"
#include "env/env_report.h"
#include "experiment/samplers.h"
#include "experiment/sweep_schedule.h"
#include "registries/registries.h"
#include "run/run_layout.h"
#include "run/run_records.h"
#include "train/train_options.h"

namespace netsmith::experiment {

namespace fs = std::filesystem;

namespace {

double nowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Json trialJson(const Trial& t) {
  SweepState one;
  one.trials.push_back(t);
  return sweepStateToJson(one)["trials"][0];
}

SweepEvent trialEnded(const Trial& t) {
  // Read back from the line it prints, so what the views show of a trial is derived once.
  Json j = trialJson(t);
  j["event"] = sweepEventName(SweepEventType::TrialEnded);
  j["trial"] = t.id;
  return SweepEvent::fromJson(j).value();
}

/// The process's own words on failure: the last "netsmith-cli:" line of its standard error
/// (else its last line), read from the file's end.
std::string failureText(const std::string& stderrPath) {
  std::ifstream in(stderrPath, std::ios::binary | std::ios::ate);
  if (!in) return {};
  const std::streamoff size = in.tellg();
  const std::streamoff from = std::max<std::streamoff>(0, size - 8192);
  in.seekg(from);
  std::string tail((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string last, own;
  std::size_t start = 0;
  while (start < tail.size()) {
    auto end = tail.find('\n', start);
    if (end == std::string::npos) end = tail.size();
    std::string line = tail.substr(start, end - start);
    if (!line.empty() && line.find_first_not_of(" \t\r") != std::string::npos) {
      last = line;
      if (line.rfind("netsmith-cli:", 0) == 0) own = line;
    }
    start = end + 1;
  }
  const std::string& text = own.empty() ? last : own;
  return text.substr(0, 2000);
}

/// Holds `dir`/sweep.lock. The file stays open in the trials (no close-on-exec), so a sweep
/// started again waits until the trials of one that was killed have written their checkpoints.
int lockSweepFolder(const std::string& dir) {
  const std::string path = (fs::path(dir) / "sweep.lock").string();
  const int fd = openForUpdateNoFollow(path, /*closeOnExec=*/false);
  const double until = nowSeconds() + 120;
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (nowSeconds() > until) {
      ::close(fd);
      throw Error(dir + ": in use by another sweep (or its trials) for over 2 minutes");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return fd;
}

int g_lockFd = -1;  // one sweep per process

/// Seconds since 1970: when a segment started, as a record another process reads.
double wallSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

std::string SweepRunner::create(const project::LoadedProject& loaded, const SweepSpec& spec,
                                const SweepOptions& options) {
  std::error_code ec;
  fs::create_directories(options.outRoot, ec);
  if (ec) throw Error(options.outRoot + ": cannot create (" + ec.message() + ")");
  const std::string stem = (fs::path(options.outRoot) / (fileNameSafe(spec.name, "sweep") + "-" +
                                                         localTimeText("%Y%m%d-%H%M%S")))
                               .string();
  std::string dir = stem;
  for (int n = 2; !fs::create_directory(dir, ec); ++n) {
    if (ec || n > 100) throw Error(dir + ": cannot create the sweep folder");
    dir = stem + "-" + std::to_string(n);
  }
  makeRealFolder((fs::path(dir) / "trials").string());
  Json base = withAbsolutePaths(project::projectToJson(loaded.project), loaded.baseDir());
  writeFileAtomically((fs::path(dir) / "base.netsmith.json").string(), base.dump(2) + "\n");
  SweepState s;
  s.name = spec.name;
  s.created = localTimeText("%Y-%m-%dT%H:%M:%S");
  s.baseProject = loaded.path;
  s.parallel = options.parallel > 0 ? options.parallel : spec.parallel;
  const int cores = std::max(1u, std::thread::hardware_concurrency());
  s.threadsPerTrial = options.threadsPerTrial > 0
                          ? options.threadsPerTrial
                          : std::max(1, cores / static_cast<int>(s.parallel));
  s.samplerLag = s.parallel;
  s.trainArgs = options.trainArgs;
  saveSweepState(dir, s);
  return dir;
}

SweepRunner::SweepRunner(const std::string& sweepDir, const SweepOptions& options)
    : m_dir(sweepDir), m_options(options) {
  m_state = loadSweepState(sweepDir);
  const std::string basePath = (fs::path(sweepDir) / "base.netsmith.json").string();
  auto loaded = project::loadProject(basePath);
  Problems problems = loaded.problems;
  if (!loaded.project.extra.contains("sweep"))
    problems.push_back({"sweep", "missing: the base project has no sweep section", {}, {}});
  else
    m_spec = parseSweep(loaded.project.extra["sweep"], loaded.project, problems,
                        needRegistries(options.registries, "SweepOptions"));
  if (!problems.empty()) throw Error(basePath + ": " + formatProblems(problems));
  m_base = loaded.project;
  if (options.parallel > 0) m_state.parallel = options.parallel;
  if (options.threadsPerTrial > 0) m_state.threadsPerTrial = options.threadsPerTrial;
  for (const auto& t : m_state.trials) {
    for (const auto& p : m_spec.params)
      if (!t.params.count(p.path))
        throw Error(sweepDir + "/sweep.json: trial " + std::to_string(t.id) + " has no value for " +
                    p.path);
  }
  if (g_lockFd < 0) g_lockFd = lockSweepFolder(sweepDir);
  // The trials of a sweep that was killed have ended now (the lock waited for them): one that
  // ended at a rung is judged there before it goes on, as it would have been.
  bool changed = false;
  for (auto& t : m_state.trials) {
    if (t.status != TrialStatus::Running) continue;
    t.runDir = findRunDir(t);
    pauseAtReachedRung(t, readScores(t), m_spec);
    changed = changed || t.status != TrialStatus::Running;
  }
  if (changed) save();
}

SweepRunner::~SweepRunner() {
  for (auto& p : m_running) {
    ::kill(p.pid, SIGTERM);
    int status = 0;
    ::waitpid(p.pid, &status, 0);
  }
  if (g_lockFd >= 0) {
    ::close(g_lockFd);
    g_lockFd = -1;
  }
}

Json SweepRunner::trialProjectJson(std::int64_t id) const {
  const auto& t = m_state.trials.at(static_cast<std::size_t>(id));
  auto project = applyAssignment(m_base, t.params);
  project.extra.erase("sweep");
  project.name = m_base.name + "-" + fs::path(trialFolderName(id)).filename().string();
  return project::projectToJson(project);
}

void SweepRunner::save() {
  saveSweepState(m_dir, m_state);
}

std::string SweepRunner::findRunDir(const Trial& trial) const {
  const fs::path trialDir = fs::path(m_dir) / trialFolderName(trial.id);
  std::string best;
  std::error_code ec;
  for (fs::directory_iterator it(trialDir, ec), end; !ec && it != end; it.increment(ec)) {
    // A link is not a run of this trial (it would send the trial's writes elsewhere).
    if (run_layout::isRunFolder(it->path().string())) {
      const std::string name = it->path().filename().string();
      if (name > best) best = name;
    }
  }
  return best.empty() ? std::string() : (fs::path(trialFolderName(trial.id)) / best).string();
}

std::map<std::int64_t, double> SweepRunner::readScores(const Trial& trial) {
  if (trial.runDir.empty()) {
    m_runReaders.erase(trial.id);
    return {};
  }
  // Polled every second while a trial runs: only what was appended since the last poll is read
  // (at most 1 GiB a poll; a longer backlog is read on the next polls).
  const std::string dir = (fs::path(m_dir) / trial.runDir).string();
  auto it = m_runReaders.find(trial.id);
  if (it == m_runReaders.end() || it->second.dir() != dir)
    it = m_runReaders.insert_or_assign(trial.id, run::RunRecordReader(dir)).first;
  it->second.update(std::uint64_t(1) << 30);
  std::map<std::int64_t, double> scores;
  for (const Json& ev : it->second.record().epochEvents) {
    if (!ev.contains("epoch") || !ev["epoch"].is_number_integer()) continue;
    // epoch_end's "epoch" counts from 0; scores are kept by epochs done.
    scores[ev["epoch"].get<std::int64_t>() + 1] = objectiveFromEpochEvent(ev, m_spec.objective);
  }
  return scores;
}

void SweepRunner::reportNewEpochs(Trial& trial, const SweepListener& listener) {
  if (trial.runDir.empty()) trial.runDir = findRunDir(trial);
  auto& reported = m_epochsReported[trial.id];
  const auto scores = readScores(trial);
  if (!scores.empty() && scores.rbegin()->first > reported &&
      trial.status == TrialStatus::Running) {
    // The record follows a running trial epoch by epoch (the studio's table reads it).
    takeScores(trial, scores);
    save();
  }
  for (const auto& [epoch, value] : scores) {
    if (epoch <= reported) continue;
    reported = epoch;
    if (!listener) continue;
    SweepEvent e;
    e.type = SweepEventType::Epoch;
    e.trial = trial.id;
    e.epoch = epoch;
    e.epochs = trial.maxEpochs;
    e.objective = m_spec.objective;
    e.value = value;
    listener(e);
  }
}

void SweepRunner::startSegment(Trial& trial, const SweepListener& listener) {
  const fs::path trialDir = fs::path(m_dir) / trialFolderName(trial.id);
  std::error_code ec;
  // A sweep folder from elsewhere: the trial's files stay inside it (no folder links).
  makeRealFolder((fs::path(m_dir) / "trials").string());
  makeRealFolder(trialDir.string());
  // Written again at every segment: what runs is always the base with the trial's settings,
  // whatever a folder from elsewhere holds.
  const fs::path projectPath = trialDir / "project.netsmith.json";
  const Json trialProject = trialProjectJson(trial.id);
  // Trials at once times each trial's processes, bounded by the machine.
  const Json processes =
      trialProject.value("train", Json::object()).value("local_processes", Json(1));
  const std::int64_t perTrial = processes.is_number_integer() ? processes.get<std::int64_t>() : 1;
  const std::int64_t atOnce =
      std::max<std::int64_t>(1, std::min<std::int64_t>(m_state.parallel, plannedTrials(m_spec)));
  if (atOnce * std::max<std::int64_t>(1, perTrial) > env::maxProcesses()) {
    throw Error("sweep: " + std::to_string(atOnce) + " trials at once, each with " +
                "train.local_processes " + std::to_string(perTrial) + ", would start " +
                std::to_string(atOnce * perTrial) + " training processes: more than the " +
                env::describeMaxProcesses() + "; lower --parallel or train.local_processes");
  }
  writeFileAtomically(projectPath.string(), trialProject.dump(2) + "\n");
  // Where the trial stands on disk: its run folder and its last checkpoint, if any.
  trial.runDir = findRunDir(trial);
  std::string resume;
  if (!trial.runDir.empty()) {
    const fs::path ckpt =
        run_layout::checkpointIn((fs::path(m_dir) / trial.runDir).string(), run_layout::kLast);
    if (fs::exists(ckpt)) {
      resume = ckpt.string();
    } else {  // killed before its first checkpoint: start it again
      fs::remove_all(fs::path(m_dir) / trial.runDir, ec);
      trial.runDir.clear();
    }
  }
  takeScores(trial, readScores(trial));
  m_epochsReported[trial.id] = trial.epochsDone;
  const std::int64_t stopAt = segmentStop(trial, m_spec);
  const std::string threads = std::to_string(m_state.threadsPerTrial);
  SpawnSpec spawn;
  spawn.program = m_options.program;
  spawn.args = {"train", projectPath.string(), "--json",    "--no-test",
                "--out", trialDir.string(),    "--threads", threads};
  spawn.args.insert(spawn.args.end(), m_state.trainArgs.begin(), m_state.trainArgs.end());
  // The segment that trains to the end measures the model deployed, when the sweep asks.
  if (m_spec.deployBench && (stopAt <= 0 || stopAt >= trial.maxEpochs))
    spawn.args.push_back("--deploy-bench");
  if (stopAt > 0) {
    spawn.args.push_back("--stop-at-epoch");
    spawn.args.push_back(std::to_string(stopAt));
  }
  if (!resume.empty()) {
    spawn.args.push_back("--resume");
    spawn.args.push_back(resume);
  }
  // OpenBLAS holds itself to one thread in each trial (env::configureThreads).
  spawn.env = {"OMP_NUM_THREADS=" + threads};
  spawn.stdoutPath = (trialDir / "stdout.jsonl").string();
  spawn.stderrPath = (trialDir / "stderr.log").string();
  spawn.what = "trial " + std::to_string(trial.id);
  Process p;
  p.trial = trial.id;
  p.stopAt = stopAt;
  p.started = nowSeconds();
  p.pid = spawnChild(spawn);
  m_running.push_back(p);
  trial.status = TrialStatus::Running;
  trial.segmentStarted = wallSeconds();
  ++trial.segments;
  save();
  if (!listener) return;
  SweepEvent e;
  e.type = SweepEventType::TrialStarted;
  e.trial = trial.id;
  e.params = assignmentJson(trial.params);
  e.resumed = !resume.empty();
  e.fromEpoch = trial.epochsDone;
  e.stopAtEpoch = stopAt > 0 ? stopAt : trial.maxEpochs;
  e.epochs = trial.maxEpochs;
  e.folder = trialFolderName(trial.id);
  listener(e);
}

void SweepRunner::finishSegment(Process& p, int status, const SweepListener& listener) {
  auto& trial = m_state.trials.at(static_cast<std::size_t>(p.trial));
  trial.seconds += nowSeconds() - p.started;
  trial.segmentStarted = 0;
  trial.runDir = findRunDir(trial);
  reportNewEpochs(trial, listener);
  SegmentEnd end = SegmentEnd::Failed;
  // Stopped by SIGINT/SIGTERM after writing a checkpoint.
  const bool stoppedBySignal = (WIFEXITED(status) && WEXITSTATUS(status) == kExitInterrupted) ||
                               (WIFSIGNALED(status) && p.signalled);
  if (exitedWell(status))
    end = SegmentEnd::Exited;
  else if (stoppedBySignal || p.signalled)
    end = SegmentEnd::Interrupted;
  std::string error;
  if (end == SegmentEnd::Failed) {
    const auto own =
        failureText((fs::path(m_dir) / trialFolderName(trial.id) / "stderr.log").string());
    error = (own.empty() ? "" : own + " ") + "(" + describeWaitStatus(status) + ")";
  }
  endSegment(trial, readScores(trial), end, p.stopAt, error);
  // What its model costs deployed, which its last segment measured (train --deploy-bench).
  if (m_spec.deployBench && trial.status == TrialStatus::Completed && !trial.runDir.empty()) {
    const Json deploy = run::readDeployRecord((fs::path(m_dir) / trial.runDir).string());
    trial.latencyMs = run::deployLatencyMs(deploy);
    trial.fileBytes = run::deployBytes(deploy);
  }
  save();
  if (listener && trial.ended()) listener(trialEnded(trial));
}

void SweepRunner::reportSweepStarted(const SweepListener& listener) const {
  if (!listener) return;
  SweepEvent e;
  e.folder = m_dir;
  e.name = m_state.name;
  e.plannedTrials = plannedTrials(m_spec);
  e.trials = static_cast<std::int64_t>(m_state.trials.size());
  e.parallel = m_state.parallel;
  e.threadsPerTrial = m_state.threadsPerTrial;
  listener(e);
}

void SweepRunner::reportSweepEnded(const char* how, const SweepListener& listener) const {
  const Trial* best = bestTrial(m_state, m_spec);
  if (listener) {
    SweepEvent e;
    e.type = SweepEventType::SweepEnded;
    e.state = how;
    e.folder = m_dir;
    e.best = best ? trialJson(*best) : Json();
    e.elapsedSeconds = m_state.elapsedSeconds;
    listener(e);
  }
}

void SweepRunner::finishEndedTrials(const SweepListener& listener) {
  for (std::size_t i = 0; i < m_running.size();) {
    int status = 0;
    if (::waitpid(m_running[i].pid, &status, WNOHANG) == m_running[i].pid) {
      Process p = m_running[i];
      m_running.erase(m_running.begin() + static_cast<std::ptrdiff_t>(i));
      finishSegment(p, status, listener);
    } else {
      ++i;
    }
  }
}

void SweepRunner::stopTrialsWhenAsked(const std::atomic<bool>* interrupt) {
  const bool overBudget = m_spec.maxSeconds > 0 && m_state.elapsedSeconds >= m_spec.maxSeconds;
  if ((interrupt && interrupt->load() && !m_interrupting) || (overBudget && !m_budgetSpent)) {
    if (overBudget)
      m_budgetSpent = true;
    else
      m_interrupting = true;
    for (auto& p : m_running) {
      ::kill(p.pid, SIGTERM);  // each trial writes a checkpoint and exits
      p.signalled = true;
    }
  }
}

bool SweepRunner::judgeRungs(const SweepListener& listener) {
  bool judged = false;
  for (const auto& d : decideRungs(m_state, m_spec)) {
    judged = true;
    if (listener) {
      SweepEvent e;
      e.type = SweepEventType::Rung;
      e.trial = d.trial;
      e.epoch = d.rung;
      e.continues = d.continues;
      e.score = d.score;
      e.cutoff = d.cutoff;
      e.compared = d.compared;
      listener(e);
    }
    const auto& t = m_state.trials.at(static_cast<std::size_t>(d.trial));
    if (!d.continues && listener) listener(trialEnded(t));
  }
  return judged;
}

void SweepRunner::endWaitingTrials() {
  std::vector<std::int64_t> underWay;
  for (const auto& p : m_running)
    underWay.push_back(p.trial);
  const auto before = sweepStateToJson(m_state);
  stopWaitingTrials(m_state, underWay,
                    "the sweep's time budget of " +
                        std::to_string(static_cast<long long>(m_spec.maxSeconds / 60)) +
                        " min ran out");
  if (sweepStateToJson(m_state) != before) save();
}

Trial* SweepRunner::trialToResume() {
  for (auto& t : m_state.trials) {
    const bool underWay = std::any_of(m_running.begin(), m_running.end(),
                                      [&](const Process& p) { return p.trial == t.id; });
    if (t.status == TrialStatus::Running && !underWay) return &t;
  }
  return nullptr;
}

Trial* SweepRunner::addNextTrial() {
  Assignment settings;
  if (!nextTrialSettings(m_state, m_spec, settings)) return nullptr;
  Trial t;
  t.id = static_cast<std::int64_t>(m_state.trials.size());
  t.params = settings;
  m_state.trials.push_back(t);
  const Json project = trialProjectJson(t.id);
  const Json train = project.value("train", Json::object());
  m_state.trials.back().maxEpochs =
      train.is_object() && train.contains("epochs") && train["epochs"].is_number_integer()
          ? std::max<std::int64_t>(1, train["epochs"].get<std::int64_t>())
          : train::TrainOptions{}.epochs;
  return &m_state.trials.back();
}

bool SweepRunner::startTrials(const SweepListener& listener) {
  bool started = false;
  while (!m_budgetSpent && static_cast<std::int64_t>(m_running.size()) < m_state.parallel) {
    Trial* ready = trialToResume();
    if (!ready) ready = addNextTrial();
    if (!ready) break;
    startSegment(*ready, listener);
    started = true;
  }
  return started;
}

bool SweepRunner::run(const SweepListener& listener, const std::atomic<bool>* interrupt) {
  const double start = nowSeconds();
  const double elapsedBefore = m_state.elapsedSeconds;
  double lastTail = start;
  reportSweepStarted(listener);
  if (m_state.finished) {
    reportSweepEnded("finished", listener);
    return true;
  }
  for (;;) {
    const double now = nowSeconds();
    m_state.elapsedSeconds = elapsedBefore + (now - start);
    // Trials whose process ended.
    finishEndedTrials(listener);
    if (now - lastTail >= 1.0) {
      lastTail = now;
      for (const auto& p : m_running)
        reportNewEpochs(m_state.trials.at(static_cast<std::size_t>(p.trial)), listener);
    }
    stopTrialsWhenAsked(interrupt);
    if (m_interrupting) {
      if (m_running.empty()) {
        save();
        reportSweepEnded("interrupted", listener);
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    bool progressed = judgeRungs(listener);
    if (progressed) save();
    if (m_budgetSpent) endWaitingTrials();
    if (startTrials(listener)) progressed = true;
    if (m_running.empty()) {
      if (sweepDone(m_state, m_spec, m_budgetSpent)) {
        m_state.finished = true;
        save();
        reportSweepEnded("finished", listener);
        return true;
      }
      if (!progressed)
        throw Error(m_dir +
                    "/sweep.json: the sweep cannot go on (no trial can start or be "
                    "judged); its record may have been edited");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace netsmith::experiment
