// MainWindow's menus, tool bar and the state of their actions.
#include <QAction>
#include <QActionGroup>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QListWidget>
#include <QMenuBar>
#include <QSettings>
#include <QStatusBar>
#include <QToolBar>
#include <QToolButton>
#include <QUndoStack>

#include "editor/model_page.h"
#include "export/export_job.h"
#include "forms/training_page.h"
#include "run/run_layout.h"
#include "session/project_document.h"
#include "session/trainer_session.h"
#include "shell/main_window.h"
#include "shell/project_pages.h"
#include "util/background_job.h"
#include "util/elided_label.h"

namespace netsmith::ui {

namespace {

constexpr int kMaxRecent = 8;

/// Names `action` (tests and the tool bar find it by name) and gives it a shortcut.
QAction* setUp(QAction* action, const char* objectName, const QKeySequence& shortcut = {}) {
  if (objectName) action->setObjectName(QLatin1String(objectName));
  if (!shortcut.isEmpty()) action->setShortcut(shortcut);
  return action;
}

}  // namespace

void MainWindow::buildMenus() {
  buildFileMenu();
  buildEditMenu();
  buildViewMenu();
  buildTrainMenu();
  buildExportMenu();
  QMenu* help = menuBar()->addMenu(tr("&Help"));
  setUp(help->addAction(tr("&Guide for this page"), this, [this] { showGuide(); }), "actionGuide",
        QKeySequence::HelpContents)
      ->setToolTip(tr("The user guide's page for what the window shows"));
  setUp(help->addAction(tr("Guide &contents"), this,
                        [this] { showGuide(QStringLiteral("README.md")); }),
        "actionGuideContents");
  setUp(help->addAction(tr("Command-line &reference"), this,
                        [this] { showGuide(QStringLiteral("../cli.md")); }),
        "actionCliReference");
  help->addSeparator();
  setUp(help->addAction(tr("&Environment..."), this, &MainWindow::showEnvironment),
        "actionEnvironment");
  help->addAction(tr("&About Netsmith"), this, &MainWindow::showAbout)
      ->setMenuRole(QAction::AboutRole);
  updateActions();
}

void MainWindow::buildFileMenu() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  setUp(file->addAction(tr("&New project..."), this, &MainWindow::newBlankWithDialog),
        "actionNewBlank", QKeySequence::New)
      ->setToolTip(tr("A project with only its Input, for the task you choose: the data and "
                      "training settings of that task's template"));
  setUp(file->addAction(tr("New from &data..."), this, &MainWindow::newFromDataWithDialog),
        "actionNewFromData", QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_N))
      ->setToolTip(tr("Point at your data (class folders, a CSV manifest, images with masks, a "
                      "YOLO, COCO or VOC set): the studio recognises it and proposes a project "
                      "you can change before it is written"));
  setUp(file->addAction(tr("&Import model..."), this, &MainWindow::importModelWithDialog),
        "actionImportModel", QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_I))
      ->setToolTip(tr("An ONNX classifier (ResNet, MobileNet, EfficientNet, ...) as an editable "
                      "graph, its weights to fine-tune from"));
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
  setUp(file->addAction(tr("&Open..."), this, &MainWindow::openWithDialog), "actionOpen",
        QKeySequence::Open);
  m_recentMenu = file->addMenu(tr("Open &Recent"));
  m_recentMenu->setObjectName(QStringLiteral("menuRecent"));
  connect(m_recentMenu, &QMenu::aboutToShow, this, &MainWindow::rebuildRecentMenu);
  file->addSeparator();
  m_save = setUp(file->addAction(tr("&Save"), this, &MainWindow::save), "actionSave",
                 QKeySequence::Save);
  setUp(file->addAction(tr("Save &As..."), this, &MainWindow::saveAs), "actionSaveAs",
        QKeySequence::SaveAs);
  m_close = setUp(file->addAction(tr("&Close project"), this, [this] { closeProject(); }),
                  "actionCloseProject", QKeySequence(Qt::CTRL | Qt::Key_W));
  file->addSeparator();
  setUp(file->addAction(tr("&Quit"), this, &QWidget::close), nullptr, QKeySequence::Quit)
      ->setMenuRole(QAction::QuitRole);
}

void MainWindow::buildEditMenu() {
  QMenu* edit = menuBar()->addMenu(tr("&Edit"));
  edit->addAction(setUp(m_document->undoStack()->createUndoAction(this, tr("&Undo")), "actionUndo",
                        QKeySequence::Undo));
  edit->addAction(setUp(m_document->undoStack()->createRedoAction(this, tr("&Redo")), "actionRedo",
                        QKeySequence::Redo));
  edit->addSeparator();
  // On the model canvas; a focused text field keeps these keys for its own text.
  auto* model = m_pages->modelPage();
  const QList<QAction*> canvasActions = {
      setUp(edit->addAction(tr("Cu&t"), model, &ModelPage::cutSelection), "actionCut",
            QKeySequence::Cut),
      setUp(edit->addAction(tr("&Copy"), model, &ModelPage::copySelection), "actionCopy",
            QKeySequence::Copy),
      setUp(edit->addAction(tr("&Paste"), model, &ModelPage::pasteClipboard), "actionPaste",
            QKeySequence::Paste),
      setUp(edit->addAction(tr("&Delete"), model, &ModelPage::deleteSelection), "actionDelete",
            QKeySequence::Delete),
      setUp(edit->addAction(tr("Select &All"), model, &ModelPage::selectAllNodes),
            "actionSelectAll", QKeySequence::SelectAll)};
  // Only while the Model page is shown: elsewhere the keys belong to that page's widgets.
  auto follow = [this, canvasActions] {
    for (auto* a : canvasActions)
      a->setEnabled(m_pages->currentPage() == ProjectPages::ModelPage);
  };
  connect(m_pages->navigator(), &QListWidget::currentRowChanged, this, follow);
  follow();
  edit->addSeparator();
  setUp(edit->addAction(tr("Re&name project..."), this, &MainWindow::renameProject),
        "actionRename");
  edit->addSeparator();
  setUp(edit->addAction(tr("&Preferences..."), this, &MainWindow::showPreferences),
        "actionPreferences", QKeySequence::Preferences)
      ->setMenuRole(QAction::PreferencesRole);
}

void MainWindow::buildViewMenu() {
  QMenu* view = menuBar()->addMenu(tr("&View"));
  const QStringList pageNames = {tr("&Model"),      tr("&Data"),       tr("&Augment"),
                                 tr("&Training"),   tr("Dash&board"),  tr("&Runs"),
                                 tr("&Evaluation"), tr("E&xperiments")};
  for (int i = 0; i < pageNames.size(); ++i)
    setUp(view->addAction(pageNames[i], this,
                          [this, i] { m_pages->showPage(ProjectPages::Page(i)); }),
          nullptr, QKeySequence(Qt::CTRL | Qt::Key(Qt::Key_1 + i)));
  view->addSeparator();
  view->addAction(
      setUp(m_logDock->toggleViewAction(), "actionShowLog", QKeySequence(Qt::CTRL | Qt::Key_L)));
  view->addAction(setUp(m_toolBar->toggleViewAction(), "actionShowToolBar"));
  setUp(view->addAction(tr("Reset &layout"), this,
                        [this] {
                          restoreState(m_defaultState);
                          m_logDock->show();
                          m_toolBar->show();
                        }),
        "actionResetLayout");
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
}

void MainWindow::buildTrainMenu() {
  QMenu* trainMenu = menuBar()->addMenu(tr("&Train"));
  m_start = setUp(trainMenu->addAction(tr("&Start"), this, &MainWindow::startTraining),
                  "actionTrainStart", QKeySequence(Qt::Key_F5));
  m_pause = setUp(trainMenu->addAction(tr("&Pause"), this, &MainWindow::togglePause),
                  "actionTrainPause", QKeySequence(Qt::Key_F6));
  m_pause->setCheckable(true);
  m_stop = setUp(trainMenu->addAction(tr("S&top"), this, [this] { m_session->stop(); }),
                 "actionTrainStop", QKeySequence(Qt::SHIFT | Qt::Key_F5));
  m_stopAfterEpoch =
      setUp(trainMenu->addAction(tr("Stop after this &epoch"), this,
                                 [this] {
                                   m_session->stopAfterEpoch();
                                   // Armed: said on the action and in the bar.
                                   m_stopAfterEpoch->setText(tr("Stop after this &epoch (armed)"));
                                   m_stopAfterEpoch->setEnabled(false);
                                   m_runState->setFullText(tr("Stopping after this epoch"));
                                 }),
            "actionTrainStopAfterEpoch");
  trainMenu->addSeparator();
  m_resume = setUp(trainMenu->addAction(tr("&Resume from checkpoint..."), this,
                                        [this] {
                                          const QString path =
                                              pickCheckpoint(tr("Resume from checkpoint"));
                                          if (!path.isEmpty()) resumeFrom(path);
                                        }),
                   "actionTrainResume");
  m_resumeLast = setUp(trainMenu->addAction(tr("Resume &last run"), this,
                                            [this] {
                                              const QString path = latestCheckpoint(true);
                                              if (path.isEmpty())
                                                statusBar()->showMessage(
                                                    tr("This project has no run with a last "
                                                       "checkpoint to resume"),
                                                    5000);
                                              else
                                                resumeFrom(path);
                                            }),
                       "actionTrainResumeLast", QKeySequence(Qt::CTRL | Qt::Key_F5));
  m_resumeLast->setToolTip(
      tr("Go on with the project's newest run from its last checkpoint, in the same run folder"));
  m_lrFind = setUp(trainMenu->addAction(tr("Run &LR finder"), this, &MainWindow::runLrFinder),
                   "actionTrainLrFind");
}

void MainWindow::buildExportMenu() {
  // Exactly what the core registry holds.
  m_exportMenu = menuBar()->addMenu(tr("E&xport"));
  for (const auto& exporter : exporting::listExporters(*m_document->registries())) {
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
  // Every format at once, into a folder the user picks (the run's exports/ folder to start).
  QAction* toFolder = m_exportMenu->addAction(tr("Export all &to folder..."), this, [this] {
    const QString folder = QFileDialog::getExistingDirectory(
        this, tr("Export to folder"),
        QString::fromStdString(exporting::defaultExportFolder(m_checkpoint.toStdString())));
    if (!folder.isEmpty()) exportCurrent(QString(), folder);
  });
  toFolder->setObjectName(QStringLiteral("actionExportToFolder"));
  toFolder->setShortcut(QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_E));
  toFolder->setToolTip(
      tr("ONNX, safetensors and PyTorch files of the checkpoint, in a folder "
         "you choose"));
  m_exportActions << toFolder;
  m_exportMenu->addSeparator();
  m_checkpointInfo = m_exportMenu->addAction(QString());
  m_checkpointInfo->setEnabled(false);
  m_exportMenu->addAction(tr("Choose &checkpoint..."), this, [this] {
    const QString path = pickCheckpoint(tr("Choose a checkpoint"));
    if (!path.isEmpty()) setCurrentCheckpoint(path);
  });
}

QString MainWindow::pickCheckpoint(const QString& title) {
  const QString start =
      m_checkpoint.isEmpty()
          ? QString::fromStdString(run_layout::runsRoot(m_document->baseDir().toStdString()))
          : QFileInfo(m_checkpoint).absolutePath();
  return QFileDialog::getOpenFileName(this, title, start, tr("Checkpoints (*.safetensors)"));
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

void MainWindow::updateActions() {
  const bool running = m_session->isRunning();
  const bool open = !m_document->filePath().isEmpty();
  const QString blocked = m_pages->trainingPage()->blockedReason();
  m_start->setEnabled(!running && open && blocked.isEmpty());
  m_start->setToolTip(blocked.isEmpty() ? tr("Start training (F5)")
                                        : tr("Start is disabled: %1").arg(blocked));
  m_start->setStatusTip(m_start->toolTip());
  m_resume->setEnabled(!running && open);
  m_resumeLast->setEnabled(!running && open);
  m_close->setEnabled(open && !running);
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
  for (auto* a : m_exportActions)
    a->setEnabled(!m_checkpoint.isEmpty() && !m_exportJob->isRunning());
  m_checkpointInfo->setText(m_checkpoint.isEmpty()
                                ? tr("No checkpoint yet: train, or choose one")
                                : tr("Checkpoint: %1").arg(QDir::toNativeSeparators(m_checkpoint)));
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

}  // namespace netsmith::ui
