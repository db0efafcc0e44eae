#pragma once

#include <QObject>
#include <QString>
#include <QUndoStack>

#include "augment/transform.h"
#include "graph/graph_analysis.h"
#include "ops/op_registry.h"
#include "project/project.h"
#include "registries/registries.h"
#include "resolve/resolved_project.h"
#include "task/task_registry.h"

namespace netsmith::ui {

/// The open project as the studio sees it: the core Project, where it lives on disk, whether it
/// has unsaved changes, and its current analysis. Non-widget, so tests drive it directly.
class ProjectDocument : public QObject {
  Q_OBJECT

 public:
  /// `registries`: the program's (its main builds them); every page reads them from here.
  explicit ProjectDocument(RegistriesPtr registries, QObject* parent = nullptr);

  /// Loads `path`; on failure returns false and sets errorString(), keeping the old project.
  bool load(const QString& path);
  /// Forgets the open project (unsaved changes included: ask first): no file, an empty
  /// project, an empty undo stack; loaded() follows so every page lets go of what it showed.
  void close();
  /// Saves atomically to `path` (or the current path when empty).
  bool save(const QString& path = {});

  const project::Project& project() const { return m_project; }
  const graph::GraphAnalysis& analysis() const { return m_analysis; }
  /// The project's sections as read after the last edit (their typed forms and problems); the
  /// train section's options are what a run of the project now would use.
  const resolve::ResolvedProject& resolved() const { return m_resolved; }
  const train::TrainOptions& trainOptions() const { return m_resolved.train; }
  /// Loading problems, model analysis problems, and data / augment section problems.
  const Problems& problems() const { return m_problems; }
  QString filePath() const { return m_filePath; }
  /// The folder relative data paths resolve against (the project file's folder).
  QString baseDir() const { return m_baseDir; }
  QString errorString() const { return m_error; }
  bool isModified() const;
  /// Edits go through this stack (Edit > Undo / Redo); saving marks it clean.
  QUndoStack* undoStack() const { return m_undo; }
  /// Renames the project (an undoable edit).
  void setProjectName(const QString& name);
  /// Writes `templatePath` as a new project at `targetPath` (named after the file) and opens it.
  bool createFromTemplate(const QString& templatePath, const QString& targetPath);
  const RegistriesPtr& registries() const { return m_registries; }
  const ops::OpRegistry& registry() const { return m_registries->ops; }
  const task::TaskRegistry& tasks() const { return m_registries->tasks; }
  const augment::TransformRegistry& transforms() const { return m_registries->transforms; }
  const train::ScheduleRegistry& schedules() const { return m_registries->schedules; }

  /// Replaces the model as one undoable edit named `text`. Consecutive edits with the same
  /// non-empty `mergeKey` (one field of one node, one drag) merge into one undo step.
  void editModel(const graph::ModelGraph& model, const QString& text, const QString& mergeKey = {});
  /// Adds (or replaces, by path) one setting of the sweep section, making the section when
  /// there is none: an undoable edit ("Sweep this" on a form field).
  void addSweepParam(const Json& param);
  /// Replaces a section ("data", "augment", "train" or "sweep"; a null sweep removes it) as
  /// one undoable edit; consecutive edits
  /// with the same non-empty `mergeKey` merge. That section's problems are found again and
  /// sectionChanged() follows (not projectChanged(): the model is untouched).
  void editSection(const QString& section, const Json& value, const QString& text,
                   const QString& mergeKey = {});
  /// The data's class count (read in the background by the Training page), so the model's
  /// output is checked against it live; 0: unknown.
  void setDataClasses(std::int64_t classes);
  std::int64_t dataClasses() const { return m_dataClasses; }
  /// Milliseconds the last model analysis took.
  double lastAnalysisMs() const { return m_analysisMs; }

 signals:
  void projectChanged();
  /// A file was loaded (after projectChanged).
  void loaded();
  /// The model changed by an edit (undo / redo included); the analysis is current.
  void modelChanged();
  /// A data, augment or train section changed by an edit (undo / redo included).
  void sectionChanged(const QString& section);
  void modifiedChanged(bool modified);
  /// problems() changed without an edit (the data's class count became known).
  void problemsChanged();

 private:
  void reanalyse(const Problems& loadProblems);
  /// Shape inference and the model's problems only (every model edit); the sections stay as
  /// last resolved.
  void analyseModel();
  /// The sections read again (every section edit): resolve::resolveProject on the project
  /// with the current analysis.
  void resolveSections();
  /// m_problems from the load, model and section problems.
  void composeProblems();
  void setModel(const graph::ModelGraph& model);
  void setSection(const QString& section, const Json& value);
  friend class ModelEditCommand;
  friend class SectionEditCommand;

  RegistriesPtr m_registries;
  QString m_baseDir;
  project::Project m_project;
  graph::GraphAnalysis m_analysis;
  Problems m_problems;
  Problems m_loadProblems;
  resolve::ResolvedProject m_resolved;  ///< the sections as last resolved
  double m_analysisMs = 0;
  std::int64_t m_dataClasses = 0;
  QString m_filePath;
  QString m_error;
  QUndoStack* m_undo;
  friend class RenameProjectCommand;
};

}  // namespace netsmith::ui
