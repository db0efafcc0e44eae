#pragma once

#include <QMainWindow>
#include <QPointer>

#include "evaluation/task_views_fwd.h"
#include "registries/registries_fwd.h"

class QAction;
class QActionGroup;
class QDockWidget;
class QMenu;
class QStackedWidget;
class QToolBar;

namespace netsmith::ui {

class Banner;
class Dashboard;
class ExportController;
class GuideWindow;
class LogPanel;
class ProjectDocument;
class ProjectFiles;
class ProjectPages;
class RunController;
class RunStatus;
class StartPage;
class TrainerSession;

/// The studio's main window: the project's pages behind a navigator with the start page while
/// none is open, the menus and tool bar, the log dock and the status bar. It composes the
/// controllers that do the work: ProjectFiles (the file commands), RunController (training on
/// a background TrainerSession) and ExportController (exports through the core registry).
class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  /// `registries`: the program's, built in its main; the document hands them to every page.
  /// The program's registries and its task views (TaskViewRegistry::builtins() when not given).
  explicit MainWindow(RegistriesPtr registries, QWidget* parent = nullptr);
  MainWindow(RegistriesPtr registries, TaskViewsPtr views, QWidget* parent = nullptr);
  ~MainWindow() override;

  /// File > Open: ProjectFiles::openProject.
  bool openProject(const QString& path, bool quiet = false);
  ProjectDocument* document() const { return m_document; }
  TrainerSession* session() const { return m_session; }
  ProjectPages* pages() const { return m_pages; }
  ProjectFiles* files() const { return m_files; }
  RunController* runs() const { return m_runs; }
  ExportController* exports() const { return m_exports; }
  /// The page shown while no project is open.
  StartPage* startPage() const { return m_startPage; }
  Dashboard* dashboard() const;
  LogPanel* logPanel() const { return m_logPanel; }
  /// The error banner's text ("" while hidden).
  QString bannerText() const;
  /// The status bar's run state ("completed: trained 2 epochs; test accuracy ...").
  QString runStateText() const;
  /// The guide page for what the window shows: the start page's contents, each project page's
  /// topic, the Evaluation page its task's page (TaskDef::guidePage).
  QString guidePageForView() const;
  /// Help > Guide for this page (F1): the guide window, opened (or raised) at that page.
  GuideWindow* showGuide(const QString& page = {});

 protected:
  void closeEvent(QCloseEvent* event) override;
  /// On a short window (under 820 px) the log folds to one line, unless the user opened it.
  void resizeEvent(QResizeEvent* event) override;

 private:
  // Menus and tool bar: main_window_actions.cpp.
  void buildMenus();
  void buildEditMenu();
  void buildViewMenu();
  void buildHelpMenu();
  void buildToolBar();
  void buildDocks();
  void connectStartPage();
  void updateActions();
  void refresh();
  void updateTitle();
  void setTheme(const QString& theme);
  void showPreferences();
  void renameProject();
  void restoreSettings();
  /// Resizes to `wanted`, bounded by the screen's available area.
  void resizeWithinScreen(QSize wanted);
  void saveSettings();

  ProjectDocument* m_document;
  TrainerSession* m_session;
  ProjectPages* m_pages = nullptr;
  Banner* m_banner = nullptr;
  RunStatus* m_runStatus = nullptr;
  RunController* m_runs = nullptr;
  ProjectFiles* m_files = nullptr;
  ExportController* m_exports = nullptr;
  LogPanel* m_logPanel = nullptr;
  QDockWidget* m_logDock = nullptr;
  QToolBar* m_toolBar = nullptr;
  StartPage* m_startPage = nullptr;
  QPointer<GuideWindow> m_guide;
  QStackedWidget* m_centralStack = nullptr;
  QMenu* m_exportMenu = nullptr;
  QActionGroup* m_themeGroup = nullptr;
  QByteArray m_defaultState;
  bool m_logFoldedByUser = false;  ///< the user opened or folded the log: the window leaves it
};

}  // namespace netsmith::ui
