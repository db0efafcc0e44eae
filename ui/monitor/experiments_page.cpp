#include "monitor/experiments_page.h"

#include <QDateTime>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QGridLayout>
#include <QGroupBox>
#include <QKeySequence>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QUndoStack>
#include <QVBoxLayout>

#include "common/exit_codes.h"
#include "experiment/samplers.h"
#include "experiment/sweep_schedule.h"
#include "monitor/dashboard.h"
#include "monitor/sweep_charts.h"
#include "monitor/sweep_form.h"
#include "monitor/sweep_launcher.h"
#include "monitor/sweep_text.h"
#include "monitor/sweep_trials_table.h"
#include "session/project_document.h"

namespace netsmith::ui {

ExperimentsPage::ExperimentsPage(ProjectDocument* document, Dashboard* dashboard, QWidget* parent)
    : QWidget(parent),
      m_document(document),
      m_dashboard(dashboard),
      m_launcher(new SweepLauncher(document, this)),
      m_sweep(new SweepFollower(document, this)),
      m_form(new SweepForm(document, this)),
      m_run(new QPushButton(tr("Run sweep"), this)),
      m_stop(new QPushButton(tr("Stop"), this)),
      m_open(new QPushButton(tr("Open / resume..."), this)),
      m_applyBest(new QPushButton(tr("Apply best to project"), this)),
      m_status(new QLabel(this)),
      m_table(new SweepTrialsTable(this)),
      m_charts(new SweepCharts(m_sweep, this)),
      m_log(new QPlainTextEdit(this)) {
  setObjectName(QStringLiteral("experimentsPage"));
  setupRunWidgets();

  QWidget* scroll = buildDefinitionPanel();
  QWidget* results = buildResultsPanel();
  auto* split = new QSplitter(Qt::Horizontal, this);
  split->addWidget(scroll);
  split->addWidget(results);
  split->setStretchFactor(1, 1);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(split);

  connectSweep();
  connectRunButtons();
  connectDocument();
  updateRunButton();
  m_stop->setEnabled(false);
  m_applyBest->setEnabled(false);
}

ExperimentsPage::~ExperimentsPage() {
  m_launcher->disconnect(this);
  delete m_launcher;  // stops a running sweep, then removes its snapshot
  m_launcher = nullptr;
}

void ExperimentsPage::setupRunWidgets() {
  m_run->setObjectName(QStringLiteral("sweepRun"));
  m_run->setShortcut(QKeySequence(QStringLiteral("Ctrl+Shift+E")));
  m_run->setToolTip(tr("Run the sweep: each trial trains in its own process (Ctrl+Shift+E)"));
  m_stop->setObjectName(QStringLiteral("sweepStop"));
  m_stop->setToolTip(tr("Stop: running trials write a checkpoint; Open / resume goes on"));
  m_applyBest->setObjectName(QStringLiteral("sweepApplyBest"));
  m_applyBest->setToolTip(
      tr("Set the best trial's settings in the project (Edit > Undo "
         "takes them back)"));
  m_status->setObjectName(QStringLiteral("sweepStatus"));
  m_status->setWordWrap(true);
  m_log->setObjectName(QStringLiteral("sweepLog"));
  m_log->setReadOnly(true);
  m_log->setMaximumBlockCount(2000);
  m_log->setMaximumHeight(120);
}

QWidget* ExperimentsPage::buildDefinitionPanel() {
  // The definition, left.
  auto* definition = new QGroupBox(tr("Sweep"), this);
  auto* dl = new QVBoxLayout(definition);
  dl->addWidget(m_form);
  auto* buttons = new QGridLayout;
  buttons->addWidget(m_run, 0, 0);
  buttons->addWidget(m_stop, 0, 1);
  buttons->addWidget(m_open, 1, 0);
  buttons->addWidget(m_applyBest, 1, 1);
  dl->addLayout(buttons);
  dl->addWidget(m_status);
  dl->addWidget(m_log, 1);
  auto* scroll = new QScrollArea(this);
  scroll->setWidget(definition);
  scroll->setWidgetResizable(true);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  scroll->setMinimumWidth(340);
  return scroll;
}

QWidget* ExperimentsPage::buildResultsPanel() {
  // The results, right.
  auto* results = new QSplitter(Qt::Vertical, this);
  results->addWidget(m_table);
  results->addWidget(m_charts);
  return results;
}

void ExperimentsPage::connectSweep() {
  connect(m_launcher, &SweepLauncher::eventArrived, this, &ExperimentsPage::onSweepEvent);
  connect(m_launcher, &SweepLauncher::textArrived, this, &ExperimentsPage::say);
  connect(m_launcher, &SweepLauncher::finished, this, &ExperimentsPage::onSweepFinished);
  connect(m_sweep, &SweepFollower::unreadable, this, [this](const QString& reason) {
    m_status->setText(tr("Cannot read the sweep: %1").arg(reason));
  });
  connect(m_sweep, &SweepFollower::opened, this, [this] {
    if (m_sweep->live() && !isRunning()) m_sweep->startPolling();
    showSweep();
  });
  connect(m_sweep, &SweepFollower::polled, this, &ExperimentsPage::onPolled);
  connect(m_sweep, &SweepFollower::settled, this, [this] {
    if (m_endCode >= 0) reportEnd();
  });
}

void ExperimentsPage::connectRunButtons() {
  connect(m_run, &QPushButton::clicked, this, [this] { runSweep(); });
  connect(m_stop, &QPushButton::clicked, this, [this] { stopSweep(); });
  connect(m_open, &QPushButton::clicked, this, [this] {
    const QString base = QFileInfo(m_document->filePath()).absoluteDir().filePath("sweeps");
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Open a sweep folder"), base);
    if (dir.isEmpty() || !openSweep(dir)) return;
    if (!m_sweep->state().finished) resumeSweep(dir);
  });
  connect(m_applyBest, &QPushButton::clicked, this, [this] { applyBest(); });
}

void ExperimentsPage::connectDocument() {
  // Run follows every change of the project's problems, not only of the sweep section.
  connect(m_form, &SweepForm::refreshed, this, &ExperimentsPage::updateRunButton);
  connect(m_document, &ProjectDocument::modelChanged, this, &ExperimentsPage::updateRunButton);
  connect(m_document, &ProjectDocument::problemsChanged, this, &ExperimentsPage::updateRunButton);
  connect(m_document, &ProjectDocument::sectionChanged, this, &ExperimentsPage::updateRunButton);
  // A project opened again shows its last sweep (read only: Open resumes an unfinished one).
  connect(m_document, &ProjectDocument::loaded, this, [this] {
    if (isRunning()) return;  // the window refuses another project while a sweep runs
    forget();
    if (const QString dir = latestSweepDir(); !dir.isEmpty()) openSweep(dir);
  });
}

void ExperimentsPage::say(const QString& text) {
  m_log->appendPlainText(text);
}

QString ExperimentsPage::statusText() const {
  return m_status->text();
}

bool ExperimentsPage::isRunning() const {
  return m_launcher->isRunning();
}

void ExperimentsPage::setCliProgram(const QString& program) {
  m_launcher->setProgram(program);
}

void ExperimentsPage::setSampleLimits(qint64 train, qint64 validation) {
  m_launcher->setSampleLimits(train, validation);
}

QTableWidget* ExperimentsPage::trialsTable() const {
  return m_table;
}

QCustomPlot* ExperimentsPage::parallelPlot() const {
  return m_charts->parallelPlot();
}

QCustomPlot* ExperimentsPage::scatterPlot() const {
  return m_charts->scatterPlot();
}

bool ExperimentsPage::sweepLive() const {
  return isRunning() || m_sweep->live();
}

void ExperimentsPage::updateRunButton() {
  // As Start: the trials train this project, so its problems (model, data, training) stop it
  // too, and the button says which.
  const Json& extra = m_document->project().extra;
  const bool hasParams = extra.contains("sweep") && extra["sweep"].is_object() &&
                         extra["sweep"].contains("params") && extra["sweep"]["params"].is_array() &&
                         !extra["sweep"]["params"].empty();
  const auto& problems = m_document->problems();
  m_run->setEnabled(!isRunning() && hasParams && !m_form->hasProblems() && problems.empty());
  m_run->setToolTip(problems.empty()
                        ? tr("Run the sweep: each trial trains a copy of the project")
                        : tr("The project has problems: %1")
                              .arg(QString::fromStdString(problems.front().toString())));
}

bool ExperimentsPage::runSweep() {
  if (isRunning()) return false;
  QString error;
  const QStringList args = m_launcher->runArguments(&error);
  if (args.isEmpty()) {
    m_status->setText(error);
    return false;
  }
  return start(args);
}

bool ExperimentsPage::resumeSweep(const QString& dir) {
  if (isRunning()) return false;
  return start(
      {QStringLiteral("sweep"), QStringLiteral("--resume"), dir, QStringLiteral("--json")});
}

bool ExperimentsPage::start(const QStringList& args) {
  if (!m_launcher->hasProgram()) {
    m_status->setText(
        tr("netsmith-cli was not found beside the studio or on PATH; sweeps run "
           "their trials with it."));
    return false;
  }
  if (m_endCode >= 0) reportEnd();  // the last sweep's end is told before this one starts
  const bool resume = args.size() > 2 && args[1] == QLatin1String("--resume");
  m_sweep->expect(resume ? args[2] : QString());
  m_log->clear();
  say(QStringLiteral("$ netsmith-cli ") + args.join(QLatin1Char(' ')));
  QString error;
  if (!m_launcher->start(args, &error)) {
    m_status->setText(error);
    return false;
  }
  m_run->setEnabled(false);
  m_stop->setEnabled(true);
  m_status->setText(tr("Starting the sweep..."));
  m_sweep->startPolling();
  emit sweepStarted();
  return true;
}

void ExperimentsPage::stopSweep() {
  if (!isRunning()) return;
  say(tr("Stopping: the running trials write checkpoints..."));
  m_launcher->stop();
}

void ExperimentsPage::onSweepEvent(const experiment::SweepEvent& e) {
  using experiment::SweepEventType;
  const QString trial = tr("trial %1").arg(e.trial);
  switch (e.type) {
    case SweepEventType::SweepStarted:
      m_sweep->setDir(QString::fromStdString(e.folder));
      say(tr("sweep folder %1").arg(m_sweep->dir()));
      break;
    case SweepEventType::TrialStarted:
      say(tr("%1 %2 (epochs %3-%4)")
              .arg(trial, e.resumed ? tr("resumed") : tr("started"))
              .arg(e.fromEpoch + 1)
              .arg(e.stopAtEpoch));
      break;
    case SweepEventType::Rung:
      say(tr("%1 at the epoch-%2 rung: %3")
              .arg(trial)
              .arg(e.epoch)
              .arg(e.continues ? tr("goes on") : tr("stopped")));
      break;
    case SweepEventType::TrialEnded:
      say(tr("%1 %2%3").arg(
          trial, QString::fromStdString(e.status),
          e.reason.empty() ? QString() : QStringLiteral(": ") + QString::fromStdString(e.reason)));
      break;
    case SweepEventType::Epoch:
    case SweepEventType::SweepEnded:
      break;
  }
  if (e.type != SweepEventType::Epoch) m_sweep->poll(true);
}

void ExperimentsPage::onSweepFinished(int code) {
  m_sweep->stopPolling();
  m_endCode = code;
  // The end is told once the record as the sweep left it is shown.
  if (!m_sweep->poll(true)) reportEnd();
}

void ExperimentsPage::reportEnd() {
  const int code = m_endCode;
  m_endCode = -1;
  m_stop->setEnabled(false);
  m_form->refresh();
  const bool finished = code == kExitOk && m_sweep->state().finished;
  m_status->setText(finished ? tr("Sweep finished: %1").arg(m_status->text())
                    : code == kExitInterrupted
                        ? tr("Sweep stopped: %1. Open / resume goes on from its checkpoints.")
                              .arg(m_status->text())
                        : tr("The sweep ended with status %1 (see the log below).").arg(code));
  emit sweepEnded(finished);
}

QString ExperimentsPage::latestSweepDir() const {
  const Json& extra = m_document->project().extra;
  if (m_document->filePath().isEmpty() || !extra.contains("sweep") || !extra["sweep"].is_object())
    return {};
  const Json& sweep = extra["sweep"];
  const QString name =
      sweep.contains("name") && sweep["name"].is_string()
          ? QString::fromStdString(sweep["name"].get<std::string>())
          : QString::fromStdString(m_document->project().name) + QStringLiteral("-sweep");
  // sweeps/<name>-<time>: the newest record of this sweep (a real folder and file, no links).
  const QDir sweeps(QFileInfo(m_document->filePath()).absoluteDir().filePath("sweeps"));
  QString best;
  QDateTime newest;
  for (const QFileInfo& folder :
       sweeps.entryInfoList({name + QStringLiteral("-*")}, QDir::Dirs | QDir::NoDotAndDotDot)) {
    const QFileInfo record(QDir(folder.absoluteFilePath()).filePath("sweep.json"));
    if (folder.isSymLink() || !record.isFile() || record.isSymLink()) continue;
    if (best.isEmpty() || record.lastModified() > newest) {
      best = folder.absoluteFilePath();
      newest = record.lastModified();
    }
  }
  return best;
}

void ExperimentsPage::forget() {
  m_sweep->forget();
  m_endCode = -1;
  if (m_dashboard)
    for (const auto& name : m_overlaid)
      m_dashboard->removeOverlay(name);
  m_overlaid.clear();
  m_log->clear();
  m_status->clear();
  showSweep();
  m_applyBest->setEnabled(false);
}

bool ExperimentsPage::openSweep(const QString& dir) {
  return m_sweep->open(dir);
}

void ExperimentsPage::onPolled(bool changed, const SweepFollower::TrialHistories& runs) {
  // A sweep opened from elsewhere is followed while a process runs it.
  if (!m_sweep->live() && !isRunning() && m_endCode < 0) m_sweep->stopPolling();
  if (changed) {
    showSweep();
    if (m_dashboard) {
      for (const auto& name : m_overlaid)
        m_dashboard->removeOverlay(name);
      m_overlaid.clear();
      for (const auto& [id, run] : runs) {
        m_dashboard->addOverlay(run);
        m_overlaid << run.name;
      }
    }
  } else if (m_sweep->live()) {
    m_table->showTrialTimes(m_sweep->state(), sweepLive());
  }
}

void ExperimentsPage::showSweep() {
  const auto& state = m_sweep->state();
  const auto& spec = m_sweep->spec();
  const bool live = sweepLive();
  m_table->showTrials(state, spec, live);
  const auto* best = experiment::bestTrial(state, spec);
  m_applyBest->setEnabled(best != nullptr);
  m_status->setText(summaryText(best, live));
  m_charts->redraw();
}

QString ExperimentsPage::summaryText(const experiment::Trial* best, bool live) const {
  const auto& state = m_sweep->state();
  const auto& spec = m_sweep->spec();
  std::int64_t epochs = 0;
  int counts[5] = {0, 0, 0, 0, 0};
  for (const auto& t : state.trials) {
    epochs += t.epochsDone;
    ++counts[int(t.status)];
  }
  // A halted sweep's running trials were interrupted; its paused ones wait at a rung, as the
  // table shows them. A live sweep counts both as running.
  const bool halted = !live && !state.finished;
  const int running = counts[int(experiment::TrialStatus::Running)];
  const int paused = counts[int(experiment::TrialStatus::Paused)];
  const QString underWay = halted ? tr("%1 interrupted, %2 paused").arg(running).arg(paused)
                                  : tr("%1 running").arg(running + paused);
  QString text = tr("%1 of %2 trials: %3, %4 completed, %5 stopped early, %6 failed; "
                    "%7 epochs trained")
                     .arg(state.trials.size())
                     .arg(experiment::plannedTrials(spec))
                     .arg(underWay)
                     .arg(counts[int(experiment::TrialStatus::Completed)])
                     .arg(counts[int(experiment::TrialStatus::Stopped)])
                     .arg(counts[int(experiment::TrialStatus::Failed)])
                     .arg(epochs);
  if (best)
    text += tr(". Best: trial %1, %2 %3")
                .arg(best->id)
                .arg(QString::fromStdString(spec.objective))
                .arg(objectiveText(best->objective(), spec.objective));
  return text;
}

bool ExperimentsPage::applyBest() {
  const auto& spec = m_sweep->spec();
  const auto* best = m_sweep->hasSpec() ? experiment::bestTrial(m_sweep->state(), spec) : nullptr;
  if (!best) {
    m_status->setText(tr("No trial has a score yet."));
    return false;
  }
  project::Project next;
  try {
    next = experiment::applyAssignment(m_document->project(), best->params);
  } catch (const Error& e) {
    m_status->setText(
        tr("Cannot apply trial %1: %2").arg(best->id).arg(QString::fromUtf8(e.what())));
    return false;
  }
  const auto& now = m_document->project();
  auto* undo = m_document->undoStack();
  undo->beginMacro(tr("Apply best trial %1").arg(best->id));
  if (next.train != now.train) m_document->editSection(QStringLiteral("train"), next.train, {});
  if (next.augment != now.augment)
    m_document->editSection(QStringLiteral("augment"), next.augment, {});
  if (project::projectToJson(next)["model"] != project::projectToJson(now)["model"])
    m_document->editModel(next.model, tr("Apply best trial %1").arg(best->id));
  undo->endMacro();
  m_status->setText(tr("Applied trial %1's settings (%2 %3). Edit > Undo takes them back.")
                        .arg(best->id)
                        .arg(QString::fromStdString(spec.objective))
                        .arg(objectiveText(best->objective(), spec.objective)));
  return true;
}

}  // namespace netsmith::ui
