#include "train/trainer.h"

#include <torch/torch.h>

#include <chrono>
#include <cstdio>

#include "common/error.h"
#include "run/run_writer.h"
#include "train/fit.h"

namespace netsmith::train {

namespace {

double monotonicSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

std::string describeTestFigure(const TrainResult& r) {
  if (r.hasTest) {
    return "test" + run::figuresText(r.test) + " on " + std::to_string(r.test.samples) +
           " images (checkpoint " + (r.testCheckpoint.empty() ? "last" : r.testCheckpoint) + ")";
  }
  if (r.testSplitSize <= 0) return {};
  std::string text = "the test split (" + std::to_string(r.testSplitSize) +
                     " images) was not evaluated: the run " +
                     (r.state == run::FinishState::Completed ? "skipped it" : "did not complete");
  const std::string ckpt = !r.bestCheckpoint.empty() ? r.bestCheckpoint : r.lastCheckpoint;
  if (!ckpt.empty()) text += "; netsmith-cli eval " + ckpt + " evaluates it";
  return text;
}

Trainer::Trainer(TrainerConfig config) : m_config(std::move(config)) {}

Trainer::~Trainer() {
  stop();
  if (m_thread.joinable()) m_thread.join();
  m_sinks.clear();
}

void Trainer::addSink(std::shared_ptr<run::EventSink> sink, run::Overflow overflow) {
  m_sinks.push_back(std::make_shared<run::AsyncSink>(std::move(sink), overflow));
}

void Trainer::attachRunWriter(const std::string& runDir, const std::string& headline) {
  {
    std::lock_guard<std::mutex> lock(m_resultMutex);
    m_runDir = runDir;
  }
  // First in line; it also gets the events sent before the folder existed.
  m_runWriter = std::make_shared<run::RunWriter>(runDir, headline);
  auto writer = std::make_shared<run::AsyncSink>(m_runWriter, run::Overflow::Wait);
  for (const auto& e : m_beforeRunDir)
    writer->onEvent(e);
  m_beforeRunDir.clear();
  m_sinks.insert(m_sinks.begin(), writer);
  m_runWriterQueue = writer;
}

void Trainer::publish(run::TrainingEvent event) {
  event.time = monotonicSeconds() - m_startTime;
  if (event.type == run::EventType::BatchEnd) event.batch.seconds = event.time;
  if (m_runDir.empty() && m_state == RunState::Preparing) m_beforeRunDir.push_back(event);
  for (auto& sink : m_sinks)
    sink->onEvent(event);
}

void Trainer::start() {
  if (m_thread.joinable()) throw Error("the trainer was already started");
  m_state = RunState::Preparing;
  m_thread = std::thread([this] { run(); });
}

void Trainer::wait() {
  if (m_thread.joinable()) m_thread.join();
  for (auto& sink : m_sinks)
    sink->flush();
}

void Trainer::pause() {
  m_controls.paused = true;
}

void Trainer::resume() {
  {
    std::lock_guard<std::mutex> lock(m_controls.mutex);
    m_controls.paused = false;
  }
  m_controls.cv.notify_all();
}

void Trainer::stop() {
  {
    std::lock_guard<std::mutex> lock(m_controls.mutex);
    m_controls.stopNow = true;
  }
  m_controls.cv.notify_all();
}

void Trainer::stopAfterEpoch() {
  m_controls.stopAfterEpoch = true;
}

TrainResult Trainer::result() const {
  std::lock_guard<std::mutex> lock(m_resultMutex);
  return m_result;
}

std::string Trainer::runDir() const {
  std::lock_guard<std::mutex> lock(m_resultMutex);
  return m_runDir;
}

void Trainer::run() {
  m_startTime = monotonicSeconds();
  RunContext ctx{m_config,
                 m_controls,
                 m_state,
                 [this](run::TrainingEvent e) { publish(std::move(e)); },
                 [this](const std::string& dir, const std::string& headline) {
                   attachRunWriter(dir, headline);
                 },
                 [this] { return m_runWriter ? m_runWriter->failure() : std::string(); }};
  TrainResult result;
  {
    Fit fit(ctx);
    run::FinishState state = run::FinishState::Completed;
    std::string reason;
    auto failure = TrainResult::Failure::Run;
    try {
      fit.run();
    } catch (const RunEnd& end) {
      state = end.state;
      reason = end.reason;
      if (end.ioFailure) failure = TrainResult::Failure::Io;
    } catch (const IoError& e) {
      state = run::FinishState::Failed;
      reason = e.what();
      failure = TrainResult::Failure::Io;
    } catch (const Error& e) {
      state = run::FinishState::Failed;
      reason = e.what();
      // Before the first batch: the project, the data or the run folder was refused. After:
      // the run failed (another rank ended, a sample that cannot be decoded).
      failure = fit.trainedABatch() ? TrainResult::Failure::Run : TrainResult::Failure::Input;
    } catch (const c10::Error& e) {
      state = run::FinishState::Failed;
      reason = std::string("LibTorch: ") + e.what_without_backtrace();
    } catch (const std::exception& e) {
      state = run::FinishState::Failed;
      reason = e.what();
    }
    result = fit.result();
    if (!reason.empty()) {
      result.state = state;
      result.reason = reason;
      if (state == run::FinishState::Failed) result.failure = failure;
    }
    if (fit.deterministic()) at::globalContext().setDeterministicAlgorithms(false, false);
  }  // the run's resources (loaders, other ranks) are released before Finished goes out
  if (m_runWriterQueue) {
    // The records are never thinned: a disk slower than training makes training wait.
    if (const double waited = m_runWriterQueue->waitedSeconds(); waited >= 0.1)
      ctx.log("training waited " + brief(waited, 3) +
              " s in all for the run's records to be written (a slow disk)");
  }
  run::TrainingEvent finished;
  finished.type = run::EventType::Finished;
  finished.state = result.state;
  finished.message = result.reason;
  finished.path = result.runDir;
  finished.hasTest = result.hasTest;
  finished.tag = result.testCheckpoint;
  finished.test = result.test;
  {
    std::lock_guard<std::mutex> lock(m_resultMutex);
    m_result = result;
  }
  m_state = RunState::Finished;
  publish(std::move(finished));
}

}  // namespace netsmith::train
