#pragma once

// The one bridge between Qt and the trainer thread. The trainer's events land in a buffer
// (a mutex and a vector: the trainer never waits for the UI); a ~40 ms single-shot timer on the
// UI thread drains it and emits batched signals (the UI never blocks on the trainer).
#include <QObject>
#include <QString>
#include <QTimer>
#include <QVector>
#include <memory>
#include <mutex>
#include <vector>

#include "run/events.h"
#include "train/trainer.h"

namespace netsmith::ui {

class TrainerSession : public QObject {
  Q_OBJECT

 public:
  explicit TrainerSession(QObject* parent = nullptr);
  ~TrainerSession() override;  ///< stops a running run (a checkpoint is written) and waits

  /// Starts a run; false (with `error`) when one is already running.
  bool start(train::TrainerConfig config, QString* error = nullptr);
  void pause();
  void resume();
  void stop();            ///< stop now; the trainer writes a checkpoint of the position
  void stopAfterEpoch();  ///< finish the epoch (with validation), then stop
  /// stop(), then waits up to `timeoutMs` for the run to end, delivering its last events.
  /// Returns whether it ended in time.
  bool stopAndWait(int timeoutMs = 2000);

  bool isRunning() const { return m_trainer != nullptr; }
  train::RunState state() const;
  /// The last finished run's result.
  const train::TrainResult& lastResult() const { return m_result; }
  /// The drain period (ms).
  static constexpr int kDrainMs = 40;

 Q_SIGNALS:
  void started(const QString& runDir, const QString& description);
  /// After started(): the metric that makes an epoch "best", as the run resolved it.
  void monitorChosen(const QString& metric, bool maximize);
  /// Every BatchEnd since the last drain, in order.
  void batches(const QVector<netsmith::run::BatchMetrics>& batches);
  void epochEnded(const netsmith::run::EpochMetrics& epoch);
  void checkpointWritten(const QString& tag, const QString& path);
  void message(const QString& level, const QString& text);  ///< "info", "warning"
  /// Training is over and the test split is being evaluated (`text` says on how many images).
  void testing(const QString& text);
  /// A warning about one batch (the loss or gradient norm running away: "divergence").
  void batchWarning(qint64 epoch, qint64 batch, const QString& text);
  void finished(netsmith::run::FinishState state, const QString& reason);

 private:
  class Buffer;
  void scheduleDrain();
  void drain();

  std::unique_ptr<train::Trainer> m_trainer;
  std::shared_ptr<Buffer> m_buffer;
  QTimer m_timer;
  train::TrainResult m_result;
};

}  // namespace netsmith::ui

Q_DECLARE_METATYPE(netsmith::run::BatchMetrics)
Q_DECLARE_METATYPE(netsmith::run::EpochMetrics)
Q_DECLARE_METATYPE(netsmith::run::FinishState)
