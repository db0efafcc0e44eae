#pragma once

#include <QList>
#include <QObject>
#include <QString>

class QAction;
class QMainWindow;
class QMenu;
class QMenuBar;

namespace netsmith::ui {

class BackgroundJob;
class Banner;
class ExportReportDialog;
class ProjectDocument;
class RunController;

/// The Export menu: the current checkpoint (RunController's) written by each exporter of the
/// core registry, or by all into a folder, on a worker thread, each export verified and its
/// report shown.
class ExportController : public QObject {
  Q_OBJECT

 public:
  ExportController(ProjectDocument* document, RunController* runs, Banner* banner,
                   QMainWindow* window);

  /// Adds the Export menu to `bar` and returns it (the tool bar's Export button opens it too).
  QMenu* buildMenu(QMenuBar* bar);
  /// Whether the registry offers any format.
  bool hasExporters() const { return !m_actions.isEmpty(); }
  /// Exports the current checkpoint with the named exporter (every one when empty) into
  /// `folder`, or the run's exports/ folder when that is empty; exportFinished() and the report
  /// dialog follow.
  void exportCurrent(const QString& exporter, const QString& folder = QString());
  /// Enables the exports while there is a checkpoint and no export runs.
  void updateActions();

 Q_SIGNALS:
  void exportFinished(bool verified, const QString& report);

 private:
  void showReport(ExportReportDialog* dialog, const QString& error);

  ProjectDocument* m_document;
  RunController* m_runs;
  Banner* m_banner;
  QMainWindow* m_window;
  BackgroundJob* m_job;
  QList<QAction*> m_actions;
  QAction* m_checkpointInfo = nullptr;
};

}  // namespace netsmith::ui
