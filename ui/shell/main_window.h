#pragma once

#include <QElapsedTimer>
#include <QMainWindow>
#include <QPointer>
#include <QStringList>

#include <cstdint>
#include <memory>

#include "evaluation/task_views_fwd.h"
#include "registries/registries_fwd.h"

class QAction;
class QActionGroup;
class QDockWidget;
class QFrame;
class QLabel;
class QMenu;
class QProgressBar;
class QStackedWidget;
class QToolBar;
class QToolButton;

namespace netsmith::run {
struct BatchMetrics;
struct RunRecord;
enum class FinishState;
}  // namespace netsmith::run
namespace netsmith::train {
struct TrainerConfig;
}  // namespace netsmith::train

namespace netsmith::project {
struct Project;
}

namespace netsmith::ui {

class BackgroundJob;
class Dashboard;
class ExportReportDialog;
class LogPanel;
class ProjectDocument;
class ProjectPages;
class GuideWindow;
class StartPage;
class ElidedLabel;
class TrainerSession;

/// The studio's main window: the project's pages behind a navigator, training on a background
/// TrainerSession with the live dashboard, exports through the core exporter registry, and a
/// log panel fed by spdlog.
class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  /// `registries`: the program's, built in its main; the document hands them to every page.
  /// The program's registries and its task views (TaskViewRegistry::builtins() when not given).
  explicit MainWindow(RegistriesPtr registries, QWidget* parent = nullptr);
  MainWindow(RegistriesPtr registries, TaskViewsPtr views, QWidget* parent = nullptr);
  ~MainWindow() override;

  /// Opens `path`; shows the error in a message box (unless `quiet`) and returns false on failure.
  /// Asks about unsaved changes first (unless `quiet`).
  bool openProject(const QString& path, bool quiet = false);
  /// File > New from template once the target is chosen: the new project replaces the open
  /// one, and the last run's figures are cleared.
  bool createProject(const QString& templatePath, const QString& target);
  /// File > New: a project for `task` ("classification", "multilabel", "regression",
  /// "segmentation") with only its Input, taking the input size, data and training settings of
  /// the task's template (NewProjectTaskDialog::choices()), saved as `target` and opened; false
  /// (the reason in lastError()) for a task the studio offers no template for.
  bool createBlankProject(const QString& target,
                          const QString& task = QStringLiteral("classification"));
  /// File > New from data without the dialog: the proposal for the data at `path`
  /// (import::proposeProject with every choice its own), saved as `target` and opened; false
  /// (the reason in lastError()) when the data cannot be used.
  bool createProjectFromData(const QString& path, const QString& target);
  /// File > Import model: the ONNX classifier `onnx` as a project saved as `target` (its weights
  /// next to it, as init_from) and opened; `input` ("3x224x224") when the file's is symbolic.
  /// False with the reason in lastError(), every unsupported node listed.
  bool importModel(const QString& onnx, const QString& target, const QString& input = {});
  /// File > Close project: asks about unsaved changes, refuses while a run or a sweep of the
  /// project goes on, and shows the start page with nothing of the project left on any page.
  bool closeProject(bool quiet = false);
  QString lastError() const { return m_lastError; }
  ProjectDocument* document() const { return m_document; }
  TrainerSession* session() const { return m_session; }
  ProjectPages* pages() const { return m_pages; }
  /// The page shown while no project is open.
  StartPage* startPage() const { return m_startPage; }
  Dashboard* dashboard() const;
  LogPanel* logPanel() const { return m_logPanel; }
  /// Train on at most this many training / validation samples (0: all); for quick runs.
  void setSampleLimits(std::int64_t train, std::int64_t validation);

  /// The checkpoint Export and Resume use: the current run's best (or last), or one chosen.
  QString currentCheckpoint() const { return m_checkpoint; }
  void setCurrentCheckpoint(const QString& path);
  /// Exports the current checkpoint with the named exporter (every one when empty) into
  /// `folder`, or the run's exports/ folder when that is empty (on a worker thread);
  /// exportFinished() and the report dialog follow.
  void exportCurrent(const QString& exporter, const QString& folder = QString());
  /// Continues the run of `checkpoint` exactly (Train > Resume from checkpoint).
  void resumeFrom(const QString& checkpoint);
  /// Runs the LR range test (Train > Run LR finder); its dialog opens when it ends.
  void runLrFinder();
  /// The error banner's text ("" while hidden).
  QString bannerText() const;
  /// The status bar's run state ("completed: trained 2 epochs; test accuracy ...").
  QString runStateText() const;
  QStringList recentFiles() const;
  /// The guide page for what the window shows: the start page's contents, each project page's
  /// topic, the Evaluation page its task's page (TaskDef::guidePage).
  QString guidePageForView() const;
  /// Help > Guide for this page (F1): the guide window, opened (or raised) at that page.
  GuideWindow* showGuide(const QString& page = {});

 Q_SIGNALS:
  void exportFinished(bool verified, const QString& report);

 protected:
  void closeEvent(QCloseEvent* event) override;
  /// On a short window (under 820 px) the log folds to one line, unless the user opened it.
  void resizeEvent(QResizeEvent* event) override;

 private:
  // Menus and tool bar: main_window_actions.cpp.
  void buildMenus();
  void buildFileMenu();
  void buildEditMenu();
  void buildViewMenu();
  void buildTrainMenu();
  void buildExportMenu();
  void buildToolBar();
  void buildStatusBar();
  void buildDocks();
  void connectSession();
  void showBatches(const QVector<run::BatchMetrics>& list);
  void runFinished(run::FinishState state, const QString& reason);
  void startTraining();
  bool startRun(train::TrainerConfig& config, const QString& what);
  bool fillConfig(train::TrainerConfig& config);
  void togglePause();
  void updateActions();
  void refresh();
  void updateTitle();
  void openWithDialog();
  void newFromTemplate(const QString& templatePath);
  void newBlankWithDialog();
  void newFromDataWithDialog();
  /// New from data with the dialog open on `data` (read at once; "" : the dialog asks).
  void newFromDataIn(const QString& data);
  void importModelWithDialog();
  /// Opens a project file just written (new, from a folder, imported) on the Model page.
  bool openCreatedProject(const QString& target);
  /// Saves `project` as `target` and opens it as a new document.
  bool openNewProject(const project::Project& project, const QString& target);
  bool save();
  bool saveAs();
  /// true when it is fine to drop the document (saved, discarded, or unmodified).
  bool maybeSave();
  /// Why the open project cannot be left now (a run or a sweep of it goes on); "" when it can.
  QString busyReason() const;
  void addRecent(const QString& path);
  void rebuildRecentMenu();
  /// The banner over the pages: an error (red), or a notice to read (neutral, e.g. what an
  /// import changed).
  void showBanner(const QString& text, bool error = true);
  void hideBanner();
  /// Another project: the last run's figures (charts, evaluation, status bar) no longer apply.
  void forgetRun();
  /// The best (else last) checkpoint of the project's newest run under its runs/ ("" for none);
  /// with `lastOnly`, its last.safetensors (what Train > Resume last run goes on from).
  QString latestCheckpoint(bool lastOnly = false) const;
  void setTheme(const QString& theme);
  void showPreferences();
  void showEnvironment();
  void showAbout();
  /// Asks for a checkpoint, starting in the current one's folder (or the project's runs/).
  QString pickCheckpoint(const QString& title);
  void showExportReport(ExportReportDialog* dialog, const QString& error);
  void renameProject();
  void restoreSettings();
  /// Resizes to `wanted`, bounded by the screen's available area.
  void resizeWithinScreen(QSize wanted);
  void saveSettings();

  ProjectDocument* m_document;
  TrainerSession* m_session;
  BackgroundJob* m_exportJob;
  ProjectPages* m_pages = nullptr;
  LogPanel* m_logPanel = nullptr;
  QDockWidget* m_logDock = nullptr;
  QToolBar* m_toolBar = nullptr;
  QFrame* m_banner = nullptr;
  QLabel* m_bannerText = nullptr;
  QLabel* m_device = nullptr;
  ElidedLabel* m_runState = nullptr;
  QToolButton* m_toEvaluation = nullptr;
  bool m_bannerIsError = true;
  StartPage* m_startPage = nullptr;
  QPointer<GuideWindow> m_guide;
  QStackedWidget* m_centralStack = nullptr;
  QProgressBar* m_progress = nullptr;
  QMenu* m_recentMenu = nullptr;
  QMenu* m_exportMenu = nullptr;
  QAction* m_save = nullptr;
  QAction* m_close = nullptr;
  QAction* m_start = nullptr;
  QAction* m_pause = nullptr;
  QAction* m_stop = nullptr;
  QAction* m_stopAfterEpoch = nullptr;
  QAction* m_resume = nullptr;
  QAction* m_resumeLast = nullptr;
  QAction* m_lrFind = nullptr;
  QAction* m_checkpointInfo = nullptr;
  QList<QAction*> m_exportActions;
  QActionGroup* m_themeGroup = nullptr;
  QByteArray m_defaultState;
  QString m_checkpoint;
  /// A resumed run's folder as it was before the resume, for the dashboard once it starts.
  std::unique_ptr<run::RunRecord> m_resumeHistory;
  QString m_templatesDir;
  bool m_lrFindRun = false;
  bool m_logFoldedByUser = false;  ///< the user opened or folded the log: the window leaves it
  QString m_lastError;             ///< why the last File > New failed
  std::int64_t m_limitTrain = 0;
  std::int64_t m_limitValidation = 0;
  std::int64_t m_firstStep = -1;
  double m_firstRunSeconds = 0;  ///< the first shown batch's training time
};

}  // namespace netsmith::ui
