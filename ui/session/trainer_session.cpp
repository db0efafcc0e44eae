#include "session/trainer_session.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QThread>

namespace netsmith::ui {

/// Collects events on the trainer's delivery thread; asks the UI thread to drain when the
/// buffer goes from empty to non-empty.
class TrainerSession::Buffer : public run::EventSink {
 public:
  explicit Buffer(TrainerSession* session) : m_session(session) {}
  void onEvent(const run::TrainingEvent& e) override {
    bool wasEmpty = false;
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      wasEmpty = m_events.empty();
      m_events.push_back(e);
    }
    if (wasEmpty) {
      QMetaObject::invokeMethod(
          m_session, [s = m_session] { s->scheduleDrain(); }, Qt::QueuedConnection);
    }
  }
  std::vector<run::TrainingEvent> take() {
    std::lock_guard<std::mutex> lock(m_mutex);
    std::vector<run::TrainingEvent> out;
    out.swap(m_events);
    return out;
  }

 private:
  TrainerSession* m_session;
  std::mutex m_mutex;
  std::vector<run::TrainingEvent> m_events;
};

TrainerSession::TrainerSession(QObject* parent) : QObject(parent) {
  qRegisterMetaType<netsmith::run::BatchMetrics>();
  qRegisterMetaType<netsmith::run::EpochMetrics>();
  qRegisterMetaType<netsmith::run::FinishState>();
  m_timer.setSingleShot(true);
  m_timer.setInterval(kDrainMs);
  connect(&m_timer, &QTimer::timeout, this, &TrainerSession::drain);
}

TrainerSession::~TrainerSession() {
  if (m_trainer) {
    m_trainer->stop();
    m_trainer->wait();  // the trainer writes its checkpoint before it ends
  }
}

bool TrainerSession::start(train::TrainerConfig config, QString* error) {
  if (m_trainer) {
    if (error) *error = tr("a run is already in progress");
    return false;
  }
  m_buffer = std::make_shared<Buffer>(this);
  m_trainer = std::make_unique<train::Trainer>(std::move(config));
  m_trainer->addSink(m_buffer);
  m_trainer->start();
  return true;
}

void TrainerSession::pause() {
  if (m_trainer) m_trainer->pause();
}

void TrainerSession::resume() {
  if (m_trainer) m_trainer->resume();
}

void TrainerSession::stop() {
  if (m_trainer) m_trainer->stop();
}

void TrainerSession::stopAfterEpoch() {
  if (m_trainer) m_trainer->stopAfterEpoch();
}

train::RunState TrainerSession::state() const {
  return m_trainer ? m_trainer->state() : train::RunState::Idle;
}

bool TrainerSession::stopAndWait(int timeoutMs) {
  if (!m_trainer) return true;
  m_trainer->stop();
  QElapsedTimer clock;
  clock.start();
  while (m_trainer && clock.elapsed() < timeoutMs) {
    if (m_trainer->state() == train::RunState::Finished) {
      drain();  // joins and delivers the last events
      break;
    }
    QThread::msleep(5);
  }
  return m_trainer == nullptr;
}

void TrainerSession::scheduleDrain() {
  if (!m_timer.isActive()) m_timer.start();
}

void TrainerSession::drain() {
  if (!m_buffer) return;
  const bool ending = m_trainer && m_trainer->state() == train::RunState::Finished;
  if (ending) m_trainer->wait();  // the thread is done: join it, flush every sink
  QVector<run::BatchMetrics> batchList;
  auto flushBatches = [&] {
    if (!batchList.isEmpty()) Q_EMIT batches(batchList);
    batchList.clear();
  };
  bool finishedSeen = false;
  for (auto& e : m_buffer->take()) {
    switch (e.type) {
      case run::EventType::BatchEnd:
        batchList.push_back(e.batch);
        break;
      case run::EventType::Started:
        flushBatches();
        Q_EMIT started(QString::fromStdString(e.path), QString::fromStdString(e.message));
        if (!e.monitor.empty())
          Q_EMIT monitorChosen(QString::fromStdString(e.monitor), e.monitorMaximize);
        break;
      case run::EventType::EpochEnd:
        flushBatches();
        Q_EMIT epochEnded(e.epoch);
        break;
      case run::EventType::Checkpoint:
        Q_EMIT checkpointWritten(QString::fromStdString(e.tag), QString::fromStdString(e.path));
        break;
      case run::EventType::Log:
      case run::EventType::Warning:
        Q_EMIT message(QString::fromStdString(e.level), QString::fromStdString(e.message));
        if (e.type == run::EventType::Log && e.tag == "test")
          Q_EMIT testing(QString::fromStdString(e.message));
        if (e.type == run::EventType::Warning && e.tag == "divergence")
          Q_EMIT batchWarning(e.batch.epoch, e.batch.batch, QString::fromStdString(e.message));
        break;
      case run::EventType::Finished:
        flushBatches();
        finishedSeen = true;
        break;
    }
  }
  flushBatches();
  if (ending || finishedSeen) {
    if (!ending) m_trainer->wait();
    m_result = m_trainer->result();
    m_trainer.reset();
    m_buffer.reset();
    Q_EMIT finished(m_result.state, QString::fromStdString(m_result.reason));
  }
}

}  // namespace netsmith::ui
