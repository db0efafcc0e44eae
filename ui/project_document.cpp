#include "project_document.h"

#include "augment/transform.h"
#include "data/project_data.h"
#include "train/train_options.h"

namespace netsmith::ui {

ProjectDocument::ProjectDocument(const ops::OpRegistry& registry, QObject* parent)
    : QObject(parent),
      m_registry(registry),
      m_transforms(augment::TransformRegistry::withBuiltins()) {}

bool ProjectDocument::load(const QString& path) {
  try {
    auto loaded = project::loadProject(path.toStdString());
    m_project = std::move(loaded.project);
    m_filePath = path;
    m_baseDir = QString::fromStdString(loaded.baseDir());
    m_modified = false;
    m_error.clear();
    reanalyse(loaded.problems);
    return true;
  } catch (const std::exception& e) {
    m_error = QString::fromStdString(e.what());
    return false;
  }
}

bool ProjectDocument::save(const QString& path) {
  const QString target = path.isEmpty() ? m_filePath : path;
  if (target.isEmpty()) {
    m_error = tr("choose a file name first");
    return false;
  }
  try {
    project::saveProject(m_project, target.toStdString());
    m_filePath = target;
    m_modified = false;
    m_error.clear();
    emit projectChanged();
    return true;
  } catch (const std::exception& e) {
    m_error = QString::fromStdString(e.what());
    return false;
  }
}

void ProjectDocument::reanalyse(const Problems& loadProblems) {
  m_analysis = graph::analyseGraph(m_project.model, m_registry);
  m_problems = loadProblems;
  m_problems.insert(m_problems.end(), m_analysis.problems.begin(), m_analysis.problems.end());
  const auto dataProblems =
      data::validateDataSections(m_project, m_baseDir.toStdString(), m_transforms);
  m_problems.insert(m_problems.end(), dataProblems.begin(), dataProblems.end());
  train::parseTrainOptions(m_project.train, train::ScheduleRegistry::withBuiltins(), m_problems);
  emit projectChanged();
}

}  // namespace netsmith::ui
