#include "session/project_document.h"

#include "experiment/sweep_spec.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QUndoCommand>

#include "augment/transform.h"
#include "data/project_data.h"
#include "train/trainability.h"

namespace netsmith::ui {

ProjectDocument::ProjectDocument(RegistriesPtr registries, QObject* parent)
    : QObject(parent), m_registries(std::move(registries)), m_undo(new QUndoStack(this)) {
  needRegistries(m_registries, "ProjectDocument");
  connect(m_undo, &QUndoStack::cleanChanged, this,
          [this](bool clean) { emit modifiedChanged(!clean); });
}

bool ProjectDocument::isModified() const {
  return !m_undo->isClean();
}

class RenameProjectCommand : public QUndoCommand {
 public:
  RenameProjectCommand(ProjectDocument* doc, std::string name)
      : QUndoCommand(QObject::tr("Rename project")),
        m_doc(doc),
        m_old(doc->m_project.name),
        m_new(std::move(name)) {}
  void redo() override { set(m_new); }
  void undo() override { set(m_old); }

 private:
  void set(const std::string& name) {
    m_doc->m_project.name = name;
    emit m_doc->projectChanged();
  }
  ProjectDocument* m_doc;
  std::string m_old, m_new;
};

void ProjectDocument::setProjectName(const QString& name) {
  const std::string value = name.trimmed().toStdString();
  if (value.empty() || value == m_project.name) return;
  m_undo->push(new RenameProjectCommand(this, value));
}

bool ProjectDocument::createFromTemplate(const QString& templatePath, const QString& targetPath) {
  try {
    auto loaded = project::loadProject(templatePath.toStdString());
    QString name = QFileInfo(targetPath).fileName();
    name.remove(QStringLiteral(".netsmith.json")).remove(QStringLiteral(".json"));
    loaded.project.name = name.toStdString();
    project::saveProject(loaded.project, targetPath.toStdString());
  } catch (const std::exception& e) {
    m_error = QString::fromStdString(e.what());
    return false;
  }
  return load(targetPath);
}

bool ProjectDocument::load(const QString& path) {
  try {
    auto loaded = project::loadProject(path.toStdString());
    m_project = std::move(loaded.project);
    m_filePath = path;
    m_baseDir = QString::fromStdString(loaded.baseDir());
    m_dataClasses = 0;  // this project's data is read again
    m_undo->clear();
    m_error.clear();
    reanalyse(loaded.problems);
    emit this->loaded();
    return true;
  } catch (const std::exception& e) {
    m_error = QString::fromStdString(e.what());
    return false;
  }
}

void ProjectDocument::close() {
  m_project = project::Project{};
  m_filePath.clear();
  m_baseDir.clear();
  m_dataClasses = 0;
  m_undo->clear();
  m_error.clear();
  reanalyse({});
  emit loaded();
}

bool ProjectDocument::save(const QString& path) {
  const QString target = path.isEmpty() ? m_filePath : path;
  if (target.isEmpty()) {
    m_error = tr("choose a file name first");
    return false;
  }
  try {
    project::saveProject(m_project, target.toStdString());
    const QString oldBase = m_baseDir;
    m_filePath = target;
    m_baseDir = QFileInfo(target).absolutePath();
    m_undo->setClean();
    m_error.clear();
    if (QDir(oldBase) != QDir(m_baseDir))
      reanalyse({});  // relative data paths now resolve against the new folder
    else
      emit projectChanged();
    return true;
  } catch (const std::exception& e) {
    m_error = QString::fromStdString(e.what());
    return false;
  }
}

void ProjectDocument::reanalyse(const Problems& loadProblems) {
  m_loadProblems = loadProblems;
  analyseModel();
  resolveSections();
  composeProblems();
  emit projectChanged();
}

void ProjectDocument::resolveSections() {
  // Data paths that are not there are problems too: what a press of Start would fail on.
  project::LoadedProject loaded;
  loaded.project = m_project;
  loaded.path = m_filePath.toStdString();
  resolve::ResolveOptions how;
  how.pathsMustExist = true;
  how.analysis = &m_analysis;
  how.baseDir = m_baseDir.toStdString();
  m_resolved = resolve::resolveProject(std::move(loaded), *m_registries, how);
}

void ProjectDocument::analyseModel() {
  QElapsedTimer clock;
  clock.start();
  m_analysis = graph::analyseGraph(m_project.model, registry());
  m_analysisMs = double(clock.nsecsElapsed()) / 1e6;
}

void ProjectDocument::composeProblems() {
  m_problems = m_loadProblems;
  m_problems.insert(m_problems.end(), m_analysis.problems.begin(), m_analysis.problems.end());
  // What train would refuse: an unknown task, an output that does not fit the task's head
  // rule for the data (unless training replaces the head: train.replace_head). A regression's
  // targets are the ones data.targets names (unnamed: every column of the manifest, which is
  // not read here; train checks them).
  const train::TaskFacts facts{m_dataClasses, {}, m_resolved.namedTargets()};
  if (const auto p =
          train::headProblem(m_project.task, m_resolved.train, m_analysis, facts, tasks()))
    m_problems.push_back(*p);
  // ...and a metric (train.monitor, early stopping, plateau, sweep.objective) the task does not
  // report, then the sections' own problems.
  for (const auto* part : {&m_resolved.metricProblems, &m_resolved.dataProblems,
                           &m_resolved.trainProblems, &m_resolved.sweepProblems})
    m_problems.insert(m_problems.end(), part->begin(), part->end());
}

void ProjectDocument::setDataClasses(std::int64_t classes) {
  if (classes == m_dataClasses) return;
  m_dataClasses = classes;
  composeProblems();
  emit problemsChanged();
}

void ProjectDocument::setModel(const graph::ModelGraph& model) {
  m_project.model = model;
  // Problems of the model read from the file no longer describe this one.
  m_loadProblems.erase(
      std::remove_if(m_loadProblems.begin(), m_loadProblems.end(),
                     [](const Problem& p) { return p.path.rfind("model", 0) == 0; }),
      m_loadProblems.end());
  analyseModel();
  composeProblems();
  emit modelChanged();
}

class ModelEditCommand : public QUndoCommand {
 public:
  ModelEditCommand(ProjectDocument* doc, graph::ModelGraph before, graph::ModelGraph after,
                   const QString& text, QString mergeKey)
      : QUndoCommand(text),
        m_doc(doc),
        m_before(std::move(before)),
        m_after(std::move(after)),
        m_key(std::move(mergeKey)) {}
  void redo() override { m_doc->setModel(m_after); }
  void undo() override { m_doc->setModel(m_before); }
  int id() const override { return m_key.isEmpty() ? -1 : 1; }
  bool mergeWith(const QUndoCommand* other) override {
    const auto* o = static_cast<const ModelEditCommand*>(other);
    if (o->m_key != m_key) return false;
    m_after = o->m_after;
    return true;
  }

 private:
  ProjectDocument* m_doc;
  graph::ModelGraph m_before, m_after;
  QString m_key;
};

void ProjectDocument::editModel(const graph::ModelGraph& model, const QString& text,
                                const QString& mergeKey) {
  if (model == m_project.model) return;
  m_undo->push(new ModelEditCommand(this, m_project.model, model, text, mergeKey));
}

/// The train, data or augment section (the sweep section lives in `extra` and may be absent).
static Json& sectionRef(project::Project& p, const QString& section) {
  if (section == QLatin1String("data")) return p.data;
  if (section == QLatin1String("augment")) return p.augment;
  return p.train;
}

/// A section's value; the sweep section is null when absent.
static Json sectionValue(const project::Project& p, const QString& section) {
  if (section == QLatin1String("sweep"))
    return p.extra.contains("sweep") ? p.extra["sweep"] : Json();
  return sectionRef(const_cast<project::Project&>(p), section);
}

void ProjectDocument::setSection(const QString& section, const Json& value) {
  if (section == QLatin1String("sweep")) {
    if (value.is_null())
      m_project.extra.erase("sweep");
    else
      m_project.extra["sweep"] = value;
  } else {
    sectionRef(m_project, section) = value;
  }
  // Only what the section affects: no model analysis.
  resolveSections();
  composeProblems();
  emit sectionChanged(section);
}

class SectionEditCommand : public QUndoCommand {
 public:
  SectionEditCommand(ProjectDocument* doc, QString section, Json before, Json after,
                     const QString& text, QString mergeKey)
      : QUndoCommand(text),
        m_doc(doc),
        m_section(std::move(section)),
        m_before(std::move(before)),
        m_after(std::move(after)),
        m_key(std::move(mergeKey)) {}
  void redo() override { m_doc->setSection(m_section, m_after); }
  void undo() override { m_doc->setSection(m_section, m_before); }
  int id() const override { return m_key.isEmpty() ? -1 : 2; }
  bool mergeWith(const QUndoCommand* other) override {
    const auto* o = static_cast<const SectionEditCommand*>(other);
    if (o->m_key != m_key || o->m_section != m_section) return false;
    m_after = o->m_after;
    return true;
  }

 private:
  ProjectDocument* m_doc;
  QString m_section;
  Json m_before, m_after;
  QString m_key;
};

void ProjectDocument::addSweepParam(const Json& param) {
  if (!param.is_object() || !param.contains("path")) return;
  const auto* def = tasks().find(m_project.task);
  const std::string objective = def ? task::defaultObjective(*def) : std::string("val_loss");
  Json sweep = m_project.extra.contains("sweep") && m_project.extra["sweep"].is_object()
                   ? m_project.extra["sweep"]
                   : Json{{"name", m_project.name + "-sweep"},
                          {"method", "random"},
                          {"trials", 10},
                          {"objective", objective},
                          {"params", Json::array()}};
  if (!sweep.contains("params") || !sweep["params"].is_array()) sweep["params"] = Json::array();
  bool replaced = false;
  for (auto& p : sweep["params"]) {
    if (p.is_object() && p.contains("path") && p["path"] == param["path"]) {
      p = param;
      replaced = true;
    }
  }
  if (!replaced) sweep["params"].push_back(param);
  editSection(QStringLiteral("sweep"), sweep,
              tr("Sweep %1").arg(QString::fromStdString(param["path"].get<std::string>())));
}

void ProjectDocument::editSection(const QString& section, const Json& value, const QString& text,
                                  const QString& mergeKey) {
  const Json current = sectionValue(m_project, section);
  if (current == value) return;
  m_undo->push(new SectionEditCommand(this, section, current, value, text, mergeKey));
}

}  // namespace netsmith::ui
