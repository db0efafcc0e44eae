#include "main_window.h"

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
#include <QHBoxLayout>
#include <QInputDialog>
#include <QLabel>
#include <QListWidget>
#include <QMenuBar>
#include <QMessageBox>
#include <QPointer>
#include <QProgressBar>
#include <QSettings>
#include <QStandardPaths>
#include <QStatusBar>
#include <QToolBar>
#include <QToolButton>
#include <QUndoStack>
#include <QVBoxLayout>

#include <cmath>
#include <thread>

#include "dashboard.h"
#include "data/project_data.h"
#include "dialogs.h"
#include "env/env_report.h"
#include "evaluation_page.h"
#include "export/export_job.h"
#include "log_panel.h"
#include "netsmith/version.h"
#include "project_document.h"
#include "project_pages.h"
#include "train/train_options.h"
#include "trainer_session.h"
#include "training_page.h"

namespace netsmith::ui {

namespace {

constexpr int kMaxRecent = 8;

QString findTemplatesDir() {
  QStringList candidates;
  const QString env = qEnvironmentVariable("NETSMITH_RESOURCES");
  if (!env.isEmpty()) candidates << env + QStringLiteral("/templates");
  const QString app = QCoreApplication::applicationDirPath();
  candidates << app + QStringLiteral("/../share/netsmith/templates")
             << QStringLiteral(NETSMITH_RESOURCE_DIR "/templates");
  for (const auto& dir : candidates)
    if (QFileInfo(dir).isDir()) return QDir(dir).absolutePath();
  return {};
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

MainWindow::MainWindow(const ops::OpRegistry& registry, QWidget* parent)
    : QMainWindow(parent),
      m_document(new ProjectDocument(registry, this)),
      m_session(new TrainerSession(this)) {
  setObjectName(QStringLiteral("mainWindow"));
  setWindowTitle(tr("Netsmith"));
  resize(1360, 860);
  m_templatesDir = findTemplatesDir();

  // Central: the error banner over the project's pages.
  auto* central = new QWidget(this);
  auto* layout = new QVBoxLayout(central);
  layout->setContentsMargins(4, 4, 4, 0);
  m_banner = new QFrame(central);
  m_banner->setObjectName(QStringLiteral("errorBanner"));
  m_banner->setStyleSheet(QStringLiteral(
      "#errorBanner { background: #f8d7da; border: 1px solid #f1aeb5; border-radius: 3px; }"
      "#errorBanner QLabel { color: #58151c; }"));
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
  m_pages = new ProjectPages(m_document, central);
  layout->addWidget(m_banner);
  layout->addWidget(m_pages, 1);
  setCentralWidget(central);

  buildDocks();
  m_toolBar = addToolBar(tr("Main"));
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
  connect(m_document, &ProjectDocument::sectionChanged, this, &MainWindow::updateActions);

  m_defaultState = saveState();
  restoreSettings();
  refresh();
}

MainWindow::~MainWindow() = default;

Dashboard* MainWindow::dashboard() const {
  return m_pages->dashboard();
}

void MainWindow::setSampleLimits(std::int64_t train, std::int64_t validation) {
  m_limitTrain = train;
  m_limitValidation = validation;
}

void MainWindow::buildDocks() {
  m_logDock = new QDockWidget(tr("Log"), this);
  m_logDock->setObjectName(QStringLiteral("logDock"));
  m_logPanel = new LogPanel(m_logDock);
  m_logDock->setWidget(m_logPanel);
  addDockWidget(Qt::BottomDockWidgetArea, m_logDock);
  resizeDocks({m_logDock}, {170}, Qt::Vertical);
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
  m_runState = new QLabel(tr("Idle"), this);
  m_runState->setObjectName(QStringLiteral("runState"));
  m_progress = new QProgressBar(this);
  m_progress->setObjectName(QStringLiteral("runProgress"));
  m_progress->setMaximumWidth(260);
  m_progress->setFormat(QStringLiteral("%p%"));
  m_progress->setValue(0);
  statusBar()->addPermanentWidget(m_runState);
  statusBar()->addPermanentWidget(m_progress);
  statusBar()->addPermanentWidget(m_device);
}

void MainWindow::connectSession() {
  connect(m_session, &TrainerSession::started, this,
          [this](const QString& runDir, const QString& description) {
            if (!m_lrFindRun) {
              dashboard()->clear();
              setCurrentCheckpoint({});
            }
            m_firstStep = -1;
            m_runClock.start();
            spdlog::info("{}", description.toStdString());
            if (!runDir.isEmpty()) spdlog::info("run folder: {}", runDir.toStdString());
            m_runState->setText(m_lrFindRun ? tr("LR finder running") : tr("Training"));
          });
  connect(m_session, &TrainerSession::batches, this,
          [this](const QVector<train::BatchMetrics>& list) {
            if (m_lrFindRun) return;
            dashboard()->addBatches(list);
            const auto& b = list.back();
            if (m_firstStep < 0) {
              m_firstStep = list.front().step - 1;
              m_runClock.restart();
            }
            const double done = double(b.step - m_firstStep);
            const double left = double(b.totalSteps - b.step);
            const double eta = done > 0 ? m_runClock.elapsed() / 1000.0 / done * left : NAN;
            m_progress->setMaximum(int(std::max<std::int64_t>(1, b.totalSteps)));
            m_progress->setValue(int(b.step));
            m_progress->setFormat(tr("%p% (ETA %1)").arg(formatDuration(eta)));
            if (m_session->state() != train::RunState::Paused)
              m_runState->setText(tr("Training: epoch %1, batch %2/%3, %4 images/s")
                                      .arg(b.epoch + 1)
                                      .arg(b.batch + 1)
                                      .arg(b.batchesPerEpoch)
                                      .arg(b.imagesPerSecond, 0, 'f', 0));
          });
  connect(m_session, &TrainerSession::epochEnded, this, [this](const train::EpochMetrics& e) {
    dashboard()->addEpoch(e);
    spdlog::info("{}", train::describeEpoch(e));
  });
  connect(m_session, &TrainerSession::checkpointWritten, this,
          [this](const QString& tag, const QString& path) {
            // The run's best checkpoint is the one to export; last until there is a best.
            if (tag == QLatin1String("best") ||
                (tag == QLatin1String("last") &&
                 !m_checkpoint.endsWith(QStringLiteral("best.safetensors"))))
              setCurrentCheckpoint(path);
          });
  connect(m_session, &TrainerSession::message, this, [](const QString& level, const QString& text) {
    if (level == QLatin1String("warning"))
      spdlog::warn("{}", text.toStdString());
    else
      spdlog::info("{}", text.toStdString());
  });
  connect(m_session, &TrainerSession::finished, this,
          [this](train::FinishState state, const QString& reason) {
            const auto& r = m_session->lastResult();
            QString text = QString::fromStdString(train::finishStateName(state)) + ": " + reason;
            if (r.hasTest)
              text += tr("; test accuracy %1%").arg(100.0 * r.test.accuracy, 0, 'f', 2);
            if (state == train::FinishState::Failed) {
              spdlog::error("{}", text.toStdString());
              showBanner(tr("Training failed: %1").arg(reason));
            } else {
              spdlog::info("{}", text.toStdString());
            }
            m_runState->setText(text);
            m_progress->setFormat(QStringLiteral("%p%"));
            const bool lrFind = m_lrFindRun;
            m_lrFindRun = false;
            updateActions();
            if (lrFind && state != train::FinishState::Failed && !r.lrFind.lrs.empty()) {
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
          });
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
  config.project = doc.project();
  config.baseDir = doc.baseDir().toStdString();
  config.runsRoot = (doc.baseDir() + QStringLiteral("/runs")).toStdString();
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
    Problems ignored;
    const auto options = train::parseTrainOptions(config.project.train,
                                                  train::ScheduleRegistry::withBuiltins(), ignored);
    dashboard()->configure(options.clipGradNorm, QString::fromStdString(options.monitor.name),
                           options.monitor.maximize);
  }
  QString error;
  if (!m_session->start(std::move(config), &error)) {
    m_lrFindRun = false;
    statusBar()->showMessage(error, 5000);
    return false;
  }
  m_runState->setText(what);
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
  // Resume in the checkpoint's run folder: <run>/checkpoints/last.safetensors.
  const QDir runDir = QFileInfo(checkpoint).absoluteDir().filePath(QStringLiteral(".."));
  if (QFileInfo::exists(runDir.filePath(QStringLiteral("events.jsonl"))))
    config.runDir = QDir::cleanPath(runDir.absolutePath()).toStdString();
  if (startRun(config, tr("Resuming from %1").arg(QFileInfo(checkpoint).fileName())))
    m_pages->showPage(ProjectPages::DashboardPage);
}

void MainWindow::runLrFinder() {
  train::TrainerConfig config;
  if (!fillConfig(config)) return;
  config.lrFind = true;
  if (config.project.train.is_object()) config.project.train.erase("local_processes");
  m_lrFindRun = true;
  startRun(config, tr("LR finder: preparing"));
}

void MainWindow::togglePause() {
  if (!m_session->isRunning()) return;
  if (m_pause->isChecked()) {
    m_session->pause();
    m_runState->setText(tr("Paused"));
  } else {
    m_session->resume();
    m_runState->setText(tr("Training"));
  }
}

void MainWindow::updateActions() {
  const bool running = m_session->isRunning();
  const bool open = !m_document->filePath().isEmpty();
  const QString blocked = m_pages->trainingPage()->blockedReason();
  m_start->setEnabled(!running && open && blocked.isEmpty());
  m_start->setToolTip(blocked.isEmpty() ? tr("Start training (F5)")
                                        : tr("Start is disabled: %1").arg(blocked));
  m_start->setStatusTip(m_start->toolTip());
  m_resume->setEnabled(!running && open);
  m_lrFind->setEnabled(!running && open);
  m_pause->setEnabled(running);
  if (!running) m_pause->setChecked(false);
  m_stop->setEnabled(running);
  m_stopAfterEpoch->setEnabled(running);
  for (auto* a : m_exportActions)
    a->setEnabled(!m_checkpoint.isEmpty() && !m_exporting);
  m_checkpointInfo->setText(m_checkpoint.isEmpty()
                                ? tr("No checkpoint yet: train, or choose one")
                                : tr("Checkpoint: %1").arg(QDir::toNativeSeparators(m_checkpoint)));
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
    m_runState->setText(tr("Stopping: writing a checkpoint"));
    m_session->stopAndWait(2000);
  }
  saveSettings();
  event->accept();
}

void MainWindow::buildMenus() {
  // File
  QMenu* file = menuBar()->addMenu(tr("&File"));
  QMenu* fromTemplate = file->addMenu(tr("&New from template"));
  fromTemplate->setObjectName(QStringLiteral("menuNewFromTemplate"));
  const QDir templates(m_templatesDir);
  for (const auto& info :
       templates.entryInfoList({QStringLiteral("*.netsmith.json")}, QDir::Files, QDir::Name)) {
    QString name = info.fileName();
    name.chop(int(qstrlen(".netsmith.json")));
    QAction* a = fromTemplate->addAction(
        name, this, [this, path = info.absoluteFilePath()] { newFromTemplate(path); });
    a->setObjectName(QStringLiteral("actionTemplate_") + name);
  }
  if (fromTemplate->isEmpty())
    fromTemplate->addAction(tr("(no templates found)"))->setEnabled(false);
  QAction* open = file->addAction(tr("&Open..."), this, &MainWindow::openWithDialog);
  open->setObjectName(QStringLiteral("actionOpen"));
  open->setShortcut(QKeySequence::Open);
  m_recentMenu = file->addMenu(tr("Open &Recent"));
  m_recentMenu->setObjectName(QStringLiteral("menuRecent"));
  connect(m_recentMenu, &QMenu::aboutToShow, this, &MainWindow::rebuildRecentMenu);
  file->addSeparator();
  m_save = file->addAction(tr("&Save"), this, &MainWindow::save);
  m_save->setObjectName(QStringLiteral("actionSave"));
  m_save->setShortcut(QKeySequence::Save);
  QAction* saveAsAction = file->addAction(tr("Save &As..."), this, &MainWindow::saveAs);
  saveAsAction->setObjectName(QStringLiteral("actionSaveAs"));
  saveAsAction->setShortcut(QKeySequence::SaveAs);
  file->addSeparator();
  QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
  quit->setShortcut(QKeySequence::Quit);
  quit->setMenuRole(QAction::QuitRole);

  // Edit
  QMenu* edit = menuBar()->addMenu(tr("&Edit"));
  QAction* undo = m_document->undoStack()->createUndoAction(this, tr("&Undo"));
  undo->setObjectName(QStringLiteral("actionUndo"));
  undo->setShortcut(QKeySequence::Undo);
  QAction* redo = m_document->undoStack()->createRedoAction(this, tr("&Redo"));
  redo->setObjectName(QStringLiteral("actionRedo"));
  redo->setShortcut(QKeySequence::Redo);
  edit->addAction(undo);
  edit->addAction(redo);
  edit->addSeparator();
  edit->addAction(tr("Re&name project..."), this, &MainWindow::renameProject)
      ->setObjectName(QStringLiteral("actionRename"));
  edit->addSeparator();
  QAction* prefs = edit->addAction(tr("&Preferences..."), this, &MainWindow::showPreferences);
  prefs->setObjectName(QStringLiteral("actionPreferences"));
  prefs->setShortcut(QKeySequence::Preferences);
  prefs->setMenuRole(QAction::PreferencesRole);

  // View
  QMenu* view = menuBar()->addMenu(tr("&View"));
  const QStringList pageNames = {tr("&Model"),     tr("&Data"), tr("&Augment"),   tr("&Training"),
                                 tr("Dash&board"), tr("&Runs"), tr("&Evaluation")};
  for (int i = 0; i < pageNames.size(); ++i) {
    QAction* a = view->addAction(pageNames[i], this,
                                 [this, i] { m_pages->showPage(ProjectPages::Page(i)); });
    a->setShortcut(QKeySequence(Qt::CTRL | Qt::Key(Qt::Key_1 + i)));
  }
  view->addSeparator();
  QAction* logToggle = m_logDock->toggleViewAction();
  logToggle->setObjectName(QStringLiteral("actionShowLog"));
  logToggle->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_L));
  view->addAction(logToggle);
  QAction* toolBarToggle = m_toolBar->toggleViewAction();
  toolBarToggle->setObjectName(QStringLiteral("actionShowToolBar"));
  view->addAction(toolBarToggle);
  QAction* reset = view->addAction(tr("Reset &layout"), this, [this] {
    restoreState(m_defaultState);
    m_logDock->show();
    m_toolBar->show();
  });
  reset->setObjectName(QStringLiteral("actionResetLayout"));
  QMenu* theme = view->addMenu(tr("T&heme"));
  m_themeGroup = new QActionGroup(this);
  const QList<QPair<QString, QString>> themes = {
      {QStringLiteral("system"), tr("Follow the system")},
      {QStringLiteral("light"), tr("Light")},
      {QStringLiteral("dark"), tr("Dark")}};
  for (const auto& [id, title] : themes) {
    QAction* a = theme->addAction(title, this, [this, id = id] { setTheme(id); });
    a->setCheckable(true);
    a->setData(id);
    a->setObjectName(QStringLiteral("actionTheme_") + id);
    m_themeGroup->addAction(a);
  }

  // Train
  QMenu* trainMenu = menuBar()->addMenu(tr("&Train"));
  m_start = trainMenu->addAction(tr("&Start"), this, &MainWindow::startTraining);
  m_start->setObjectName(QStringLiteral("actionTrainStart"));
  m_start->setShortcut(Qt::Key_F5);
  m_pause = trainMenu->addAction(tr("&Pause"), this, &MainWindow::togglePause);
  m_pause->setObjectName(QStringLiteral("actionTrainPause"));
  m_pause->setCheckable(true);
  m_pause->setShortcut(Qt::Key_F6);
  m_stop = trainMenu->addAction(tr("S&top"), this, [this] { m_session->stop(); });
  m_stop->setObjectName(QStringLiteral("actionTrainStop"));
  m_stop->setShortcut(QKeySequence(Qt::SHIFT | Qt::Key_F5));
  m_stopAfterEpoch = trainMenu->addAction(tr("Stop after this &epoch"), this,
                                          [this] { m_session->stopAfterEpoch(); });
  m_stopAfterEpoch->setObjectName(QStringLiteral("actionTrainStopAfterEpoch"));
  trainMenu->addSeparator();
  m_resume = trainMenu->addAction(tr("&Resume from checkpoint..."), this, [this] {
    const QString start = m_checkpoint.isEmpty() ? m_document->baseDir() + QStringLiteral("/runs")
                                                 : QFileInfo(m_checkpoint).absolutePath();
    const QString path = QFileDialog::getOpenFileName(this, tr("Resume from checkpoint"), start,
                                                      tr("Checkpoints (*.safetensors)"));
    if (!path.isEmpty()) resumeFrom(path);
  });
  m_resume->setObjectName(QStringLiteral("actionTrainResume"));
  m_lrFind = trainMenu->addAction(tr("Run &LR finder"), this, &MainWindow::runLrFinder);
  m_lrFind->setObjectName(QStringLiteral("actionTrainLrFind"));

  // Export: exactly what the core registry holds.
  m_exportMenu = menuBar()->addMenu(tr("E&xport"));
  for (const auto& exporter : exporting::listExporters()) {
    const QString name = QString::fromStdString(exporter.name);
    QAction* a = m_exportMenu->addAction(QString::fromStdString(exporter.title), this,
                                         [this, name] { exportCurrent(name); });
    a->setObjectName(QStringLiteral("actionExport_") + name);
    a->setToolTip(QString::fromStdString(exporter.help));
    a->setStatusTip(QString::fromStdString(exporter.help));
    m_exportActions << a;
  }
  if (!m_exportActions.isEmpty())
    m_exportActions.front()->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
  m_exportMenu->addSeparator();
  m_checkpointInfo = m_exportMenu->addAction(QString());
  m_checkpointInfo->setEnabled(false);
  m_exportMenu->addAction(tr("Choose &checkpoint..."), this,
                          &MainWindow::chooseCheckpointForExport);

  // Help
  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&Environment..."), this, &MainWindow::showEnvironment)
      ->setObjectName(QStringLiteral("actionEnvironment"));
  help->addAction(tr("&About Netsmith"), this, &MainWindow::showAbout)
      ->setMenuRole(QAction::AboutRole);
  updateActions();
}

void MainWindow::buildToolBar() {
  m_toolBar->setToolButtonStyle(Qt::ToolButtonTextOnly);
  m_toolBar->addAction(findChild<QAction*>(QStringLiteral("actionOpen")));
  m_toolBar->addAction(m_save);
  m_toolBar->addSeparator();
  for (auto* a : {m_start, m_pause, m_stop})
    m_toolBar->addAction(a);
  m_toolBar->addSeparator();
  if (!m_exportActions.isEmpty()) {
    auto* exportButton = new QToolButton(m_toolBar);
    exportButton->setText(tr("Export"));
    exportButton->setMenu(m_exportMenu);
    exportButton->setPopupMode(QToolButton::InstantPopup);
    m_toolBar->addWidget(exportButton);
  }
}

void MainWindow::exportCurrent(const QString& exporter) {
  if (m_checkpoint.isEmpty() || m_exporting) return;
  const QString checkpoint = m_checkpoint;
  exporting::ExportJob job;
  job.checkpoint = checkpoint.toStdString();
  try {
    job.targets = exporting::defaultExportTargets(job.checkpoint, exporter.toStdString());
  } catch (const std::exception& e) {
    showBanner(QString::fromStdString(e.what()));
    return;
  }
  m_exporting = true;
  updateActions();
  statusBar()->showMessage(tr("Exporting %1 from %2...").arg(exporter, checkpoint));
  spdlog::info("exporting {} from {}", exporter.toStdString(), job.checkpoint);
  QPointer<MainWindow> self(this);
  std::thread([self, job, checkpoint] {
    exporting::ExportJobResult result;
    QString error;
    try {
      result = exporting::runExportJob(job);
    } catch (const std::exception& e) {
      error = QString::fromStdString(e.what());
    }
    QMetaObject::invokeMethod(
        qApp,
        [self, result, error, checkpoint] {
          if (!self) return;
          self->m_exporting = false;
          self->updateActions();
          ExportReportDialog* dialog = error.isEmpty()
                                           ? new ExportReportDialog(checkpoint, result, self)
                                           : new ExportReportDialog(checkpoint, error, self);
          dialog->setAttribute(Qt::WA_DeleteOnClose);
          const bool ok = error.isEmpty() && dialog->passed();
          if (ok) {
            self->statusBar()->showMessage(tr("Export verified"), 8000);
            spdlog::info("{}", dialog->reportText().toStdString());
          } else {
            self->showBanner(error.isEmpty() ? tr("The export was not verified: see the report")
                                             : tr("Export failed: %1").arg(error));
            spdlog::error("{}", dialog->reportText().toStdString());
          }
          const QString report = dialog->reportText();
          dialog->open();
          Q_EMIT self->exportFinished(ok, report);
        },
        Qt::QueuedConnection);
  }).detach();
}

void MainWindow::chooseCheckpointForExport() {
  const QString start = m_checkpoint.isEmpty() ? m_document->baseDir() + QStringLiteral("/runs")
                                               : QFileInfo(m_checkpoint).absolutePath();
  const QString path = QFileDialog::getOpenFileName(this, tr("Choose a checkpoint"), start,
                                                    tr("Checkpoints (*.safetensors)"));
  if (!path.isEmpty()) setCurrentCheckpoint(path);
}

bool MainWindow::openProject(const QString& path, bool quiet) {
  if (!quiet && !maybeSave()) return false;
  if (m_session->isRunning()) {
    const QString why = tr("Stop the run before opening another project");
    if (!quiet) QMessageBox::information(this, tr("Training in progress"), why);
    statusBar()->showMessage(why, 5000);
    return false;
  }
  if (m_document->load(path)) {
    statusBar()->showMessage(tr("Opened %1").arg(path), 5000);
    spdlog::info("opened {}", path.toStdString());
    addRecent(QFileInfo(path).absoluteFilePath());
    setCurrentCheckpoint({});
    dashboard()->clear();
    dashboard()->clearOverlays();
    hideBanner();
    updateActions();
    return true;
  }
  if (!quiet) QMessageBox::warning(this, tr("Cannot open project"), m_document->errorString());
  spdlog::error("{}", m_document->errorString().toStdString());
  statusBar()->showMessage(m_document->errorString());
  return false;
}

void MainWindow::openWithDialog() {
  const QString path =
      QFileDialog::getOpenFileName(this, tr("Open project"), QString(),
                                   tr("Netsmith projects (*.netsmith.json);;JSON (*.json)"));
  if (!path.isEmpty()) openProject(path);
}

void MainWindow::newFromTemplate(const QString& templatePath) {
  if (!maybeSave()) return;
  QString name = QFileInfo(templatePath).fileName();
  const QString target = QFileDialog::getSaveFileName(this, tr("New project from %1").arg(name),
                                                      QDir::home().filePath(name),
                                                      tr("Netsmith projects (*.netsmith.json)"));
  if (target.isEmpty()) return;
  if (!m_document->createFromTemplate(templatePath, target)) {
    QMessageBox::warning(this, tr("Cannot create the project"), m_document->errorString());
    return;
  }
  addRecent(QFileInfo(target).absoluteFilePath());
  dashboard()->clear();
  setCurrentCheckpoint({});
  updateActions();
}

bool MainWindow::save() {
  if (m_document->filePath().isEmpty()) return saveAs();
  if (!m_document->save()) {
    QMessageBox::warning(this, tr("Cannot save"), m_document->errorString());
    return false;
  }
  statusBar()->showMessage(tr("Saved %1").arg(m_document->filePath()), 5000);
  return true;
}

bool MainWindow::saveAs() {
  const QString path =
      QFileDialog::getSaveFileName(this, tr("Save project as"), m_document->filePath(),
                                   tr("Netsmith projects (*.netsmith.json)"));
  if (path.isEmpty()) return false;
  if (!m_document->save(path)) {
    QMessageBox::warning(this, tr("Cannot save"), m_document->errorString());
    return false;
  }
  addRecent(QFileInfo(path).absoluteFilePath());
  statusBar()->showMessage(tr("Saved %1").arg(path), 5000);
  return true;
}

bool MainWindow::maybeSave() {
  if (!m_document->isModified()) return true;
  const auto answer = QMessageBox::warning(
      this, tr("Unsaved changes"),
      tr("%1 has unsaved changes. Save them?")
          .arg(QString::fromStdString(m_document->project().name)),
      QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
  if (answer == QMessageBox::Save) return save();
  return answer == QMessageBox::Discard;
}

QStringList MainWindow::recentFiles() const {
  return QSettings().value(QStringLiteral("recentFiles")).toStringList();
}

void MainWindow::addRecent(const QString& path) {
  QStringList list = recentFiles();
  list.removeAll(path);
  list.prepend(path);
  while (list.size() > kMaxRecent)
    list.removeLast();
  QSettings().setValue(QStringLiteral("recentFiles"), list);
}

void MainWindow::rebuildRecentMenu() {
  m_recentMenu->clear();
  const QStringList list = recentFiles();
  for (int i = 0; i < list.size(); ++i) {
    const QString path = list[i];
    QAction* a = m_recentMenu->addAction(QStringLiteral("&%1 %2").arg(i + 1).arg(path), this,
                                         [this, path] { openProject(path); });
    a->setEnabled(QFileInfo::exists(path));
  }
  if (list.isEmpty()) {
    m_recentMenu->addAction(tr("(none)"))->setEnabled(false);
  } else {
    m_recentMenu->addSeparator();
    m_recentMenu->addAction(tr("Clear the list"), this,
                            [] { QSettings().remove(QStringLiteral("recentFiles")); });
  }
}

void MainWindow::showBanner(const QString& text) {
  m_bannerText->setText(text);
  m_banner->show();
}

void MainWindow::hideBanner() {
  m_banner->hide();
  m_bannerText->clear();
}

QString MainWindow::bannerText() const {
  return m_banner->isHidden() ? QString() : m_bannerText->text();
}

void MainWindow::setTheme(const QString& theme) {
  applyTheme(theme);
  dashboard()->applyPalette();
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

void MainWindow::restoreSettings() {
  QSettings s;
  restoreGeometry(s.value(QStringLiteral("window/geometry")).toByteArray());
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
  updateActions();
}

}  // namespace netsmith::ui
