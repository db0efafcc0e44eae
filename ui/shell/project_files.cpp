#include "shell/project_files.h"
#include "util/named_action.h"

#include <spdlog/spdlog.h>
#include <QAction>
#include <QApplication>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QMainWindow>
#include <QMenu>
#include <QMessageBox>
#include <QStatusBar>

#include "import/import_job.h"
#include "import/project_starter.h"
#include "monitor/experiments_page.h"
#include "session/project_document.h"
#include "session/trainer_session.h"
#include "shell/banner.h"
#include "shell/dialogs.h"
#include "shell/new_from_data_dialog.h"
#include "shell/project_pages.h"
#include "shell/recent_files.h"
#include "shell/run_controller.h"

namespace netsmith::ui {

ProjectFiles::ProjectFiles(ProjectDocument* document, TrainerSession* session, ProjectPages* pages,
                           RunController* runs, Banner* banner, const QString& templatesDir,
                           QMainWindow* window)
    : QObject(window),
      m_document(document),
      m_session(session),
      m_pages(pages),
      m_runs(runs),
      m_banner(banner),
      m_templatesDir(templatesDir),
      m_window(window) {}

void ProjectFiles::buildMenu(QMenu* file) {
  namedAction(file->addAction(tr("&New project..."), this, &ProjectFiles::newBlankWithDialog),
              "actionNewBlank", QKeySequence::New)
      ->setToolTip(tr("A project with only its Input, for the task you choose: the data and "
                      "training settings of that task's template"));
  namedAction(file->addAction(tr("New from &data..."), this, [this] { newFromDataIn(); }),
              "actionNewFromData", QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_N))
      ->setToolTip(tr("Point at your data (class folders, a CSV manifest, images with masks, a "
                      "YOLO, COCO or VOC set): the studio recognises it and proposes a project "
                      "you can change before it is written"));
  namedAction(file->addAction(tr("&Import model..."), this, &ProjectFiles::importModelWithDialog),
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
  m_open = namedAction(file->addAction(tr("&Open..."), this, &ProjectFiles::openWithDialog),
                       "actionOpen", QKeySequence::Open);
  QMenu* recent = file->addMenu(tr("Open &Recent"));
  recent->setObjectName(QStringLiteral("menuRecent"));
  connect(new RecentFiles(recent), &RecentFiles::openRequested, this,
          [this](const QString& path) { openProject(path); });
  file->addSeparator();
  m_save = namedAction(file->addAction(tr("&Save"), this, &ProjectFiles::save), "actionSave",
                       QKeySequence::Save);
  namedAction(file->addAction(tr("Save &As..."), this, &ProjectFiles::saveAs), "actionSaveAs",
              QKeySequence::SaveAs);
  m_close = namedAction(file->addAction(tr("&Close project"), this, [this] { closeProject(); }),
                        "actionCloseProject", QKeySequence(Qt::CTRL | Qt::Key_W));
  file->addSeparator();
  QAction* quit = file->addAction(tr("&Quit"), m_window, &QWidget::close);
  quit->setShortcut(QKeySequence::Quit);
  quit->setMenuRole(QAction::QuitRole);
}

QList<QAction*> ProjectFiles::toolBarActions() const {
  return {m_open, m_save};
}

void ProjectFiles::updateActions() {
  m_close->setEnabled(!m_document->filePath().isEmpty() && !m_session->isRunning());
}

void ProjectFiles::replaced(const QString& path) {
  if (!path.isEmpty()) RecentFiles::add(QFileInfo(path).absoluteFilePath());
  m_runs->forgetRun();
}

bool ProjectFiles::openProject(const QString& path, bool quiet) {
  if (const QString why = busyReason(); !why.isEmpty()) {
    if (!quiet) QMessageBox::information(m_window, tr("Cannot open another project"), why);
    m_window->statusBar()->showMessage(why, 5000);
    return false;
  }
  if (!quiet && !maybeSave()) return false;
  if (m_document->load(path)) {
    m_window->statusBar()->showMessage(tr("Opened %1").arg(path), 5000);
    spdlog::info("opened {}", path.toStdString());
    replaced(path);
    // Its newest run's checkpoint is offered again (Evaluation, Export) without a new run.
    if (const QString checkpoint = m_runs->latestCheckpoint(); !checkpoint.isEmpty()) {
      m_runs->setCurrentCheckpoint(checkpoint);
      spdlog::info("the latest run's checkpoint: {}", checkpoint.toStdString());
    }
    return true;
  }
  if (!quiet) QMessageBox::warning(m_window, tr("Cannot open project"), m_document->errorString());
  spdlog::error("{}", m_document->errorString().toStdString());
  m_window->statusBar()->showMessage(m_document->errorString());
  return false;
}

void ProjectFiles::openWithDialog() {
  const QString path =
      QFileDialog::getOpenFileName(m_window, tr("Open project"), QString(),
                                   tr("Netsmith projects (*.netsmith.json);;JSON (*.json)"));
  if (!path.isEmpty()) openProject(path);
}

void ProjectFiles::newFromTemplate(const QString& templatePath) {
  if (!maybeSave()) return;
  QString name = QFileInfo(templatePath).fileName();
  const QString target = QFileDialog::getSaveFileName(m_window, tr("New project from %1").arg(name),
                                                      QDir::home().filePath(name),
                                                      tr("Netsmith projects (*.netsmith.json)"));
  if (target.isEmpty()) return;
  if (!createProject(templatePath, target))
    QMessageBox::warning(m_window, tr("Cannot create the project"), m_lastError);
}

bool ProjectFiles::createProject(const QString& templatePath, const QString& target) {
  if (m_lastError = busyReason(); !m_lastError.isEmpty()) return false;
  if (!m_document->createFromTemplate(templatePath, target)) {
    m_lastError = m_document->errorString();
    return false;
  }
  replaced(target);
  return true;
}

void ProjectFiles::newBlankWithDialog() {
  if (!maybeSave()) return;
  // The task first: it decides the data the project reads and the settings it starts with.
  NewProjectTaskDialog ask(m_window);
  if (ask.exec() != QDialog::Accepted) return;
  const QString task = ask.task();
  const QString target = QFileDialog::getSaveFileName(
      m_window, tr("New project"), QDir::home().filePath(QStringLiteral("untitled.netsmith.json")),
      tr("Netsmith projects (*.netsmith.json)"));
  if (!target.isEmpty() && !createBlankProject(target, task))
    QMessageBox::warning(m_window, tr("Cannot create the project"), m_lastError);
}

void ProjectFiles::newFromDataIn(const QString& data) {
  if (!maybeSave()) return;
  // Window-modal and open while the data is read: the rest of the studio stays drawn behind it.
  auto* dialog = new NewFromDataDialog(m_document->registries(), m_templatesDir, m_window);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  connect(dialog, &QDialog::accepted, this, [this, dialog] {
    if (!openNewProject(dialog->project(), dialog->projectPath()))
      QMessageBox::warning(m_window, tr("Cannot create the project"), m_lastError);
  });
  dialog->open();
  if (!data.isEmpty()) dialog->setDataPath(data);
}

void ProjectFiles::importModelWithDialog() {
  if (!maybeSave()) return;
  // From the open project's folder (models usually sit beside it), else home.
  const QString start = m_document->filePath().isEmpty() ? QDir::homePath() : m_document->baseDir();
  const QString onnx = QFileDialog::getOpenFileName(m_window, tr("Import an ONNX model"), start,
                                                    tr("ONNX models (*.onnx)"));
  if (onnx.isEmpty()) return;
  const QFileInfo info(onnx);
  const QString target = QFileDialog::getSaveFileName(
      m_window, tr("Save the imported project"),
      info.dir().filePath(info.completeBaseName() + QStringLiteral(".netsmith.json")),
      tr("Netsmith projects (*.netsmith.json)"));
  if (target.isEmpty()) return;
  QApplication::setOverrideCursor(Qt::WaitCursor);
  bool ok = importModel(onnx, target);
  QApplication::restoreOverrideCursor();
  if (!ok && m_lastError.contains(QStringLiteral("give it, e.g. --input"))) {
    // A symbolic input size: ask for it.
    bool given = false;
    const QString input = QInputDialog::getText(
        m_window, tr("Input size"),
        tr("The model does not fix its input size. Channels x height x width:"), QLineEdit::Normal,
        QStringLiteral("3x224x224"), &given);
    if (!given) return;
    ok = importModel(onnx, target, input);
  }
  if (!ok) QMessageBox::warning(m_window, tr("Cannot import the model"), m_lastError);
}

bool ProjectFiles::importModel(const QString& onnx, const QString& target, const QString& input) {
  if (m_lastError = busyReason(); !m_lastError.isEmpty()) return false;
  import::ImportRequest request;
  request.model = onnx.toStdString();
  request.project = target.toStdString();
  request.overwrite = true;  // the save dialog asked already
  if (!input.isEmpty()) {
    const QStringList parts = input.split(QLatin1Char('x'));
    bool ok = parts.size() == 3;
    std::vector<std::int64_t> v;
    for (const auto& part : parts) {
      bool digit = false;
      v.push_back(part.trimmed().toLongLong(&digit));
      ok = ok && digit && v.back() > 0 && v.back() < 100000;
    }
    if (!ok) {
      m_lastError = tr("The input size must be channels x height x width, e.g. 3x224x224");
      return false;
    }
    request.input = graph::InputSpec{v[0], v[1], v[2]};
  }
  QStringList notes;
  try {
    const auto summary = import::runImportJob(request, m_document->registry());
    for (const auto& note : summary.notes) {
      spdlog::info("import: {}", note);
      notes << QString::fromStdString(note);
    }
    spdlog::info("imported {}: {} nodes, {} parameters, weights {}", request.model, summary.nodes,
                 summary.params, summary.weightsPath);
  } catch (const std::exception& e) {
    m_lastError = QString::fromStdString(e.what());
    return false;
  }
  if (!openCreatedProject(target)) return false;
  // What the import changed is said where the user looks, not only in the log.
  if (!notes.isEmpty())
    m_banner->showText(tr("Imported %1. Notes:").arg(QFileInfo(onnx).fileName()) +
                           QStringLiteral("\n") + notes.join(QLatin1Char('\n')),
                       false);
  return true;
}

bool ProjectFiles::createBlankProject(const QString& target, const QString& task) {
  const TaskChoice choice = NewProjectTaskDialog::choice(task);
  if (choice.templateFile.isEmpty()) {
    QStringList offered;
    for (const auto& c : NewProjectTaskDialog::choices())
      offered << c.name;
    m_lastError = tr("No template for the task \"%1\" (File > New offers %2)")
                      .arg(task, offered.join(QStringLiteral(", ")));
    return false;
  }
  // The task's template's data and training settings, around an Input of its size.
  project::Project base;
  const QString defaults = m_templatesDir + QLatin1Char('/') + choice.templateFile;
  try {
    base = project::loadProject(defaults.toStdString()).project;
  } catch (const std::exception&) {
    // No templates folder: the default Input and empty sections, which the pages ask to fill.
  }
  QString name = QFileInfo(target).fileName();
  name.chop(int(qstrlen(".netsmith.json")));
  auto blank = import::blankProject(name.toStdString(), base.model.input, base.data, base.train);
  blank.task = task.toStdString();
  return openNewProject(blank, target);
}

bool ProjectFiles::createProjectFromData(const QString& path, const QString& target) {
  import::StarterContext context;
  context.registries = m_document->registries();
  context.templatesDir = m_templatesDir.toStdString();
  try {
    const auto proposal =
        import::proposeProject(path.toStdString(), target.toStdString(), {}, context);
    auto project = proposal.project;
    QString name = QFileInfo(target).fileName();
    name.chop(int(qstrlen(project::kFileSuffix)));
    project.name = name.toStdString();
    return openNewProject(project, target);
  } catch (const std::exception& e) {
    m_lastError = QString::fromStdString(e.what());
    return false;
  }
}

bool ProjectFiles::openNewProject(const project::Project& project, const QString& target) {
  if (m_lastError = busyReason(); !m_lastError.isEmpty()) return false;
  try {
    project::saveProject(project, target.toStdString());
  } catch (const std::exception& e) {
    m_lastError = QString::fromStdString(e.what());
    return false;
  }
  spdlog::info("new project {}", target.toStdString());
  return openCreatedProject(target);
}

bool ProjectFiles::openCreatedProject(const QString& target) {
  if (!m_document->load(target)) {
    m_lastError = m_document->errorString();
    return false;
  }
  replaced(target);
  m_pages->showPage(ProjectPages::ModelPage);
  return true;
}

QString ProjectFiles::busyReason() const {
  if (m_session->isRunning()) return tr("Stop the run before leaving this project.");
  if (m_pages->experimentsPage()->isRunning())
    return tr("Stop the sweep (Experiments page) before leaving this project.");
  return {};
}

bool ProjectFiles::closeProject(bool quiet) {
  if (m_document->filePath().isEmpty()) return true;
  if (const QString why = busyReason(); !why.isEmpty()) {
    if (!quiet) QMessageBox::information(m_window, tr("Cannot close the project"), why);
    m_window->statusBar()->showMessage(why, 5000);
    return false;
  }
  if (!quiet && !maybeSave()) return false;
  const QString closed = m_document->filePath();
  m_document->close();
  replaced({});
  spdlog::info("closed {}", closed.toStdString());
  return true;
}

bool ProjectFiles::save() {
  if (m_document->filePath().isEmpty()) return saveAs();
  if (!m_document->save()) {
    QMessageBox::warning(m_window, tr("Cannot save"), m_document->errorString());
    return false;
  }
  m_window->statusBar()->showMessage(tr("Saved %1").arg(m_document->filePath()), 5000);
  return true;
}

bool ProjectFiles::saveAs() {
  const QString path =
      QFileDialog::getSaveFileName(m_window, tr("Save project as"), m_document->filePath(),
                                   tr("Netsmith projects (*.netsmith.json)"));
  if (path.isEmpty()) return false;
  if (!m_document->save(path)) {
    QMessageBox::warning(m_window, tr("Cannot save"), m_document->errorString());
    return false;
  }
  RecentFiles::add(QFileInfo(path).absoluteFilePath());
  m_window->statusBar()->showMessage(tr("Saved %1").arg(path), 5000);
  return true;
}

bool ProjectFiles::maybeSave() {
  if (!m_document->isModified()) return true;
  const auto answer = QMessageBox::warning(
      m_window, tr("Unsaved changes"),
      tr("%1 has unsaved changes. Save them?")
          .arg(QString::fromStdString(m_document->project().name)),
      QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
  if (answer == QMessageBox::Save) return save();
  return answer == QMessageBox::Discard;
}

}  // namespace netsmith::ui
