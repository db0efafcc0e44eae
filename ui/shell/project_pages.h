#pragma once

// The project's pages behind the navigator: read-only summaries of the model, the data, the
// augmentations and the training options, the live dashboard and the project's past runs.
#include <QString>
#include <QStringList>
#include <QVector>
#include <QWidget>
#include <memory>

#include "evaluation/task_views_fwd.h"
#include "monitor/run_history.h"

class QLabel;
class QListWidget;
class QPlainTextEdit;
class QPushButton;
class QStackedWidget;
class QTableWidget;
class QTreeWidget;

namespace netsmith::ui {

class Dashboard;
class AugmentPage;
class DataPage;
class EvaluationPage;
class ExperimentsPage;
class ModelPage;
class PredictPage;
class RunsPage;
class TrainingPage;
class ProjectDocument;

class ProjectPages : public QWidget {
  Q_OBJECT

 public:
  enum Page {
    ModelPage,
    DataPage,
    AugmentPage,
    TrainingPage,
    DashboardPage,
    RunsPage,
    EvalPage,
    ExperimentsPage,
    PredictPage
  };

  /// `views`: the Evaluation page's task views (TaskViewRegistry).
  ProjectPages(ProjectDocument* document, TaskViewsPtr views, QWidget* parent = nullptr);

  void showPage(Page page);
  Page currentPage() const;
  Dashboard* dashboard() const { return m_dashboard; }
  ::netsmith::ui::ModelPage* modelPage() const { return m_modelPage; }
  ::netsmith::ui::TrainingPage* trainingPage() const { return m_trainingPage; }
  ::netsmith::ui::AugmentPage* augmentPage() const { return m_augmentPage; }
  ::netsmith::ui::EvaluationPage* evaluationPage() const { return m_evaluationPage; }
  ::netsmith::ui::ExperimentsPage* experimentsPage() const { return m_experimentsPage; }
  ::netsmith::ui::PredictPage* predictPage() const { return m_predictPage; }
  QListWidget* navigator() const { return m_navigator; }

  /// Re-reads everything shown from the document.
  void refresh();
  /// Scans the data (on a worker thread); dataSummaryReady() follows.
  void loadDataSummary();
  ::netsmith::ui::DataPage* dataPage() const { return m_dataPage; }
  /// Re-reads runs/ of the project.
  void refreshRuns();
  const QVector<RunHistory>& runs() const;
  /// Selects the run at `row` of the runs table.
  void selectRun(int row);
  /// Overlays the selected run on the dashboard.
  void overlaySelectedRun();

 Q_SIGNALS:
  void dataSummaryReady();
  /// "Load best" on the Runs page: the checkpoint becomes the studio's current one.
  void checkpointChosen(const QString& path);

 private:
  ProjectDocument* m_document;
  QListWidget* m_navigator;
  QStackedWidget* m_stack;
  Dashboard* m_dashboard;
  ::netsmith::ui::ModelPage* m_modelPage = nullptr;
  ::netsmith::ui::TrainingPage* m_trainingPage = nullptr;
  ::netsmith::ui::AugmentPage* m_augmentPage = nullptr;
  ::netsmith::ui::EvaluationPage* m_evaluationPage = nullptr;
  ::netsmith::ui::ExperimentsPage* m_experimentsPage = nullptr;
  ::netsmith::ui::PredictPage* m_predictPage = nullptr;
  // Data
  ::netsmith::ui::DataPage* m_dataPage = nullptr;
  ::netsmith::ui::RunsPage* m_runsPage = nullptr;
};

}  // namespace netsmith::ui
