#pragma once

#include <QObject>
#include <QVector>

#include <cstdint>

class QLabel;
class QProgressBar;
class QStatusBar;
class QToolButton;

namespace netsmith::run {
struct BatchMetrics;
}

namespace netsmith::ui {

class ElidedLabel;

/// The status bar's account of a run: its state in words, its progress with the time left, the
/// device it trains on, and after a run a link to the Evaluation page.
class RunStatus : public QObject {
  Q_OBJECT

 public:
  /// Adds its widgets to `bar`.
  explicit RunStatus(QStatusBar* bar);

  /// The run state ("completed: trained 2 epochs; test accuracy ...").
  QString text() const;
  void setText(const QString& text);
  /// A run is asked for: `what` it does, progress at 0.
  void requested(const QString& what);
  /// The run began: no link to a last run's evaluation, the time left counted from its next
  /// batch.
  void started(const QString& what);
  /// The newest batches: progress, time left (the run's own training time, so a pause does not
  /// stretch it), and unless `paused` the epoch, batch and throughput.
  void showBatches(const QVector<run::BatchMetrics>& list, bool paused);
  void showPaused();
  /// The test pass after the last epoch: busy, without a time left.
  void showTesting(const QString& text);
  /// The run ended with `text`; `offerEvaluation` shows the link to its figures.
  void showFinished(const QString& text, bool completed, bool offerEvaluation);
  /// Idle, with nothing of a last run.
  void clear();

 Q_SIGNALS:
  void evaluationRequested();

 private:
  QLabel* m_device;
  ElidedLabel* m_state;
  QToolButton* m_toEvaluation;
  QProgressBar* m_progress;
  std::int64_t m_firstStep = -1;
  double m_firstRunSeconds = 0;  ///< the first shown batch's training time
};

}  // namespace netsmith::ui
