#pragma once

#include <QMainWindow>

#include <cstdint>

#include "ops/op_registry.h"

class QAction;
class QCustomPlot;
class QLabel;
class QListWidget;
class QPlainTextEdit;
class QProgressBar;
class QTableWidget;

namespace netsmith::ui {

class ProjectDocument;
class TrainerSession;

/// The studio's main window: opens a project, shows its model summary and problems, and trains
/// it in the background (Train menu) with a live loss chart and a log. The editors, the full
/// dashboard and the export menu arrive in later versions.
class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(const ops::OpRegistry& registry, QWidget* parent = nullptr);

  /// Opens `path`; shows the error in a message box (unless `quiet`) and returns false on failure.
  bool openProject(const QString& path, bool quiet = false);
  ProjectDocument* document() const { return m_document; }
  TrainerSession* session() const { return m_session; }
  /// Train on at most this many training / validation samples (0: all); for quick runs.
  void setSampleLimits(std::int64_t train, std::int64_t validation);

 protected:
  void closeEvent(QCloseEvent* event) override;

 private:
  void buildMenus();
  void buildTrainingDock();
  void startTraining();
  void togglePause();
  void updateTrainActions();
  void rescaleLossChart();
  void refresh();
  void openWithDialog();
  void showAbout();

  ProjectDocument* m_document;
  QLabel* m_title;
  QTableWidget* m_table;
  QListWidget* m_problems;
  QLabel* m_totals;

  TrainerSession* m_session;
  QCustomPlot* m_lossChart = nullptr;
  QPlainTextEdit* m_log = nullptr;
  QLabel* m_runState = nullptr;
  QProgressBar* m_progress = nullptr;
  QAction* m_start = nullptr;
  QAction* m_pause = nullptr;
  QAction* m_stop = nullptr;
  QAction* m_stopAfterEpoch = nullptr;
  std::int64_t m_limitTrain = 0;
  std::int64_t m_limitValidation = 0;
  std::int64_t m_lastStep = 0;
};

}  // namespace netsmith::ui
