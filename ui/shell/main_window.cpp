#include "shell/main_window.h"

#include "evaluation/task_view.h"

#include <spdlog/spdlog.h>
#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QCoreApplication>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QFrame>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QInputDialog>
#include <QLabel>
#include <QMessageBox>
#include <QProgressBar>
#include <QResizeEvent>
#include <QScreen>
#include <QSettings>
#include <QSignalBlocker>
#include <QStackedWidget>
#include <QStandardPaths>
#include <QStatusBar>
#include <QToolBar>
#include <QToolButton>
#include <QVBoxLayout>

#include <cmath>

#include "common/resource_paths.h"
#include "data/named_paths.h"
#include "data/project_data.h"
#include "env/env_report.h"
#include "evaluation/evaluation_page.h"
#include "export/export_job.h"
#include "forms/training_page.h"
#include "monitor/dashboard.h"
#include "monitor/experiments_page.h"
#include "netsmith/version.h"
#include "run/run_layout.h"
#include "run/run_records.h"
#include "session/project_document.h"
#include "session/trainer_session.h"
#include "shell/dialogs.h"
#include "shell/guide_window.h"
#include "shell/log_panel.h"
#include "shell/project_pages.h"
#include "shell/start_page.h"
#include "train/train_options.h"
#include "util/background_job.h"
#include "util/elided_label.h"
#include "util/theme_colors.h"
#include "util/wheel_guard.h"

namespace netsmith::ui {

namespace {

QString findTemplatesDir() {
  return QString::fromStdString(netsmith::findTemplatesDir(NETSMITH_RESOURCE_DIR));
}

QString formatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return QStringLiteral("?");
  const auto s = static_cast<long long>(std::llround(seconds));
  if (s >= 3600)
    return QStringLiteral("%1:%2:%3")
        .arg(s / 3600)
        .arg((s / 60) % 60, 2, 10, QLatin1Char('0'))
        .arg(s % 60, 2, 10, QLatin1Char('0'));
  return QStringLiteral("%1:%2").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0'));
}

}  // namespace

MainWindow::MainWindow(RegistriesPtr registries, QWidget* parent)
    : MainWindow(std::move(registries), TaskViewRegistry::builtins(), parent) {}

MainWindow::MainWindow(RegistriesPtr registries, TaskViewsPtr views, QWidget* parent)
    : QMainWindow(parent),
      m_document(new ProjectDocument(std::move(registries), this)),
      m_session(new TrainerSession(this)),
      m_exportJob(new BackgroundJob(this)) {
  setObjectName(QStringLiteral("mainWindow"));
  setWindowTitle(tr("Netsmith"));
  resizeWithinScreen(QSize(1360, 860));
  m_templatesDir = findTemplatesDir();
  qApp->installEventFilter(new WheelGuard(this));

  // Central: the error banner over the project's pages.
  auto* central = new QWidget(this);
  auto* layout = new QVBoxLayout(central);
  layout->setContentsMargins(4, 4, 4, 0);
  m_banner = new QFrame(central);
  m_banner->setObjectName(QStringLiteral("errorBanner"));
  m_banner->setStyleSheet(errorBannerStyle(m_banner->objectName()));
  auto* bannerLayout = new QHBoxLayout(m_banner);
  m_bannerText = new QLabel(m_banner);
  m_bannerText->setObjectName(QStringLiteral("errorBannerText"));
  m_bannerText->setWordWrap(true);
  m_bannerText->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* bannerClose = new QToolButton(m_banner);
  bannerClose->setText(QStringLiteral("\u2715"));
  bannerClose->setToolTip(tr("Dismiss"));
  connect(bannerClose, &QToolButton::clicked, this, &MainWindow::hideBanner);
  bannerLayout->addWidget(m_bannerText, 1);
  bannerLayout->addWidget(bannerClose, 0, Qt::AlignTop);
  m_banner->hide();
  m_pages = new ProjectPages(m_document, std::move(views), central);
  // While no project is open: the start page (recent projects, examples, New / Open / Import).
  m_startPage = new StartPage(m_document->registry(), m_templatesDir, central);
  m_centralStack = new QStackedWidget(central);
  m_centralStack->addWidget(m_startPage);
  m_centralStack->addWidget(m_pages);
  layout->addWidget(m_banner);
  layout->addWidget(m_centralStack, 1);
  connect(m_startPage, &StartPage::openRequested, this, [this](const QString& path) {
    if (maybeSave()) openProject(path);
  });
  connect(m_startPage, &StartPage::templateChosen, this, &MainWindow::newFromTemplate);
  connect(m_startPage, &StartPage::newBlankRequested, this, &MainWindow::newBlankWithDialog);
  connect(m_startPage, &StartPage::newFromDataRequested, this, &MainWindow::newFromDataWithDialog);
  connect(m_startPage, &StartPage::exampleDataMade, this, &MainWindow::newFromDataIn);
  connect(m_startPage, &StartPage::openDialogRequested, this, &MainWindow::openWithDialog);
  connect(m_startPage, &StartPage::importRequested, this, &MainWindow::importModelWithDialog);
  setCentralWidget(central);

  buildDocks();
  m_toolBar = addToolBar(tr("Toolbar"));
  m_toolBar->setObjectName(QStringLiteral("mainToolBar"));
  buildMenus();
  buildToolBar();
  buildStatusBar();
  connectSession();
  connect(m_document, &ProjectDocument::projectChanged, this, &MainWindow::refresh);
  connect(m_document, &ProjectDocument::modifiedChanged, this, &MainWindow::updateTitle);
  connect(m_document, &ProjectDocument::modelChanged, this, &MainWindow::updateTitle);
  connect(m_pages, &ProjectPages::checkpointChosen, this, &MainWindow::setCurrentCheckpoint);
  connect(m_pages->trainingPage(), &TrainingPage::lrFinderRequested, this,
          &MainWindow::runLrFinder);
  connect(m_pages->trainingPage(), &TrainingPage::sampleLimitsChanged, this,
          &MainWindow::setSampleLimits);
  // A sweep runs in its own processes: the status bar says so while it runs.
  connect(m_pages->experimentsPage(), &ExperimentsPage::sweepStarted, this, [this] {
    if (!m_session->isRunning()) m_runState->setFullText(tr("Sweep running (Experiments page)"));
  });
  connect(m_pages->experimentsPage(), &ExperimentsPage::sweepEnded, this, [this](bool finished) {
    if (!m_session->isRunning())
      m_runState->setFullText(finished ? tr("Sweep finished") : tr("Sweep stopped"));
  });
  connect(m_document, &ProjectDocument::sectionChanged, this, &MainWindow::updateActions);
  connect(m_document, &ProjectDocument::problemsChanged, this, &MainWindow::updateActions);
  // A model edit changes the problems too (a valid model enables Start before any save).
  connect(m_document, &ProjectDocument::modelChanged, this, &MainWindow::updateActions);

  m_defaultState = saveState();
  restoreSettings();
  refresh();
}

MainWindow::~MainWindow() {
  // Closing hides the window, and a field that loses focus then may still send its value:
  // nothing it sends reaches the document, and nothing the document says reaches the window,
  // once the window is going.
  if (QWidget* focus = QApplication::focusWidget(); focus && isAncestorOf(focus)) {
    const QSignalBlocker quiet(focus);
    focus->clearFocus();
  }
  m_document->disconnect(this);
}

Dashboard* MainWindow::dashboard() const {
  return m_pages->dashboard();
}

void MainWindow::setSampleLimits(std::int64_t train, std::int64_t validation) {
  m_limitTrain = train;
  m_limitValidation = validation;
  m_pages->trainingPage()->setSampleLimits(train, validation);
  m_pages->experimentsPage()->setSampleLimits(train, validation);
}

void MainWindow::buildDocks() {
  m_logDock = new QDockWidget(tr("Log"), this);
  m_logDock->setObjectName(QStringLiteral("logDock"));
  m_logPanel = new LogPanel(m_logDock);
  m_logDock->setWidget(m_logPanel);
  addDockWidget(Qt::BottomDockWidgetArea, m_logDock);
  resizeDocks({m_logDock}, {170}, Qt::Vertical);
  connect(m_logPanel, &LogPanel::compactToggled, this, [this](bool compact) {
    m_logFoldedByUser = true;
    if (!compact) resizeDocks({m_logDock}, {170}, Qt::Vertical);
  });
}

void MainWindow::buildStatusBar() {
  m_device = new QLabel(this);
  m_device->setObjectName(QStringLiteral("deviceLabel"));
  const auto env = env::collectEnvReport(false);
  m_device->setText(
      env.cudaAvailable
          ? tr("CUDA: %1")
                .arg(QString::fromStdString(env.cudaDevices.empty() ? std::string("?")
                                                                    : env.cudaDevices[0]))
          : tr("CPU, %1 threads%2")
                .arg(env.intraOpThreads)
                .arg(env.blasIsReference ? tr(" (reference BLAS: slow)") : QString()));
  m_runState = new ElidedLabel(tr("Idle"), this);
  m_runState->setObjectName(QStringLiteral("runState"));
  // After a run: a link to where its figures are, instead of a command to type.
  m_toEvaluation = new QToolButton(this);
  m_toEvaluation->setObjectName(QStringLiteral("showEvaluation"));
  m_toEvaluation->setText(tr("Show the evaluation"));
  m_toEvaluation->setToolTip(
      tr("The Evaluation page: confusion matrix, per-class figures, samples"));
  m_toEvaluation->setAutoRaise(true);
  m_toEvaluation->hide();
  connect(m_toEvaluation, &QToolButton::clicked, this,
          [this] { m_pages->showPage(ProjectPages::EvalPage); });
  m_progress = new QProgressBar(this);
  m_progress->setObjectName(QStringLiteral("runProgress"));
  m_progress->setMaximumWidth(260);
  // One width whatever it says (ETA, paused, testing): the status bar does not jump.
  m_progress->setMinimumWidth(
      m_progress->fontMetrics().horizontalAdvance(QStringLiteral("100% (ETA 00:00:00)")) + 24);
  m_progress->setFormat(QStringLiteral("%p%"));
  m_progress->setValue(0);
  // A message (Opened, Saved, an error) hides the run state for its seconds instead of being
  // drawn over it (QStatusBar hides normal widgets itself only when they are already visible).
  statusBar()->addWidget(m_runState, 1);
  connect(statusBar(), &QStatusBar::messageChanged, m_runState,
          [this](const QString& message) { m_runState->setVisible(message.isEmpty()); });
  statusBar()->addPermanentWidget(m_toEvaluation);
  statusBar()->addPermanentWidget(m_progress);
  statusBar()->addPermanentWidget(m_device);
}

void MainWindow::connectSession() {
  connect(m_session, &TrainerSession::started, this,
          [this](const QString& runDir, const QString& description) {
            if (!m_lrFindRun) {
              dashboard()->clear();
              if (m_resumeHistory) dashboard()->setHistory(*m_resumeHistory);
              setCurrentCheckpoint({});
            }
            m_resumeHistory.reset();
            m_toEvaluation->hide();
            m_firstStep = -1;
            spdlog::info("{}", description.toStdString());
            if (!runDir.isEmpty()) spdlog::info("run folder: {}", runDir.toStdString());
            m_runState->setFullText(m_lrFindRun ? tr("LR finder running") : tr("Training"));
          });
  // "Best" on the dashboard is the run's own: its monitor resolved against its task.
  connect(m_session, &TrainerSession::monitorChosen, this,
          [this](const QString& metric, bool maximize) {
            if (!m_lrFindRun) dashboard()->setMonitor(metric, maximize);
          });
  connect(m_session, &TrainerSession::batches, this, &MainWindow::showBatches);
  connect(m_session, &TrainerSession::batchWarning, this,
          [this](qint64 epoch, qint64 batch, const QString& text) {
            if (!m_lrFindRun) dashboard()->markWarning(epoch, batch, text);
          });
  connect(m_session, &TrainerSession::epochEnded, this, [this](const run::EpochMetrics& e) {
    dashboard()->addEpoch(e);
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
    m_runState->setFullText(tr("Testing: %1").arg(text));
    m_progress->setRange(0, 0);
    m_pause->setEnabled(false);
    m_stopAfterEpoch->setEnabled(false);
  });
  connect(m_session, &TrainerSession::finished, this, &MainWindow::runFinished);
}

void MainWindow::showBatches(const QVector<run::BatchMetrics>& list) {
  if (m_lrFindRun) return;
  dashboard()->addBatches(list);
  const auto& b = list.back();
  if (m_firstStep < 0) {
    m_firstStep = list.front().step - 1;
    m_firstRunSeconds = list.front().runSeconds;
  }
  // The run's own training time: a pause does not stretch the estimate.
  const double done = double(b.step - m_firstStep);
  const double left = double(b.totalSteps - b.step);
  const double eta = done > 0 ? (b.runSeconds - m_firstRunSeconds) / done * left : NAN;
  m_progress->setMaximum(int(std::max<std::int64_t>(1, b.totalSteps)));
  m_progress->setValue(int(b.step));
  m_progress->setFormat(m_session->state() == train::RunState::Paused
                            ? tr("%p% (paused)")
                            : tr("%p% (ETA %1)").arg(formatDuration(eta)));
  if (m_session->state() != train::RunState::Paused)
    m_runState->setFullText(tr("Training: epoch %1, batch %2/%3, %4 images/s")
                                .arg(b.epoch + 1)
                                .arg(b.batch + 1)
                                .arg(b.batchesPerEpoch)
                                .arg(b.imagesPerSecond, 0, 'f', 0));
}

void MainWindow::runFinished(run::FinishState state, const QString& reason) {
  const auto& r = m_session->lastResult();
  const QString stateName = QString::fromStdString(run::finishStateName(state));
  // "stopped: stopped at ..." says it once.
  QString text = reason.startsWith(stateName, Qt::CaseInsensitive) ? reason
                 : reason.isEmpty()                                ? stateName
                                                                   : stateName + ": " + reason;
  if (m_progress->maximum() == 0) {  // it showed the test pass as busy
    m_progress->setRange(0, 1);
    m_progress->setValue(state == run::FinishState::Completed ? 1 : 0);
  }
  if (r.hasTest)
    text += QStringLiteral("; ") + QString::fromStdString(train::describeTestFigure(r));
  else if (r.testSplitSize > 0)  // the Evaluation page evaluates it (the link beside)
    text += tr("; the test split (%1 images) was not evaluated").arg(r.testSplitSize);
  if (state == run::FinishState::Failed) {
    spdlog::error("{}", text.toStdString());
    showBanner(tr("Training failed: %1").arg(reason));
  } else {
    spdlog::info("{}", text.toStdString());
  }
  m_runState->setFullText(text);
  m_progress->setFormat(QStringLiteral("%p%"));
  const bool lrFind = m_lrFindRun;
  m_toEvaluation->setVisible(!lrFind && state != run::FinishState::Failed);
  m_lrFindRun = false;
  updateActions();
  if (lrFind && state != run::FinishState::Failed && !r.lrFind.lrs.empty()) {
    auto* dialog = new LrFinderDialog(r.lrFind, this);
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
  if (!lrFind) m_pages->refreshRuns();
  // The Evaluation page shows the same figure, on the same checkpoint, by itself; without a
  // test split, the validation split the run held out.
  if (!lrFind && state != run::FinishState::Failed && !m_checkpoint.isEmpty()) {
    if (r.testSplitSize > 0)
      m_pages->evaluationPage()->evaluateAfterRun(m_checkpoint, QStringLiteral("test"));
    else if (r.lastValidation.samples > 0)
      m_pages->evaluationPage()->evaluateAfterRun(m_checkpoint, QStringLiteral("validation"));
  }
}

bool MainWindow::fillConfig(train::TrainerConfig& config) {
  const auto& doc = *m_document;
  if (m_session->isRunning()) return false;
  if (doc.filePath().isEmpty() || !doc.problems().empty()) {
    const QString why = doc.filePath().isEmpty()
                            ? tr("Open a project first")
                            : tr("The project has problems: fix them before training "
                                 "(they are listed on the Model page)");
    statusBar()->showMessage(why, 8000);
    if (!doc.filePath().isEmpty()) m_pages->showPage(ProjectPages::ModelPage);
    return false;
  }
  config.registries = doc.registries();
  config.project = doc.project();
  config.options = doc.trainOptions();
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

bool MainWindow::startRun(train::TrainerConfig& config, const QString& what) {
  hideBanner();
  if (!m_lrFindRun) {
    // Settings of the project that change what the dashboard draws.
    dashboard()->configure(m_document->trainOptions().clipGradNorm);
  }
  QString error;
  if (!m_session->start(std::move(config), &error)) {
    m_lrFindRun = false;
    statusBar()->showMessage(error, 5000);
    return false;
  }
  m_runState->setFullText(what);
  m_progress->setValue(0);
  updateActions();
  return true;
}

void MainWindow::startTraining() {
  train::TrainerConfig config;
  if (!fillConfig(config)) return;
  if (startRun(config, tr("Preparing"))) m_pages->showPage(ProjectPages::DashboardPage);
}

void MainWindow::resumeFrom(const QString& checkpoint) {
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

void MainWindow::runLrFinder() {
  train::TrainerConfig config;
  if (!fillConfig(config)) return;
  config.lrFind = true;
  // One process: the finder's curve comes from this one (train.local_processes left out).
  if (config.project.train.is_object()) config.project.train.erase("local_processes");
  config.options->processes = 1;
  m_lrFindRun = true;
  startRun(config, tr("LR finder: preparing"));
}

void MainWindow::togglePause() {
  if (!m_session->isRunning()) return;
  if (m_pause->isChecked()) {
    m_session->pause();
    m_runState->setFullText(tr("Paused"));
    m_progress->setFormat(tr("%p% (paused)"));  // no running ETA while nothing runs
  } else {
    m_session->resume();
    m_runState->setFullText(tr("Training"));
  }
  // The action says what it will do next.
  m_pause->setText(m_pause->isChecked() ? tr("&Resume") : tr("&Pause"));
  m_pause->setToolTip(m_pause->isChecked() ? tr("Resume training (F6)")
                                           : tr("Pause training (F6)"));
}

void MainWindow::setCurrentCheckpoint(const QString& path) {
  m_checkpoint = path;
  m_pages->evaluationPage()->setCheckpoint(path);
  updateActions();
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (!maybeSave()) {
    event->ignore();
    return;
  }
  if (m_session->isRunning()) {
    m_runState->setFullText(tr("Stopping: writing a checkpoint"));
    m_session->stopAndWait(2000);
  }
  saveSettings();
  event->accept();
}

void MainWindow::exportCurrent(const QString& exporter, const QString& folder) {
  if (m_checkpoint.isEmpty() || m_exportJob->isRunning()) return;
  const QString checkpoint = m_checkpoint;
  exporting::ExportJob job;
  job.registries = m_document->registries();
  job.checkpoint = checkpoint.toStdString();
  // A run of the open project reads the project's own data for the parity check; a checkpoint
  // from elsewhere only data a project file beside it names (else random inputs, and a note).
  job.dataFromCheckpoint = QDir(QString::fromStdString(data::checkpointHome(job.checkpoint))) ==
                           QDir(m_document->baseDir());
  try {
    job.targets =
        exporting::exportTargetsIn(folder.toStdString(), job.checkpoint, exporter.toStdString());
  } catch (const std::exception& e) {
    showBanner(QString::fromStdString(e.what()));
    return;
  }
  const QString what = exporter.isEmpty() ? tr("every format") : exporter;
  statusBar()->showMessage(tr("Exporting %1 from %2...").arg(what, checkpoint));
  spdlog::info("exporting {} from {}", what.toStdString(), job.checkpoint);
  m_exportJob->start([job](const JobContext&) { return exporting::runExportJob(job); },
                     [this, checkpoint](const exporting::ExportJobResult& result) {
                       showExportReport(new ExportReportDialog(checkpoint, result, this), {});
                     },
                     [this, checkpoint](const QString& error) {
                       showExportReport(new ExportReportDialog(checkpoint, error, this), error);
                     });
  updateActions();
}

void MainWindow::showExportReport(ExportReportDialog* dialog, const QString& error) {
  updateActions();
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  const bool ok = error.isEmpty() && dialog->passed();
  if (ok) {
    statusBar()->showMessage(tr("Export verified"), 8000);
    spdlog::info("{}", dialog->reportText().toStdString());
  } else {
    showBanner(error.isEmpty() ? tr("The export was not verified: see the report")
                               : tr("Export failed: %1").arg(error));
    spdlog::error("{}", dialog->reportText().toStdString());
  }
  const QString report = dialog->reportText();
  dialog->open();
  Q_EMIT exportFinished(ok, report);
}

void MainWindow::showBanner(const QString& text, bool error) {
  m_bannerIsError = error;
  m_banner->setStyleSheet(error ? errorBannerStyle(m_banner->objectName())
                                : noticeBannerStyle(m_banner->objectName()));
  m_bannerText->setText(text);
  m_banner->show();
}

void MainWindow::hideBanner() {
  m_banner->hide();
  m_bannerText->clear();
}

QString MainWindow::runStateText() const {
  return m_runState->fullText();
}

QString MainWindow::bannerText() const {
  return m_banner->isHidden() ? QString() : m_bannerText->text();
}

void MainWindow::setTheme(const QString& theme) {
  applyTheme(theme);
  m_banner->setStyleSheet(m_bannerIsError ? errorBannerStyle(m_banner->objectName())
                                          : noticeBannerStyle(m_banner->objectName()));
  styleCharts(this);  // hidden pages' charts too, before they are next shown
  for (auto* a : m_themeGroup->actions())
    a->setChecked(a->data().toString() == theme);
  auto prefs = Preferences::load();
  prefs.theme = theme;
  prefs.save();
}

void MainWindow::showPreferences() {
  auto* dialog = new PreferencesDialog(Preferences::load(), this);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  connect(dialog, &QDialog::accepted, this, [this, dialog] {
    const auto prefs = dialog->preferences();
    prefs.save();
    setTheme(prefs.theme);
    dashboard()->setSmoothing(prefs.smoothing);
    const int threads = env::configureThreads(prefs.threads);
    spdlog::info("LibTorch threads: {}", threads);
  });
  dialog->open();
}

void MainWindow::showEnvironment() {
  auto* dialog = new EnvironmentDialog(this);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  dialog->open();
}

QString MainWindow::guidePageForView() const {
  if (m_centralStack->currentWidget() == m_startPage) return QStringLiteral("README.md");
  switch (m_pages->currentPage()) {
    case ProjectPages::ModelPage:
      return QStringLiteral("projects-and-model-editor.md");
    case ProjectPages::DataPage:
      return QStringLiteral("data-formats.md");
    case ProjectPages::AugmentPage:
      return QStringLiteral("augmentation.md");
    case ProjectPages::TrainingPage:
      return QStringLiteral("training.md");
    case ProjectPages::DashboardPage:
    case ProjectPages::RunsPage:
      return QStringLiteral("dashboard.md");
    case ProjectPages::EvalPage: {
      const auto* task = m_document->tasks().find(m_document->project().task);
      return task ? QString::fromStdString(task->guidePage) : QStringLiteral("evaluation.md");
    }
    case ProjectPages::ExperimentsPage:
      return QStringLiteral("experiments-and-sweeps.md");
  }
  return QStringLiteral("README.md");
}

GuideWindow* MainWindow::showGuide(const QString& page) {
  if (!m_guide)
    m_guide = new GuideWindow(QString::fromStdString(findGuideDir(NETSMITH_RESOURCE_DIR)), this);
  m_guide->showPage(page.isEmpty() ? guidePageForView() : page);
  m_guide->show();
  m_guide->raise();
  m_guide->activateWindow();
  return m_guide;
}

void MainWindow::showAbout() {
  QMessageBox::about(this, tr("About Netsmith"),
                     tr("<b>Netsmith %1</b><p>A desktop studio for convolutional networks.</p>")
                         .arg(QStringLiteral(NETSMITH_VERSION)));
}

void MainWindow::renameProject() {
  if (m_document->filePath().isEmpty()) return;
  bool ok = false;
  const QString name =
      QInputDialog::getText(this, tr("Rename project"), tr("Name:"), QLineEdit::Normal,
                            QString::fromStdString(m_document->project().name), &ok);
  if (ok) m_document->setProjectName(name);
}

void MainWindow::resizeEvent(QResizeEvent* event) {
  QMainWindow::resizeEvent(event);
  if (m_logFoldedByUser) return;
  const bool fold = height() < 820;
  if (fold == m_logPanel->isCompact()) return;
  m_logPanel->setCompact(fold);
  if (!fold) resizeDocks({m_logDock}, {170}, Qt::Vertical);
}

void MainWindow::resizeWithinScreen(QSize wanted) {
  // Never larger than the screen's available area (a 1280x720 laptop included).
  if (const QScreen* screen = this->screen() ? this->screen() : QGuiApplication::primaryScreen())
    wanted = wanted.boundedTo(screen->availableGeometry().size());
  resize(wanted);
}

void MainWindow::restoreSettings() {
  QSettings s;
  restoreGeometry(s.value(QStringLiteral("window/geometry")).toByteArray());
  resizeWithinScreen(size());  // a geometry saved on a larger screen
  restoreState(s.value(QStringLiteral("window/state")).toByteArray());
  const auto prefs = Preferences::load();
  dashboard()->setSmoothing(prefs.smoothing);
  if (prefs.theme != QLatin1String("system"))
    setTheme(prefs.theme);
  else
    for (auto* a : m_themeGroup->actions())
      a->setChecked(a->data().toString() == prefs.theme);
  if (prefs.threads > 0) env::configureThreads(prefs.threads);
}

void MainWindow::saveSettings() {
  QSettings s;
  s.setValue(QStringLiteral("window/geometry"), saveGeometry());
  s.setValue(QStringLiteral("window/state"), saveState());
}

void MainWindow::updateTitle() {
  const auto& doc = *m_document;
  QString title = tr("Netsmith");
  if (!doc.filePath().isEmpty())
    title = tr("%1%2 - Netsmith")
                .arg(QString::fromStdString(doc.project().name),
                     doc.isModified() ? QStringLiteral(" *") : QString());
  setWindowTitle(title);
}

void MainWindow::refresh() {
  updateTitle();
  m_pages->refresh();
  const bool open = !m_document->filePath().isEmpty();
  if (!open) m_startPage->setRecent(recentFiles());
  m_centralStack->setCurrentWidget(open ? static_cast<QWidget*>(m_pages) : m_startPage);
  updateActions();
}

}  // namespace netsmith::ui
