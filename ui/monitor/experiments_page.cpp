#include "monitor/experiments_page.h"

#include <qcustomplot.h>

#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTimer>
#include <QUndoStack>
#include <QVBoxLayout>
#include <algorithm>

#include "common/exit_codes.h"
#include "experiment/samplers.h"
#include "experiment/sweep_schedule.h"
#include "monitor/dashboard.h"
#include "monitor/run_history.h"
#include "run/run_layout.h"
#include "session/project_document.h"
#include "session/sweep_session.h"
#include "util/background_job.h"
#include "util/chart_fit.h"
#include "util/theme_colors.h"

namespace netsmith::ui {

/// What a poll of a sweep folder read, handed from the worker to the page.
struct SweepPoll {
  bool changed = false;  ///< false: nothing moved since the last poll (nothing else is set)
  QString seen;          ///< the signature the state was read at
  experiment::SweepState state;
  std::map<std::int64_t, run::RunRecordReader> readers;   ///< the running trials, followed
  std::vector<std::pair<std::int64_t, RunHistory>> runs;  ///< the readable ones, by trial
  std::uint64_t generation = 0;  ///< the page's m_pollGeneration when the poll started
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

namespace {

QString defaultCli() {
  const QString beside =
      QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("netsmith-cli"));
  if (QFileInfo(beside).isExecutable()) return beside;
  return QStandardPaths::findExecutable(QStringLiteral("netsmith-cli"));
}

QString rangeText(const Json& p) {
  for (const char* k : {"log_uniform", "uniform", "int_uniform"})
    if (p.contains(k) && p[k].is_array() && p[k].size() == 2)
      return QStringLiteral("%1 %2 .. %3")
          .arg(QString::fromLatin1(k), QString::fromStdString(p[k][0].dump()),
               QString::fromStdString(p[k][1].dump()));
  if (p.contains("choice"))
    return QStringLiteral("choice ") + QString::fromStdString(p["choice"].dump());
  return QStringLiteral("?");
}

}  // namespace

ExperimentsPage::ExperimentsPage(ProjectDocument* document, Dashboard* dashboard, QWidget* parent)
    : QWidget(parent),
      m_document(document),
      m_dashboard(dashboard),
      m_cli(defaultCli()),
      m_method(new QComboBox(this)),
      m_trials(new QSpinBox(this)),
      m_parallelTrials(new QSpinBox(this)),
      m_objective(new QComboBox(this)),
      m_asha(new QCheckBox(tr("stop poor trials early (ASHA)"), this)),
      m_minEpochs(new QSpinBox(this)),
      m_reduction(new QSpinBox(this)),
      m_params(new QTableWidget(0, 2, this)),
      m_removeParam(new QPushButton(tr("Remove"), this)),
      m_problems(new QLabel(this)),
      m_run(new QPushButton(tr("Run sweep"), this)),
      m_stop(new QPushButton(tr("Stop"), this)),
      m_open(new QPushButton(tr("Open / resume..."), this)),
      m_applyBest(new QPushButton(tr("Apply best to project"), this)),
      m_status(new QLabel(this)),
      m_table(new QTableWidget(this)),
      m_parallel(new QCustomPlot(this)),
      m_scatter(new QCustomPlot(this)),
      m_scatterParam(new QComboBox(this)),
      m_log(new QPlainTextEdit(this)),
      m_poll(new QTimer(this)),
      m_pollJob(new BackgroundJob(this)) {
  m_session = new SweepSession(this);
  connect(m_session, &SweepSession::eventArrived, this, &ExperimentsPage::onSweepEvent);
  connect(m_session, &SweepSession::textArrived, this, &ExperimentsPage::say);
  connect(m_session, &SweepSession::finished, this, &ExperimentsPage::onSweepFinished);
  setObjectName(QStringLiteral("experimentsPage"));
  setupSweepFormWidgets();
  setupRunAndResultWidgets();

  QWidget* scroll = buildDefinitionPanel();
  QWidget* results = buildResultsPanel();
  auto* split = new QSplitter(Qt::Horizontal, this);
  split->addWidget(scroll);
  split->addWidget(results);
  split->setStretchFactor(1, 1);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(split);

  connectSweepForm();
  connectRunAndResults();
  connectDocument();
  refreshDefinition();
  m_stop->setEnabled(false);
  m_applyBest->setEnabled(false);
}

void ExperimentsPage::setupSweepFormWidgets() {
  m_method->setObjectName(QStringLiteral("sweepMethod"));
  m_method->addItems({QStringLiteral("random"), QStringLiteral("grid"), QStringLiteral("tpe")});
  m_method->setToolTip(
      tr("random: seeded draws; grid: every combination; tpe: model-based "
         "(learns from the trials so far)"));
  m_trials->setObjectName(QStringLiteral("sweepTrials"));
  m_trials->setRange(1, 100000);
  m_parallelTrials->setObjectName(QStringLiteral("sweepParallel"));
  m_parallelTrials->setRange(1, 64);
  m_parallelTrials->setToolTip(tr("Trials at once; each gets the cores divided by this"));
  m_objective->setObjectName(QStringLiteral("sweepObjective"));
  m_asha->setObjectName(QStringLiteral("sweepAsha"));
  m_minEpochs->setRange(1, 1000);
  m_minEpochs->setPrefix(tr("first rung at epoch "));
  m_reduction->setRange(2, 1000);
  m_reduction->setPrefix(tr("keep 1/"));
  m_params->setObjectName(QStringLiteral("sweepParams"));
  m_params->setHorizontalHeaderLabels({tr("Setting"), tr("Values")});
  m_params->horizontalHeader()->setStretchLastSection(true);
  m_params->verticalHeader()->hide();
  m_params->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_params->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_params->setMaximumHeight(140);
  m_problems->setObjectName(QStringLiteral("sweepProblems"));
  m_problems->setWordWrap(true);
}

void ExperimentsPage::setupRunAndResultWidgets() {
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
  m_table->setObjectName(QStringLiteral("sweepTrialsTable"));
  m_table->verticalHeader()->hide();
  m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_table->setSortingEnabled(true);
  m_parallel->setObjectName(QStringLiteral("sweepParallelCoordinates"));
  m_scatter->setObjectName(QStringLiteral("sweepScatter"));
  for (auto* plot : {m_parallel, m_scatter}) {
    plot->setMinimumSize(200, 180);
    followTheme(plot);
    fitTicksToSize(plot);
  }
  m_scatterParam->setObjectName(QStringLiteral("sweepScatterParam"));
  m_log->setObjectName(QStringLiteral("sweepLog"));
  m_log->setReadOnly(true);
  m_log->setMaximumBlockCount(2000);
  m_log->setMaximumHeight(120);
}

QWidget* ExperimentsPage::buildDefinitionPanel() {
  // The definition, left.
  auto* form = new QFormLayout;
  form->addRow(tr("method"), m_method);
  form->addRow(tr("trials"), m_trials);
  form->addRow(tr("at once"), m_parallelTrials);
  form->addRow(tr("objective"), m_objective);
  form->addRow(m_asha);
  auto* ashaRow = new QHBoxLayout;
  ashaRow->addWidget(m_minEpochs);
  ashaRow->addWidget(m_reduction);
  form->addRow(ashaRow);
  auto* definition = new QGroupBox(tr("Sweep"), this);
  auto* dl = new QVBoxLayout(definition);
  dl->addLayout(form);
  dl->addWidget(new QLabel(tr("Settings swept (right-click a setting's name on the Training, "
                              "Augment or Model page: Sweep this setting):"),
                           definition));
  dl->itemAt(dl->count() - 1)->widget()->setProperty("wordWrap", true);
  dl->addWidget(m_params);
  dl->addWidget(m_removeParam, 0, Qt::AlignLeft);
  dl->addWidget(m_problems);
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
  auto* charts = new QWidget(results);
  auto* cl = new QHBoxLayout(charts);
  cl->setContentsMargins(0, 0, 0, 0);
  cl->addWidget(m_parallel, 3);
  auto* scatterBox = new QWidget(charts);
  auto* sl = new QVBoxLayout(scatterBox);
  sl->setContentsMargins(0, 0, 0, 0);
  sl->addWidget(m_scatterParam);
  sl->addWidget(m_scatter, 1);
  cl->addWidget(scatterBox, 2);
  results->addWidget(charts);
  return results;
}

void ExperimentsPage::connectSweepForm() {
  connect(m_method, &QComboBox::textActivated, this,
          [this](const QString& m) { editSweep("method", m.toStdString(), tr("Sweep method")); });
  connect(m_trials, &QSpinBox::editingFinished, this,
          [this] { editSweep("trials", std::int64_t(m_trials->value()), tr("Sweep trials")); });
  connect(m_parallelTrials, &QSpinBox::editingFinished, this, [this] {
    editSweep("parallel", std::int64_t(m_parallelTrials->value()), tr("Sweep trials at once"));
  });
  connect(m_objective, &QComboBox::textActivated, this, [this](const QString& o) {
    editSweep("objective", o.toStdString(), tr("Sweep objective"));
  });
  const auto ashaValue = [this] {
    return m_asha->isChecked()
               ? Json{{"min_epochs", m_minEpochs->value()}, {"reduction", m_reduction->value()}}
               : Json();
  };
  connect(m_asha, &QCheckBox::toggled, this,
          [this, ashaValue] { editSweep("asha", ashaValue(), tr("Sweep early stopping")); });
  for (auto* s : {m_minEpochs, m_reduction})
    connect(s, &QSpinBox::editingFinished, this,
            [this, ashaValue] { editSweep("asha", ashaValue(), tr("Sweep early stopping")); });
  connect(m_removeParam, &QPushButton::clicked, this, [this] {
    const int row = m_params->currentRow();
    const Json& project = m_document->project().extra;
    if (row < 0 || !project.contains("sweep")) return;
    Json params = project["sweep"].value("params", Json::array());
    if (row >= int(params.size())) return;
    params.erase(params.begin() + row);
    editSweep("params", params, tr("Remove a swept setting"));
  });
}

void ExperimentsPage::connectRunAndResults() {
  connect(m_run, &QPushButton::clicked, this, [this] { runSweep(); });
  connect(m_stop, &QPushButton::clicked, this, [this] { stopSweep(); });
  connect(m_open, &QPushButton::clicked, this, [this] {
    const QString base = QFileInfo(m_document->filePath()).absoluteDir().filePath("sweeps");
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Open a sweep folder"), base);
    if (dir.isEmpty() || !openSweep(dir)) return;
    if (!m_state.finished) resumeSweep(dir);
  });
  connect(m_applyBest, &QPushButton::clicked, this, [this] { applyBest(); });
  connect(m_scatterParam, &QComboBox::currentIndexChanged, this, [this] { drawScatter(); });
  connect(m_poll, &QTimer::timeout, this, [this] { poll(); });
  m_poll->setInterval(1000);
}

void ExperimentsPage::connectDocument() {
  connect(m_document, &ProjectDocument::sectionChanged, this, [this](const QString& section) {
    if (section == QLatin1String("sweep")) refreshDefinition();
  });
  connect(m_document, &ProjectDocument::projectChanged, this, [this] { refreshDefinition(); });
  // Run follows every change of the project's problems, not only of the sweep section.
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

ExperimentsPage::~ExperimentsPage() {
  m_session->disconnect(this);
  delete m_session;  // stops a running sweep before its snapshot goes
  m_session = nullptr;
  dropSnapshot();
}

void ExperimentsPage::say(const QString& text) {
  m_log->appendPlainText(text);
}

QString ExperimentsPage::statusText() const {
  return m_status->text();
}

bool ExperimentsPage::isRunning() const {
  return m_session->isRunning();
}

void ExperimentsPage::refreshDefinition() {
  m_refreshing = true;
  const auto& project = m_document->project();
  const Json sweep = project.extra.contains("sweep") ? project.extra["sweep"] : Json::object();
  const auto text = [&](const char* key, const char* fallback) {
    return QString::fromStdString(sweep.is_object() && sweep.contains(key) && sweep[key].is_string()
                                      ? sweep[key].get<std::string>()
                                      : fallback);
  };
  const auto number = [&](const char* key, int fallback) {
    return sweep.is_object() && sweep.contains(key) && sweep[key].is_number_integer()
               ? sweep[key].get<int>()
               : fallback;
  };
  m_method->setCurrentText(text("method", "random"));
  m_trials->setValue(number("trials", 10));
  m_parallelTrials->setValue(number("parallel", 1));
  // The project's task's figures (its headline first), as the sweep's check knows them.
  const auto* def = m_document->tasks().find(project.task);
  QStringList objectives;
  for (const auto& o : experiment::objectiveChoices(def))
    objectives << QString::fromStdString(o);
  const QString objective =
      text("objective", def ? task::defaultObjective(*def).c_str() : "val_loss");
  if (!objectives.contains(objective)) objectives << objective;  // the check says what is wrong
  m_objective->clear();
  m_objective->addItems(objectives);
  m_objective->setCurrentText(objective);
  const Json asha = sweep.is_object() ? sweep.value("asha", Json()) : Json();
  m_asha->setChecked(asha.is_object());
  const auto ashaNumber = [&](const char* key, int fallback) {
    return asha.is_object() && asha.contains(key) && asha[key].is_number_integer()
               ? int(std::clamp<std::int64_t>(asha[key].get<std::int64_t>(), 1, 1000))
               : fallback;
  };
  m_minEpochs->setValue(ashaNumber("min_epochs", 1));
  m_reduction->setValue(ashaNumber("reduction", 3));
  m_minEpochs->setEnabled(asha.is_object());
  m_reduction->setEnabled(asha.is_object());
  const Json params = sweep.is_object() ? sweep.value("params", Json::array()) : Json::array();
  m_params->setRowCount(0);
  for (const auto& p : params) {
    const int row = m_params->rowCount();
    m_params->insertRow(row);
    const bool named = p.is_object() && p.contains("path") && p["path"].is_string();
    m_params->setItem(
        row, 0,
        new QTableWidgetItem(named ? QString::fromStdString(p["path"].get<std::string>())
                                   : QStringLiteral("?")));
    m_params->setItem(row, 1, new QTableWidgetItem(rangeText(p)));
  }
  m_params->resizeColumnToContents(0);
  // The section's problems as the document read it (an empty section is not checked here).
  const Problems problems =
      sweep.is_object() && !sweep.empty() ? m_document->resolved().sweepProblems : Problems{};
  m_problems->setText(problems.empty() ? QString()
                                       : QString::fromStdString(formatProblems(problems)));
  m_problems->setStyleSheet(problems.empty() ? QString() : errorFieldStyle());
  m_sweepProblems = !problems.empty();
  m_removeParam->setEnabled(!params.empty());
  m_refreshing = false;
  updateRunButton();
}

void ExperimentsPage::updateRunButton() {
  // As Start: the trials train this project, so its problems (model, data, training) stop it
  // too, and the button says which.
  const Json& extra = m_document->project().extra;
  const bool hasParams = extra.contains("sweep") && extra["sweep"].is_object() &&
                         extra["sweep"].contains("params") && extra["sweep"]["params"].is_array() &&
                         !extra["sweep"]["params"].empty();
  const auto& problems = m_document->problems();
  m_run->setEnabled(!isRunning() && hasParams && !m_sweepProblems && problems.empty());
  m_run->setToolTip(problems.empty()
                        ? tr("Run the sweep: each trial trains a copy of the project")
                        : tr("The project has problems: %1")
                              .arg(QString::fromStdString(problems.front().toString())));
}

void ExperimentsPage::editSweep(const char* key, const Json& value, const QString& text) {
  if (m_refreshing) return;
  const auto& extra = m_document->project().extra;
  Json sweep =
      extra.contains("sweep") && extra["sweep"].is_object()
          ? extra["sweep"]
          : Json{{"name", m_document->project().name + "-sweep"}, {"params", Json::array()}};
  if (value.is_null())
    sweep.erase(key);
  else
    sweep[key] = value;
  m_document->editSection(QStringLiteral("sweep"), sweep, text);
}

bool ExperimentsPage::runSweep() {
  if (isRunning()) return false;
  if (m_document->filePath().isEmpty()) {
    m_status->setText(tr("Save the project first: each trial runs a copy of its file."));
    return false;
  }
  // Unsaved edits are swept as they are, from a snapshot beside the project (its relative data
  // paths resolve the same), and stay unsaved in the studio: the sweep never saves for the user.
  QString project = m_document->filePath();
  dropSnapshot();
  if (m_document->isModified()) {
    const QFileInfo file(project);
    const QString snapshot = file.absoluteDir().filePath(
        QStringLiteral(".%1.sweep-snapshot.netsmith.json").arg(file.fileName().section('.', 0, 0)));
    try {
      project::saveProject(m_document->project(), snapshot.toStdString());
    } catch (const std::exception& e) {
      m_status->setText(tr("Could not write the sweep's snapshot of the project: %1")
                            .arg(QString::fromUtf8(e.what())));
      return false;
    }
    m_snapshot = project = snapshot;
  }
  const QString out = QFileInfo(m_document->filePath()).absoluteDir().filePath("sweeps");
  QStringList args = {QStringLiteral("sweep"), project, QStringLiteral("--out"), out,
                      QStringLiteral("--json")};
  if (m_limitTrain > 0) args << QStringLiteral("--limit-train") << QString::number(m_limitTrain);
  if (m_limitValidation > 0)
    args << QStringLiteral("--limit-val") << QString::number(m_limitValidation);
  return start(args);
}

bool ExperimentsPage::resumeSweep(const QString& dir) {
  if (isRunning()) return false;
  return start(
      {QStringLiteral("sweep"), QStringLiteral("--resume"), dir, QStringLiteral("--json")});
}

bool ExperimentsPage::start(const QStringList& args) {
  if (m_cli.isEmpty()) {
    m_status->setText(
        tr("netsmith-cli was not found beside the studio or on PATH; sweeps run "
           "their trials with it."));
    return false;
  }
  if (m_endCode >= 0) reportEnd();  // the last sweep's end is told before this one starts
  m_hasSpec = false;                // read again from the sweep's folder
  ++m_pollGeneration;               // a poll still running reads what was shown before
  if (args.size() > 2 && args[1] == QLatin1String("--resume")) m_dir = args[2];
  m_log->clear();
  say(QStringLiteral("$ netsmith-cli ") + args.join(QLatin1Char(' ')));
  QString error;
  if (!m_session->start(m_cli, args, &error)) {
    dropSnapshot();
    m_status->setText(error);
    return false;
  }
  m_run->setEnabled(false);
  m_stop->setEnabled(true);
  m_status->setText(tr("Starting the sweep..."));
  m_poll->start();
  emit sweepStarted();
  return true;
}

void ExperimentsPage::stopSweep() {
  if (!isRunning()) return;
  say(tr("Stopping: the running trials write checkpoints..."));
  m_session->stop();
}

void ExperimentsPage::onSweepEvent(const experiment::SweepEvent& e) {
  using experiment::SweepEventType;
  const QString trial = tr("trial %1").arg(e.trial);
  switch (e.type) {
    case SweepEventType::SweepStarted:
      m_dir = QString::fromStdString(e.folder);
      ++m_pollGeneration;
      say(tr("sweep folder %1").arg(m_dir));
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
  if (e.type != SweepEventType::Epoch) poll(true);
}

void ExperimentsPage::dropSnapshot() {
  if (m_snapshot.isEmpty()) return;
  QFile::remove(m_snapshot);  // the sweep keeps its own copy (base.netsmith.json)
  m_snapshot.clear();
}

void ExperimentsPage::onSweepFinished(int code) {
  dropSnapshot();
  m_poll->stop();
  m_endCode = code;
  // The end is told once the record as the sweep left it is shown.
  if (!poll(true)) reportEnd();
}

void ExperimentsPage::reportEnd() {
  const int code = m_endCode;
  m_endCode = -1;
  m_stop->setEnabled(false);
  refreshDefinition();
  const bool finished = code == kExitOk && m_state.finished;
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
  m_poll->stop();
  m_pollJob->cancel();
  ++m_pollGeneration;  // a poll still on its way is dropped
  m_pollAgain = false;
  m_endCode = -1;
  m_dir.clear();
  m_state = experiment::SweepState{};
  m_spec = experiment::SweepSpec{};
  m_hasSpec = false;
  m_live = false;
  m_trialRuns.clear();
  m_seen.clear();
  if (m_dashboard)
    for (const auto& name : m_overlaid)
      m_dashboard->removeOverlay(name);
  m_overlaid.clear();
  m_log->clear();
  m_status->clear();
  fillTable();
  drawParallel();
  drawScatter();
  m_applyBest->setEnabled(false);
}

bool ExperimentsPage::openSweep(const QString& dir) {
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
    m_status->setText(tr("Cannot read the sweep: %1").arg(QString::fromUtf8(e.what())));
    return false;
  }
  m_dir = dir;
  ++m_pollGeneration;
  m_live = experiment::sweepInUse(dir.toStdString());
  if (m_live && !isRunning()) m_poll->start();
  fillTable();
  drawParallel();
  drawScatter();
  poll(true);  // the running trials' run folders, on a worker thread
  return true;
}

bool ExperimentsPage::poll(bool force) {
  if (m_dir.isEmpty()) return false;
  if (!m_hasSpec) {
    // sweep.json is replaced atomically: a read sees one whole version.
    if (QFileInfo::exists(QDir(m_dir).filePath("sweep.json"))) openSweep(m_dir);
    return m_pollJob->isRunning();  // openSweep polls what it opened
  }
  if (m_pollJob->isRunning()) {
    m_pollAgain = m_pollAgain || force;
    return true;
  }
  // The followed trials travel to the worker and back with the poll's result.
  auto readers =
      std::make_shared<std::map<std::int64_t, run::RunRecordReader>>(std::move(m_trialRuns));
  m_trialRuns.clear();
  m_pollJob->start(
      [dir = m_dir, seen = force ? QString() : m_seen, state = m_state, readers,
       generation = m_pollGeneration](const JobContext&) {
        auto result = readSweep(dir, seen, state, std::move(*readers));
        result.generation = generation;
        return result;
      },
      [this](SweepPoll result) { showPoll(std::move(result)); },
      [this](const QString&) { afterPoll(); });  // the next poll reads it again
  return true;
}

void ExperimentsPage::afterPoll() {
  if (m_pollAgain) {
    m_pollAgain = false;
    if (poll(true)) return;  // the end waits for that one
  }
  if (m_endCode >= 0) reportEnd();
}

void ExperimentsPage::showPoll(SweepPoll result) {
  if (result.generation != m_pollGeneration) {
    // Read for a sweep shown before: dropped, and the one shown now is read.
    m_pollAgain = true;
    afterPoll();
    return;
  }
  m_trialRuns = std::move(result.readers);
  const bool liveChanged = result.live != m_live;
  m_live = result.live;
  // A sweep opened from elsewhere is followed while a process runs it.
  if (!m_live && !isRunning() && m_endCode < 0) m_poll->stop();
  if (result.changed || liveChanged) {
    m_state = std::move(result.state);
    m_seen = result.seen;
    fillTable();
    drawParallel();
    drawScatter();
    if (m_dashboard) {
      for (const auto& name : m_overlaid)
        m_dashboard->removeOverlay(name);
      m_overlaid.clear();
      for (auto& [id, run] : result.runs) {
        run.name = tr("trial %1").arg(id);
        m_dashboard->addOverlay(run);
        m_overlaid << run.name;
      }
    }
  } else if (m_live) {
    showTrialTimes();
  }
  afterPoll();
}

bool ExperimentsPage::applyBest() {
  const auto* best = m_hasSpec ? experiment::bestTrial(m_state, m_spec) : nullptr;
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
                        .arg(QString::fromStdString(m_spec.objective))
                        .arg(objectiveText(best->objective(), m_spec.objective)));
  return true;
}

}  // namespace netsmith::ui
