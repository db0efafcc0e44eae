#include "shell/export_controller.h"

#include <spdlog/spdlog.h>
#include <QAction>
#include <QDir>
#include <QFileDialog>
#include <QMainWindow>
#include <QMenu>
#include <QMenuBar>
#include <QStatusBar>

#include "data/named_paths.h"
#include "export/export_job.h"
#include "session/project_document.h"
#include "shell/banner.h"
#include "shell/dialogs.h"
#include "shell/run_controller.h"
#include "util/background_job.h"

namespace netsmith::ui {

ExportController::ExportController(ProjectDocument* document, RunController* runs, Banner* banner,
                                   QMainWindow* window)
    : QObject(window),
      m_document(document),
      m_runs(runs),
      m_banner(banner),
      m_window(window),
      m_job(new BackgroundJob(this)) {}

QMenu* ExportController::buildMenu(QMenuBar* bar) {
  // Exactly what the core registry holds.
  QMenu* menu = bar->addMenu(tr("E&xport"));
  for (const auto& exporter : exporting::listExporters(*m_document->registries())) {
    const QString name = QString::fromStdString(exporter.name);
    QAction* a = menu->addAction(QString::fromStdString(exporter.title), this,
                                 [this, name] { exportCurrent(name); });
    a->setObjectName(QStringLiteral("actionExport_") + name);
    a->setToolTip(QString::fromStdString(exporter.help));
    a->setStatusTip(QString::fromStdString(exporter.help));
    m_actions << a;
  }
  if (!m_actions.isEmpty()) m_actions.front()->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
  // Every format at once, into a folder the user picks (the run's exports/ folder to start).
  QAction* toFolder = menu->addAction(tr("Export all &to folder..."), this, [this] {
    const QString folder = QFileDialog::getExistingDirectory(
        m_window, tr("Export to folder"),
        QString::fromStdString(
            exporting::defaultExportFolder(m_runs->currentCheckpoint().toStdString())));
    if (!folder.isEmpty()) exportCurrent(QString(), folder);
  });
  toFolder->setObjectName(QStringLiteral("actionExportToFolder"));
  toFolder->setShortcut(QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_E));
  toFolder->setToolTip(
      tr("ONNX, safetensors and PyTorch files of the checkpoint, in a folder "
         "you choose"));
  m_actions << toFolder;
  menu->addSeparator();
  m_checkpointInfo = menu->addAction(QString());
  m_checkpointInfo->setEnabled(false);
  menu->addAction(tr("Choose &checkpoint..."), this, [this] {
    const QString path = m_runs->pickCheckpoint(tr("Choose a checkpoint"));
    if (!path.isEmpty()) m_runs->setCurrentCheckpoint(path);
  });
  return menu;
}

void ExportController::updateActions() {
  const QString checkpoint = m_runs->currentCheckpoint();
  for (auto* a : m_actions)
    a->setEnabled(!checkpoint.isEmpty() && !m_job->isRunning());
  m_checkpointInfo->setText(checkpoint.isEmpty()
                                ? tr("No checkpoint yet: train, or choose one")
                                : tr("Checkpoint: %1").arg(QDir::toNativeSeparators(checkpoint)));
}

void ExportController::exportCurrent(const QString& exporter, const QString& folder) {
  const QString checkpoint = m_runs->currentCheckpoint();
  if (checkpoint.isEmpty() || m_job->isRunning()) return;
  exporting::ExportJob job;
  job.registries = m_document->registries();
  job.checkpoint = checkpoint.toStdString();
  // A run of the open project reads the project's own data for the parity check; a checkpoint
  // from elsewhere only data a project file beside it names (else random inputs, and a note).
  job.dataFromCheckpoint = QDir(QString::fromStdString(data::checkpointHome(job.checkpoint))) ==
                           QDir(m_document->baseDir());
  try {
    job.targets =
        exporting::exportTargetsIn(folder.toStdString(), job.checkpoint, exporter.toStdString());
  } catch (const std::exception& e) {
    m_banner->showText(QString::fromStdString(e.what()));
    return;
  }
  const QString what = exporter.isEmpty() ? tr("every format") : exporter;
  m_window->statusBar()->showMessage(tr("Exporting %1 from %2...").arg(what, checkpoint));
  spdlog::info("exporting {} from {}", what.toStdString(), job.checkpoint);
  m_job->start([job](const JobContext&) { return exporting::runExportJob(job); },
               [this, checkpoint](const exporting::ExportJobResult& result) {
                 showReport(new ExportReportDialog(checkpoint, result, m_window), {});
               },
               [this, checkpoint](const QString& error) {
                 showReport(new ExportReportDialog(checkpoint, error, m_window), error);
               });
  updateActions();
}

void ExportController::showReport(ExportReportDialog* dialog, const QString& error) {
  updateActions();
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  const bool ok = error.isEmpty() && dialog->passed();
  if (ok) {
    m_window->statusBar()->showMessage(tr("Export verified"), 8000);
    spdlog::info("{}", dialog->reportText().toStdString());
  } else {
    m_banner->showText(error.isEmpty() ? tr("The export was not verified: see the report")
                                       : tr("Export failed: %1").arg(error));
    spdlog::error("{}", dialog->reportText().toStdString());
  }
  const QString report = dialog->reportText();
  dialog->open();
  Q_EMIT exportFinished(ok, report);
}

}  // namespace netsmith::ui
