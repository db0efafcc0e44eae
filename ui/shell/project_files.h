#pragma once

#include <QList>
#include <QObject>
#include <QString>

class QAction;
class QMainWindow;
class QMenu;

namespace netsmith::project {
struct Project;
}

namespace netsmith::ui {

class Banner;
class ProjectDocument;
class ProjectPages;
class RunController;
class TrainerSession;

/// The project file commands of the File menu and the start page: open, new (blank, from a
/// template, from data), import an ONNX model, save, save as, close, and the unsaved-changes
/// prompt. A project is left only when no run or sweep of it goes on.
class ProjectFiles : public QObject {
  Q_OBJECT

 public:
  ProjectFiles(ProjectDocument* document, TrainerSession* session, ProjectPages* pages,
               RunController* runs, Banner* banner, const QString& templatesDir,
               QMainWindow* window);

  /// Fills the File menu.
  void buildMenu(QMenu* file);
  /// Open and Save, for the tool bar.
  QList<QAction*> toolBarActions() const;
  void updateActions();

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
  /// Why the last command failed.
  QString lastError() const { return m_lastError; }
  /// true when it is fine to drop the document (saved, discarded, or unmodified).
  bool maybeSave();

  // The commands with their dialogs (the menu's and the start page's).
  void openWithDialog();
  void newFromTemplate(const QString& templatePath);
  void newBlankWithDialog();
  /// New from data with the dialog open on `data` (read at once; "" : the dialog asks).
  void newFromDataIn(const QString& data = {});
  void importModelWithDialog();

 private:
  /// Opens a project file just written (new, from a folder, imported) on the Model page.
  bool openCreatedProject(const QString& target);
  /// Saves `project` as `target` and opens it as a new document.
  bool openNewProject(const project::Project& project, const QString& target);
  bool save();
  bool saveAs();
  /// Why the open project cannot be left now (a run or a sweep of it goes on); "" when it can.
  QString busyReason() const;
  /// Another project (or none) is open: the file is remembered, the last run forgotten.
  void replaced(const QString& path);

  ProjectDocument* m_document;
  TrainerSession* m_session;
  ProjectPages* m_pages;
  RunController* m_runs;
  Banner* m_banner;
  QString m_templatesDir;
  QMainWindow* m_window;
  QAction* m_open = nullptr;
  QAction* m_save = nullptr;
  QAction* m_close = nullptr;
  QString m_lastError;
};

}  // namespace netsmith::ui
