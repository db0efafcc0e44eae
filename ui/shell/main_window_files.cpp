// The project file commands of the main window: open, new from a template, save, save as, and
// the unsaved-changes prompt.
#include <spdlog/spdlog.h>
#include <QApplication>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QLabel>
#include <QMessageBox>
#include <QProgressBar>
#include <QStatusBar>

#include "import/import_job.h"
#include "import/project_starter.h"
#include "monitor/dashboard.h"
#include "monitor/experiments_page.h"
#include "run/run_layout.h"
#include "session/project_document.h"
#include "session/trainer_session.h"
#include "shell/dialogs.h"
#include "shell/main_window.h"
#include "shell/new_from_data_dialog.h"
#include "shell/project_pages.h"
#include "util/elided_label.h"

namespace netsmith::ui {

bool MainWindow::openProject(const QString& path, bool quiet) {
  if (const QString why = busyReason(); !why.isEmpty()) {
    if (!quiet) QMessageBox::information(this, tr("Cannot open another project"), why);
    statusBar()->showMessage(why, 5000);
    return false;
  }
  if (!quiet && !maybeSave()) return false;
  if (m_document->load(path)) {
    statusBar()->showMessage(tr("Opened %1").arg(path), 5000);
    spdlog::info("opened {}", path.toStdString());
    addRecent(QFileInfo(path).absoluteFilePath());
    forgetRun();
    // Its newest run's checkpoint is offered again (Evaluation, Export) without a new run.
    if (const QString checkpoint = latestCheckpoint(); !checkpoint.isEmpty()) {
      setCurrentCheckpoint(checkpoint);
      spdlog::info("the latest run's checkpoint: {}", checkpoint.toStdString());
    }
    updateActions();
    return true;
  }
  if (!quiet) QMessageBox::warning(this, tr("Cannot open project"), m_document->errorString());
  spdlog::error("{}", m_document->errorString().toStdString());
  statusBar()->showMessage(m_document->errorString());
  return false;
}

void MainWindow::openWithDialog() {
  const QString path =
      QFileDialog::getOpenFileName(this, tr("Open project"), QString(),
                                   tr("Netsmith projects (*.netsmith.json);;JSON (*.json)"));
  if (!path.isEmpty()) openProject(path);
}

void MainWindow::newFromTemplate(const QString& templatePath) {
  if (!maybeSave()) return;
  QString name = QFileInfo(templatePath).fileName();
  const QString target = QFileDialog::getSaveFileName(this, tr("New project from %1").arg(name),
                                                      QDir::home().filePath(name),
                                                      tr("Netsmith projects (*.netsmith.json)"));
  if (target.isEmpty()) return;
  if (!createProject(templatePath, target))
    QMessageBox::warning(this, tr("Cannot create the project"), m_lastError);
}

bool MainWindow::createProject(const QString& templatePath, const QString& target) {
  if (m_lastError = busyReason(); !m_lastError.isEmpty()) return false;
  if (!m_document->createFromTemplate(templatePath, target)) {
    m_lastError = m_document->errorString();
    return false;
  }
  addRecent(QFileInfo(target).absoluteFilePath());
  forgetRun();
  updateActions();
  return true;
}

void MainWindow::newBlankWithDialog() {
  if (!maybeSave()) return;
  // The task first: it decides the data the project reads and the settings it starts with.
  NewProjectTaskDialog ask(this);
  if (ask.exec() != QDialog::Accepted) return;
  const QString task = ask.task();
  const QString target = QFileDialog::getSaveFileName(
      this, tr("New project"), QDir::home().filePath(QStringLiteral("untitled.netsmith.json")),
      tr("Netsmith projects (*.netsmith.json)"));
  if (!target.isEmpty() && !createBlankProject(target, task))
    QMessageBox::warning(this, tr("Cannot create the project"), m_lastError);
}

void MainWindow::newFromDataWithDialog() {
  newFromDataIn(QString());
}

void MainWindow::newFromDataIn(const QString& data) {
  if (!maybeSave()) return;
  // Window-modal and open while the data is read: the rest of the studio stays drawn behind it.
  auto* dialog = new NewFromDataDialog(m_document->registries(), m_templatesDir, this);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  connect(dialog, &QDialog::accepted, this, [this, dialog] {
    if (!openNewProject(dialog->project(), dialog->projectPath()))
      QMessageBox::warning(this, tr("Cannot create the project"), m_lastError);
  });
  dialog->open();
  if (!data.isEmpty()) dialog->setDataPath(data);
}

void MainWindow::importModelWithDialog() {
  if (!maybeSave()) return;
  // From the open project's folder (models usually sit beside it), else home.
  const QString start = m_document->filePath().isEmpty() ? QDir::homePath() : m_document->baseDir();
  const QString onnx = QFileDialog::getOpenFileName(this, tr("Import an ONNX model"), start,
                                                    tr("ONNX models (*.onnx)"));
  if (onnx.isEmpty()) return;
  const QFileInfo info(onnx);
  const QString target = QFileDialog::getSaveFileName(
      this, tr("Save the imported project"),
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
        this, tr("Input size"),
        tr("The model does not fix its input size. Channels x height x width:"), QLineEdit::Normal,
        QStringLiteral("3x224x224"), &given);
    if (!given) return;
    ok = importModel(onnx, target, input);
  }
  if (!ok) QMessageBox::warning(this, tr("Cannot import the model"), m_lastError);
}

bool MainWindow::importModel(const QString& onnx, const QString& target, const QString& input) {
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
    showBanner(tr("Imported %1. Notes:").arg(QFileInfo(onnx).fileName()) + QStringLiteral("\n") +
                   notes.join(QLatin1Char('\n')),
               false);
  return true;
}

bool MainWindow::createBlankProject(const QString& target, const QString& task) {
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

bool MainWindow::createProjectFromData(const QString& path, const QString& target) {
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

bool MainWindow::openNewProject(const project::Project& project, const QString& target) {
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

bool MainWindow::openCreatedProject(const QString& target) {
  if (!m_document->load(target)) {
    m_lastError = m_document->errorString();
    return false;
  }
  addRecent(QFileInfo(target).absoluteFilePath());
  forgetRun();
  updateActions();
  m_pages->showPage(ProjectPages::ModelPage);
  return true;
}

QString MainWindow::busyReason() const {
  if (m_session->isRunning()) return tr("Stop the run before leaving this project.");
  if (m_pages->experimentsPage()->isRunning())
    return tr("Stop the sweep (Experiments page) before leaving this project.");
  return {};
}

bool MainWindow::closeProject(bool quiet) {
  if (m_document->filePath().isEmpty()) return true;
  if (const QString why = busyReason(); !why.isEmpty()) {
    if (!quiet) QMessageBox::information(this, tr("Cannot close the project"), why);
    statusBar()->showMessage(why, 5000);
    return false;
  }
  if (!quiet && !maybeSave()) return false;
  const QString closed = m_document->filePath();
  m_document->close();
  forgetRun();
  updateActions();
  spdlog::info("closed {}", closed.toStdString());
  return true;
}

QString MainWindow::latestCheckpoint(bool lastOnly) const {
  // The project's runs/, as run_layout lays it out (the newest run first; real files only).
  return QString::fromStdString(
      run_layout::latestCheckpoint(run_layout::runsRoot(m_document->baseDir().toStdString()),
                                   m_document->project().name, lastOnly));
}

void MainWindow::forgetRun() {
  setCurrentCheckpoint({});  // the Evaluation page's result goes with it
  setSampleLimits(0, 0);     // a quick run's limits belong to the project they were set in
  m_toEvaluation->hide();
  dashboard()->clear();
  dashboard()->clearOverlays();
  hideBanner();
  m_runState->setFullText(tr("Idle"));
  m_progress->reset();
}

bool MainWindow::save() {
  if (m_document->filePath().isEmpty()) return saveAs();
  if (!m_document->save()) {
    QMessageBox::warning(this, tr("Cannot save"), m_document->errorString());
    return false;
  }
  statusBar()->showMessage(tr("Saved %1").arg(m_document->filePath()), 5000);
  return true;
}

bool MainWindow::saveAs() {
  const QString path =
      QFileDialog::getSaveFileName(this, tr("Save project as"), m_document->filePath(),
                                   tr("Netsmith projects (*.netsmith.json)"));
  if (path.isEmpty()) return false;
  if (!m_document->save(path)) {
    QMessageBox::warning(this, tr("Cannot save"), m_document->errorString());
    return false;
  }
  addRecent(QFileInfo(path).absoluteFilePath());
  statusBar()->showMessage(tr("Saved %1").arg(path), 5000);
  return true;
}

bool MainWindow::maybeSave() {
  if (!m_document->isModified()) return true;
  const auto answer = QMessageBox::warning(
      this, tr("Unsaved changes"),
      tr("%1 has unsaved changes. Save them?")
          .arg(QString::fromStdString(m_document->project().name)),
      QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
  if (answer == QMessageBox::Save) return save();
  return answer == QMessageBox::Discard;
}

}  // namespace netsmith::ui
