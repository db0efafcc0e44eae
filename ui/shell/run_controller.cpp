#include "shell/run_controller.h"
#include "util/named_action.h"

#include <spdlog/spdlog.h>
#include <QAction>
#include <QCoreApplication>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QMainWindow>
#include <QMenu>
#include <QStandardPaths>
#include <QStatusBar>

#include "data/project_data.h"
#include "evaluation/evaluation_page.h"
#include "evaluation/predict_page.h"
#include "forms/training_page.h"
#include "monitor/dashboard.h"
#include "monitor/experiments_page.h"
#include "run/run_layout.h"
#include "run/run_records.h"
#include "session/project_document.h"
#include "session/trainer_session.h"
#include "shell/banner.h"
#include "shell/dialogs.h"
#include "shell/project_pages.h"
#include "shell/run_status.h"
#include "train/train_options.h"

namespace netsmith::ui {

RunController::RunController(ProjectDocument* document, TrainerSession* session,
                             ProjectPages* pages, RunStatus* status, Banner* banner,
                             QMainWindow* window)
    : QObject(window),
      m_document(document),
      m_session(session),
      m_pages(pages),
      m_status(status),
      m_banner(banner),
      m_window(window) {
  connectSession();
  connect(m_status, &RunStatus::evaluationRequested, this,
          [this] { m_pages->showPage(ProjectPages::EvalPage); });
  connect(m_pages, &ProjectPages::checkpointChosen, this, &RunController::setCurrentCheckpoint);
  connect(m_pages->trainingPage(), &TrainingPage::lrFinderRequested, this,
          &RunController::runLrFinder);
  connect(m_pages->trainingPage(), &TrainingPage::sampleLimitsChanged, this,
          &RunController::setSampleLimits);
}

RunController::~RunController() = default;

void RunController::buildMenu(QMenu* menu) {
  m_start = namedAction(menu->addAction(tr("&Start"), this, &RunController::startTraining),
                        "actionTrainStart", QKeySequence(Qt::Key_F5));
  m_pause = namedAction(menu->addAction(tr("&Pause"), this, &RunController::togglePause),
                        "actionTrainPause", QKeySequence(Qt::Key_F6));
  m_pause->setCheckable(true);
  m_stop = namedAction(menu->addAction(tr("S&top"), this, [this] { m_session->stop(); }),
                       "actionTrainStop", QKeySequence(Qt::SHIFT | Qt::Key_F5));
  m_stopAfterEpoch = namedAction(
      menu->addAction(tr("Stop after this &epoch"), this, &RunController::stopAfterEpoch),
      "actionTrainStopAfterEpoch");
  menu->addSeparator();
  m_resume = namedAction(menu->addAction(tr("&Resume from checkpoint..."), this,
                                         [this] {
                                           const QString path =
                                               pickCheckpoint(tr("Resume from checkpoint"));
                                           if (!path.isEmpty()) resumeFrom(path);
                                         }),
                         "actionTrainResume");
  m_resumeLast =
      namedAction(menu->addAction(tr("Resume &last run"), this, &RunController::resumeLast),
                  "actionTrainResumeLast", QKeySequence(Qt::CTRL | Qt::Key_F5));
  m_resumeLast->setToolTip(
      tr("Go on with the project's newest run from its last checkpoint, in the same run folder"));
  m_lrFind = namedAction(menu->addAction(tr("Run &LR finder"), this, &RunController::runLrFinder),
                         "actionTrainLrFind");
}

QList<QAction*> RunController::toolBarActions() const {
  return {m_start, m_pause, m_stop};
}

void RunController::updateActions() {
  const bool running = m_session->isRunning();
  const bool open = !m_document->filePath().isEmpty();
  const QString blocked = m_pages->trainingPage()->blockedReason();
  m_start->setEnabled(!running && open && blocked.isEmpty());
  m_start->setToolTip(blocked.isEmpty() ? tr("Start training (F5)")
                                        : tr("Start is disabled: %1").arg(blocked));
  m_start->setStatusTip(m_start->toolTip());
  m_resume->setEnabled(!running && open);
  m_resumeLast->setEnabled(!running && open);
  m_lrFind->setEnabled(!running && open);
  m_pause->setEnabled(running);
  if (!running) {
    m_pause->setChecked(false);
    m_pause->setText(tr("&Pause"));
    m_stopAfterEpoch->setText(tr("Stop after this &epoch"));
  }
  m_stop->setEnabled(running);
  m_stopAfterEpoch->setEnabled(running &&
                               !m_stopAfterEpoch->text().endsWith(QLatin1String("(armed)")));
}

void RunController::connectSession() {
  connect(m_session, &TrainerSession::started, this,
          [this](const QString& runDir, const QString& description) {
            auto* dashboard = m_pages->dashboard();
            if (!m_lrFindRun) {
              dashboard->clear();
              if (m_resumeHistory) dashboard->setHistory(*m_resumeHistory);
              setCurrentCheckpoint({});
            }
            m_resumeHistory.reset();
            spdlog::info("{}", description.toStdString());
            if (!runDir.isEmpty()) spdlog::info("run folder: {}", runDir.toStdString());
            m_status->started(m_lrFindRun ? tr("LR finder running") : tr("Training"));
          });
  // "Best" on the dashboard is the run's own: its monitor resolved against its task.
  connect(m_session, &TrainerSession::monitorChosen, this,
          [this](const QString& metric, bool maximize) {
            if (!m_lrFindRun) m_pages->dashboard()->setMonitor(metric, maximize);
          });
  connect(m_session, &TrainerSession::batches, this, &RunController::showBatches);
  connect(m_session, &TrainerSession::batchWarning, this,
          [this](qint64 epoch, qint64 batch, const QString& text) {
            if (!m_lrFindRun) m_pages->dashboard()->markWarning(epoch, batch, text);
          });
  connect(m_session, &TrainerSession::epochEnded, this, [this](const run::EpochMetrics& e) {
    m_pages->dashboard()->addEpoch(e);
    spdlog::info("{}", run::describeEpoch(e));
  });
  connect(m_session, &TrainerSession::checkpointWritten, this,
          [this](const QString& tag, const QString& path) {
            // The run's best checkpoint is the one to export; last until there is a best.
            if (tag == QLatin1String("best") ||
                (tag == QLatin1String("last") &&
                 !m_checkpoint.endsWith(QLatin1String(run_layout::kBest))))
              setCurrentCheckpoint(path);
          });
  connect(m_session, &TrainerSession::message, this, [](const QString& level, const QString& text) {
    if (level == QLatin1String("warning"))
      spdlog::warn("{}", text.toStdString());
    else
      spdlog::info("{}", text.toStdString());
  });
  connect(m_session, &TrainerSession::testing, this, [this](const QString& text) {
    // The last epoch is done: no batch progress or ETA, no pause (the test pass runs to its end).
    m_status->showTesting(text);
    m_pause->setEnabled(false);
    m_stopAfterEpoch->setEnabled(false);
  });
  connect(m_session, &TrainerSession::finished, this, &RunController::runFinished);
}

void RunController::showBatches(const QVector<run::BatchMetrics>& list) {
  if (m_lrFindRun) return;
  m_pages->dashboard()->addBatches(list);
  m_status->showBatches(list, m_session->state() == train::RunState::Paused);
}

void RunController::runFinished(run::FinishState state, const QString& reason) {
  const auto& r = m_session->lastResult();
  const QString stateName = QString::fromStdString(run::finishStateName(state));
  // "stopped: stopped at ..." says it once.
  QString text = reason.startsWith(stateName, Qt::CaseInsensitive) ? reason
                 : reason.isEmpty()                                ? stateName
                                                                   : stateName + ": " + reason;
  if (r.hasTest)
    text += QStringLiteral("; ") + QString::fromStdString(train::describeTestFigure(r));
  else if (r.testSplitSize > 0)  // the Evaluation page evaluates it (the link beside)
    text += tr("; the test split (%1 images) was not evaluated").arg(r.testSplitSize);
  const bool failed = state == run::FinishState::Failed;
  if (failed) {
    spdlog::error("{}", text.toStdString());
    m_banner->showText(tr("Training failed: %1").arg(reason));
  } else {
    spdlog::info("{}", text.toStdString());
  }
  const bool lrFind = m_lrFindRun;
  m_status->showFinished(text, state == run::FinishState::Completed, !lrFind && !failed);
  m_lrFindRun = false;
  updateActions();
  Q_EMIT changed();
  if (lrFind) {
    if (!failed) showLrFinder();
    return;
  }
  m_pages->refreshRuns();
  // The Evaluation page shows the same figure, on the same checkpoint, by itself; without a
  // test split, the validation split the run held out.
  if (!failed && !m_checkpoint.isEmpty()) {
    if (r.testSplitSize > 0)
      m_pages->evaluationPage()->evaluateAfterRun(m_checkpoint, QStringLiteral("test"));
    else if (r.lastValidation.samples > 0)
      m_pages->evaluationPage()->evaluateAfterRun(m_checkpoint, QStringLiteral("validation"));
  }
}

void RunController::showLrFinder() {
  const auto& result = m_session->lastResult().lrFind;
  if (result.lrs.empty()) return;
  auto* dialog = new LrFinderDialog(result, m_window);
  connect(dialog, &LrFinderDialog::useLearningRate, this, [this](double lr) {
    Json train = m_document->project().train;
    if (!train["optimizer"].is_object()) train["optimizer"] = Json{{"type", "adam"}};
    train["optimizer"]["lr"] = lr;
    m_document->editSection(QStringLiteral("train"), train,
                            tr("Use the LR finder's learning rate"));
  });
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  spdlog::info("{}", dialog->summary().toStdString());
  dialog->open();
}

bool RunController::fillConfig(train::TrainerConfig& config) {
  const auto& doc = *m_document;
  if (m_session->isRunning()) return false;
  if (doc.filePath().isEmpty() || !doc.problems().empty()) {
    const QString why = doc.filePath().isEmpty()
                            ? tr("Open a project first")
                            : tr("The project has problems: fix them before training "
                                 "(they are listed on the Model page)");
    m_window->statusBar()->showMessage(why, 8000);
    if (!doc.filePath().isEmpty()) m_pages->showPage(ProjectPages::ModelPage);
    return false;
  }
  config.registries = doc.registries();
  config.project = doc.project();
  config.options = doc.trainOptions();
  config.data = doc.resolved().data;
  config.baseDir = doc.baseDir().toStdString();
  config.runsRoot = run_layout::runsRoot(doc.baseDir().toStdString());
  config.cacheDir = data::userCacheDir();
  config.limitTrain = m_limitTrain;
  config.limitVal = m_limitValidation;
  // train.local_processes > 1: the other ranks run netsmith-cli, installed beside the studio.
  QString cli =
      QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("netsmith-cli"));
  if (!QFileInfo(cli).isExecutable())
    cli = QStandardPaths::findExecutable(QStringLiteral("netsmith-cli"));
  config.workerProgram = cli.toStdString();
  return true;
}

bool RunController::startRun(train::TrainerConfig& config, const QString& what) {
  m_banner->dismiss();
  if (!m_lrFindRun) {
    // Settings of the project that change what the dashboard draws.
    m_pages->dashboard()->configure(m_document->trainOptions().clipGradNorm);
  }
  QString error;
  if (!m_session->start(std::move(config), &error)) {
    m_lrFindRun = false;
    m_window->statusBar()->showMessage(error, 5000);
    return false;
  }
  m_status->requested(what);
  updateActions();
  Q_EMIT changed();
  return true;
}

void RunController::startTraining() {
  train::TrainerConfig config;
  if (!fillConfig(config)) return;
  if (startRun(config, tr("Preparing"))) m_pages->showPage(ProjectPages::DashboardPage);
}

void RunController::resumeFrom(const QString& checkpoint) {
  train::TrainerConfig config;
  if (!fillConfig(config)) return;
  config.resumePath = checkpoint.toStdString();
  config.runDir = run::resumeRunFolder(config.resumePath);
  // The run's history as its folder holds it now, before the resumed run appends to it: the
  // dashboard shows the whole run, numbered as the run numbers it.
  m_resumeHistory.reset();
  if (!config.runDir.empty()) {
    auto record = std::make_unique<run::RunRecord>(run::readRunRecord(config.runDir));
    if (record->error.empty()) m_resumeHistory = std::move(record);
  }
  if (startRun(config, tr("Resuming from %1").arg(QFileInfo(checkpoint).fileName())))
    m_pages->showPage(ProjectPages::DashboardPage);
  else
    m_resumeHistory.reset();
}

void RunController::resumeLast() {
  const QString path = latestCheckpoint(true);
  if (path.isEmpty())
    m_window->statusBar()->showMessage(
        tr("This project has no run with a last checkpoint to resume"), 5000);
  else
    resumeFrom(path);
}

void RunController::runLrFinder() {
  train::TrainerConfig config;
  if (!fillConfig(config)) return;
  config.lrFind = true;
  // One process: the finder's curve comes from this one (train.local_processes left out).
  if (config.project.train.is_object()) config.project.train.erase("local_processes");
  config.options->processes = 1;
  m_lrFindRun = true;
  startRun(config, tr("LR finder: preparing"));
}

void RunController::togglePause() {
  if (!m_session->isRunning()) return;
  if (m_pause->isChecked()) {
    m_session->pause();
    m_status->showPaused();
  } else {
    m_session->resume();
    m_status->setText(tr("Training"));
  }
  // The action says what it will do next.
  m_pause->setText(m_pause->isChecked() ? tr("&Resume") : tr("&Pause"));
  m_pause->setToolTip(m_pause->isChecked() ? tr("Resume training (F6)")
                                           : tr("Pause training (F6)"));
}

void RunController::stopAfterEpoch() {
  m_session->stopAfterEpoch();
  // Armed: said on the action and in the bar.
  m_stopAfterEpoch->setText(tr("Stop after this &epoch (armed)"));
  m_stopAfterEpoch->setEnabled(false);
  m_status->setText(tr("Stopping after this epoch"));
}

void RunController::setSampleLimits(std::int64_t train, std::int64_t validation) {
  m_limitTrain = train;
  m_limitValidation = validation;
  m_pages->trainingPage()->setSampleLimits(train, validation);
  m_pages->experimentsPage()->setSampleLimits(train, validation);
}

void RunController::setCurrentCheckpoint(const QString& path) {
  m_checkpoint = path;
  m_pages->evaluationPage()->setTask(m_document->project().task);
  m_pages->evaluationPage()->setCheckpoint(path);
  m_pages->predictPage()->setModel(path);
  Q_EMIT changed();
}

QString RunController::latestCheckpoint(bool lastOnly) const {
  // The project's runs/, as run_layout lays it out (the newest run first; real files only).
  return QString::fromStdString(
      run_layout::latestCheckpoint(run_layout::runsRoot(m_document->baseDir().toStdString()),
                                   m_document->project().name, lastOnly));
}

QString RunController::pickCheckpoint(const QString& title) {
  const QString start =
      m_checkpoint.isEmpty()
          ? QString::fromStdString(run_layout::runsRoot(m_document->baseDir().toStdString()))
          : QFileInfo(m_checkpoint).absolutePath();
  return QFileDialog::getOpenFileName(m_window, title, start, tr("Checkpoints (*.safetensors)"));
}

void RunController::forgetRun() {
  setCurrentCheckpoint({});               // the Evaluation page's result goes with it
  m_pages->predictPage()->clearImages();  // and the images tried with another project's model
  setSampleLimits(0, 0);  // a quick run's limits belong to the project they were set in
  m_pages->dashboard()->clear();
  m_pages->dashboard()->clearOverlays();
  m_banner->dismiss();
  m_status->clear();
}

}  // namespace netsmith::ui
