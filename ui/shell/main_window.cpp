#include "shell/main_window.h"

#include <spdlog/spdlog.h>
#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QDockWidget>
#include <QGuiApplication>
#include <QInputDialog>
#include <QResizeEvent>
#include <QScreen>
#include <QSettings>
#include <QSignalBlocker>
#include <QStackedWidget>
#include <QToolBar>
#include <QVBoxLayout>

#include "common/resource_paths.h"
#include "env/env_report.h"
#include "evaluation/task_view.h"
#include "monitor/dashboard.h"
#include "monitor/experiments_page.h"
#include "session/project_document.h"
#include "session/trainer_session.h"
#include "shell/banner.h"
#include "shell/dialogs.h"
#include "shell/export_controller.h"
#include "shell/guide_window.h"
#include "shell/log_panel.h"
#include "shell/project_files.h"
#include "shell/project_pages.h"
#include "shell/recent_files.h"
#include "shell/run_controller.h"
#include "shell/run_status.h"
#include "shell/start_page.h"
#include "util/theme_colors.h"
#include "util/wheel_guard.h"

namespace netsmith::ui {

MainWindow::MainWindow(RegistriesPtr registries, QWidget* parent)
    : MainWindow(std::move(registries), TaskViewRegistry::builtins(), parent) {}

MainWindow::MainWindow(RegistriesPtr registries, TaskViewsPtr views, QWidget* parent)
    : QMainWindow(parent),
      m_document(new ProjectDocument(std::move(registries), this)),
      m_session(new TrainerSession(this)) {
  setObjectName(QStringLiteral("mainWindow"));
  setWindowTitle(tr("Netsmith"));
  resizeWithinScreen(QSize(1360, 860));
  const QString templatesDir =
      QString::fromStdString(netsmith::findTemplatesDir(NETSMITH_RESOURCE_DIR));
  qApp->installEventFilter(new WheelGuard(this));

  // Central: the error banner over the project's pages, or the start page while no project is
  // open (recent projects, examples, New / Open / Import).
  auto* central = new QWidget(this);
  auto* layout = new QVBoxLayout(central);
  layout->setContentsMargins(4, 4, 4, 0);
  m_banner = new Banner(central);
  m_pages = new ProjectPages(m_document, std::move(views), central);
  m_startPage = new StartPage(m_document->registry(), templatesDir, central);
  m_centralStack = new QStackedWidget(central);
  m_centralStack->addWidget(m_startPage);
  m_centralStack->addWidget(m_pages);
  layout->addWidget(m_banner);
  layout->addWidget(m_centralStack, 1);
  setCentralWidget(central);

  m_runStatus = new RunStatus(statusBar());
  m_runs = new RunController(m_document, m_session, m_pages, m_runStatus, m_banner, this);
  m_files = new ProjectFiles(m_document, m_session, m_pages, m_runs, m_banner, templatesDir, this);
  m_exports = new ExportController(m_document, m_runs, m_banner, this);
  connectStartPage();
  buildDocks();
  m_toolBar = addToolBar(tr("Toolbar"));
  m_toolBar->setObjectName(QStringLiteral("mainToolBar"));
  buildMenus();
  buildToolBar();
  connect(m_runs, &RunController::changed, this, &MainWindow::updateActions);
  connect(m_document, &ProjectDocument::projectChanged, this, &MainWindow::refresh);
  connect(m_document, &ProjectDocument::modifiedChanged, this, &MainWindow::updateTitle);
  connect(m_document, &ProjectDocument::modelChanged, this, &MainWindow::updateTitle);
  // A sweep runs in its own processes: the status bar says so while it runs.
  connect(m_pages->experimentsPage(), &ExperimentsPage::sweepStarted, this, [this] {
    if (!m_session->isRunning()) m_runStatus->setText(tr("Sweep running (Experiments page)"));
  });
  connect(m_pages->experimentsPage(), &ExperimentsPage::sweepEnded, this, [this](bool finished) {
    if (!m_session->isRunning())
      m_runStatus->setText(finished ? tr("Sweep finished") : tr("Sweep stopped"));
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

void MainWindow::connectStartPage() {
  connect(m_startPage, &StartPage::openRequested, this, [this](const QString& path) {
    if (m_files->maybeSave()) m_files->openProject(path);
  });
  connect(m_startPage, &StartPage::templateChosen, m_files, &ProjectFiles::newFromTemplate);
  connect(m_startPage, &StartPage::newBlankRequested, m_files, &ProjectFiles::newBlankWithDialog);
  connect(m_startPage, &StartPage::newFromDataRequested, m_files,
          [this] { m_files->newFromDataIn(); });
  connect(m_startPage, &StartPage::exampleDataMade, m_files, &ProjectFiles::newFromDataIn);
  connect(m_startPage, &StartPage::openDialogRequested, m_files, &ProjectFiles::openWithDialog);
  connect(m_startPage, &StartPage::importRequested, m_files, &ProjectFiles::importModelWithDialog);
}

bool MainWindow::openProject(const QString& path, bool quiet) {
  return m_files->openProject(path, quiet);
}

Dashboard* MainWindow::dashboard() const {
  return m_pages->dashboard();
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

void MainWindow::closeEvent(QCloseEvent* event) {
  if (!m_files->maybeSave()) {
    event->ignore();
    return;
  }
  if (m_session->isRunning()) {
    m_runStatus->setText(tr("Stopping: writing a checkpoint"));
    m_session->stopAndWait(2000);
  }
  saveSettings();
  event->accept();
}

QString MainWindow::runStateText() const {
  return m_runStatus->text();
}

QString MainWindow::bannerText() const {
  return m_banner->text();
}

void MainWindow::setTheme(const QString& theme) {
  applyTheme(theme);
  m_banner->restyle();
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
    case ProjectPages::PredictPage:
      return QStringLiteral("evaluation.md#predicting-on-new-images");
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
  if (!open) m_startPage->setRecent(RecentFiles::list());
  m_centralStack->setCurrentWidget(open ? static_cast<QWidget*>(m_pages) : m_startPage);
  updateActions();
}

}  // namespace netsmith::ui
