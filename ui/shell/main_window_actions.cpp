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

#include <QMessageBox>

#include "editor/model_page.h"
#include "netsmith/version.h"
#include "session/project_document.h"
#include "shell/dialogs.h"
#include "shell/export_controller.h"
#include "shell/main_window.h"
#include "shell/project_files.h"
#include "shell/project_pages.h"
#include "shell/run_controller.h"
#include "util/named_action.h"

namespace netsmith::ui {

void MainWindow::buildMenus() {
  m_files->buildMenu(menuBar()->addMenu(tr("&File")));
  buildEditMenu();
  buildViewMenu();
  m_runs->buildMenu(menuBar()->addMenu(tr("&Train")));
  m_exportMenu = m_exports->buildMenu(menuBar());
  buildHelpMenu();
  updateActions();
}

void MainWindow::buildHelpMenu() {
  QMenu* help = menuBar()->addMenu(tr("&Help"));
  namedAction(help->addAction(tr("&Guide for this page"), this, [this] { showGuide(); }),
              "actionGuide", QKeySequence::HelpContents)
      ->setToolTip(tr("The user guide's page for what the window shows"));
  namedAction(help->addAction(tr("Guide &contents"), this,
                              [this] { showGuide(QStringLiteral("README.md")); }),
              "actionGuideContents");
  namedAction(help->addAction(tr("Command-line &reference"), this,
                              [this] { showGuide(QStringLiteral("../cli.md")); }),
              "actionCliReference");
  help->addSeparator();
  namedAction(help->addAction(tr("&Environment..."), this,
                              [this] {
                                auto* dialog = new EnvironmentDialog(this);
                                dialog->setAttribute(Qt::WA_DeleteOnClose);
                                dialog->open();
                              }),
              "actionEnvironment");
  help->addAction(tr("&About Netsmith"), this,
                  [this] {
                    QMessageBox::about(this, tr("About Netsmith"),
                                       tr("<b>Netsmith %1</b><p>A desktop studio for convolutional "
                                          "networks.</p>")
                                           .arg(QStringLiteral(NETSMITH_VERSION)));
                  })
      ->setMenuRole(QAction::AboutRole);
}

void MainWindow::buildEditMenu() {
  QMenu* edit = menuBar()->addMenu(tr("&Edit"));
  edit->addAction(namedAction(m_document->undoStack()->createUndoAction(this, tr("&Undo")),
                              "actionUndo", QKeySequence::Undo));
  edit->addAction(namedAction(m_document->undoStack()->createRedoAction(this, tr("&Redo")),
                              "actionRedo", QKeySequence::Redo));
  edit->addSeparator();
  // On the model canvas; a focused text field keeps these keys for its own text.
  auto* model = m_pages->modelPage();
  const QList<QAction*> canvasActions = {
      namedAction(edit->addAction(tr("Cu&t"), model, &ModelPage::cutSelection), "actionCut",
                  QKeySequence::Cut),
      namedAction(edit->addAction(tr("&Copy"), model, &ModelPage::copySelection), "actionCopy",
                  QKeySequence::Copy),
      namedAction(edit->addAction(tr("&Paste"), model, &ModelPage::pasteClipboard), "actionPaste",
                  QKeySequence::Paste),
      namedAction(edit->addAction(tr("&Delete"), model, &ModelPage::deleteSelection),
                  "actionDelete", QKeySequence::Delete),
      namedAction(edit->addAction(tr("Select &All"), model, &ModelPage::selectAllNodes),
                  "actionSelectAll", QKeySequence::SelectAll)};
  // Only while the Model page is shown: elsewhere the keys belong to that page's widgets.
  auto follow = [this, canvasActions] {
    for (auto* a : canvasActions)
      a->setEnabled(m_pages->currentPage() == ProjectPages::ModelPage);
  };
  connect(m_pages->navigator(), &QListWidget::currentRowChanged, this, follow);
  follow();
  edit->addSeparator();
  namedAction(edit->addAction(tr("Re&name project..."), this, &MainWindow::renameProject),
              "actionRename");
  edit->addSeparator();
  namedAction(edit->addAction(tr("&Preferences..."), this, &MainWindow::showPreferences),
              "actionPreferences", QKeySequence::Preferences)
      ->setMenuRole(QAction::PreferencesRole);
}

void MainWindow::buildViewMenu() {
  QMenu* view = menuBar()->addMenu(tr("&View"));
  const QStringList pageNames = {tr("&Model"),      tr("&Data"),        tr("&Augment"),
                                 tr("&Training"),   tr("Dash&board"),   tr("&Runs"),
                                 tr("&Evaluation"), tr("E&xperiments"), tr("&Predict")};
  for (int i = 0; i < pageNames.size(); ++i)
    namedAction(view->addAction(pageNames[i], this,
                                [this, i] { m_pages->showPage(ProjectPages::Page(i)); }),
                nullptr, QKeySequence(Qt::CTRL | Qt::Key(Qt::Key_1 + i)));
  view->addSeparator();
  view->addAction(namedAction(m_logDock->toggleViewAction(), "actionShowLog",
                              QKeySequence(Qt::CTRL | Qt::Key_L)));
  view->addAction(namedAction(m_toolBar->toggleViewAction(), "actionShowToolBar"));
  namedAction(view->addAction(tr("Reset &layout"), this,
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

void MainWindow::buildToolBar() {
  m_toolBar->setToolButtonStyle(Qt::ToolButtonTextOnly);
  m_toolBar->addActions(m_files->toolBarActions());
  m_toolBar->addSeparator();
  m_toolBar->addActions(m_runs->toolBarActions());
  m_toolBar->addSeparator();
  if (m_exports->hasExporters()) {
    auto* exportButton = new QToolButton(m_toolBar);
    exportButton->setText(tr("Export"));
    exportButton->setMenu(m_exportMenu);
    exportButton->setPopupMode(QToolButton::InstantPopup);
    m_toolBar->addWidget(exportButton);
  }
}

void MainWindow::updateActions() {
  m_files->updateActions();
  m_runs->updateActions();
  m_exports->updateActions();
}

}  // namespace netsmith::ui
