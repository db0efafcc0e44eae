#pragma once

#include <QList>
#include <QObject>
#include <QString>
#include <QVector>

#include <cstdint>
#include <memory>

class QAction;
class QMainWindow;
class QMenu;

namespace netsmith::run {
struct BatchMetrics;
struct RunRecord;
enum class FinishState;
}  // namespace netsmith::run
namespace netsmith::train {
struct TrainerConfig;
}  // namespace netsmith::train

namespace netsmith::ui {

class Banner;
class ProjectDocument;
class ProjectPages;
class RunStatus;
class TrainerSession;

/// Run control beside the main window: the Train menu (start, pause, stop, resume, the LR
/// finder), what the session reports (the dashboard, the status bar, the log), and the
/// checkpoint the run leaves for Evaluation, Export and Resume.
class RunController : public QObject {
  Q_OBJECT

 public:
  RunController(ProjectDocument* document, TrainerSession* session, ProjectPages* pages,
                RunStatus* status, Banner* banner, QMainWindow* window);
  ~RunController() override;

  /// Fills the Train menu.
  void buildMenu(QMenu* menu);
  /// Start, Pause and Stop, for the tool bar.
  QList<QAction*> toolBarActions() const;
  /// Enables the Train actions for the state of the run and the project.
  void updateActions();

  void startTraining();
  /// Continues the run of `checkpoint` exactly (Train > Resume from checkpoint).
  void resumeFrom(const QString& checkpoint);
  /// Runs the LR range test (Train > Run LR finder); its dialog opens when it ends.
  void runLrFinder();
  /// Train on at most this many training / validation samples (0: all); for quick runs.
  void setSampleLimits(std::int64_t train, std::int64_t validation);

  /// The checkpoint Export and Resume use: the current run's best (or last), or one chosen.
  QString currentCheckpoint() const { return m_checkpoint; }
  void setCurrentCheckpoint(const QString& path);
  /// The best (else last) checkpoint of the project's newest run under its runs/ ("" for none);
  /// with `lastOnly`, its last.safetensors (what Train > Resume last run goes on from).
  QString latestCheckpoint(bool lastOnly = false) const;
  /// Asks for a checkpoint, starting in the current one's folder (or the project's runs/).
  QString pickCheckpoint(const QString& title);
  /// Another project: the last run's figures (charts, evaluation, status bar, banner) and its
  /// sample limits no longer apply.
  void forgetRun();

 Q_SIGNALS:
  /// A run began or ended, or the current checkpoint changed: actions to enable again.
  void changed();

 private:
  void connectSession();
  void showBatches(const QVector<run::BatchMetrics>& list);
  void runFinished(run::FinishState state, const QString& reason);
  /// Offers the LR finder's result: its dialog, whose choice becomes the project's rate.
  void showLrFinder();
  bool fillConfig(train::TrainerConfig& config);
  bool startRun(train::TrainerConfig& config, const QString& what);
  void togglePause();
  void stopAfterEpoch();
  void resumeLast();

  ProjectDocument* m_document;
  TrainerSession* m_session;
  ProjectPages* m_pages;
  RunStatus* m_status;
  Banner* m_banner;
  QMainWindow* m_window;
  QAction* m_start = nullptr;
  QAction* m_pause = nullptr;
  QAction* m_stop = nullptr;
  QAction* m_stopAfterEpoch = nullptr;
  QAction* m_resume = nullptr;
  QAction* m_resumeLast = nullptr;
  QAction* m_lrFind = nullptr;
  QString m_checkpoint;
  /// A resumed run's folder as it was before the resume, for the dashboard once it starts.
  std::unique_ptr<run::RunRecord> m_resumeHistory;
  bool m_lrFindRun = false;
  std::int64_t m_limitTrain = 0;
  std::int64_t m_limitValidation = 0;
};

}  // namespace netsmith::ui
