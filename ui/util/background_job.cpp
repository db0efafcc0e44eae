#include "util/background_job.h"

#include <QMetaObject>

#include <algorithm>
#include <atomic>
#include <thread>

namespace netsmith::ui {

namespace detail {

/// One start(): its worker thread, and the flag its context reads.
struct JobRun {
  std::uint64_t id = 0;
  std::atomic<bool> cancelled{false};
  std::thread thread;
};

}  // namespace detail

bool JobContext::cancelled() const {
  return m_run->cancelled.load();
}

void JobContext::progress(std::int64_t done, std::int64_t total) const {
  m_job->postProgress(m_run->id, done, total);
}

BackgroundJob::BackgroundJob(QObject* parent) : QObject(parent) {}

BackgroundJob::~BackgroundJob() {
  m_current = 0;
  for (auto& run : m_runs)
    run->cancelled = true;
  // Once every thread has ended nothing posts to this object any more; ~QObject then drops the
  // deliveries and progress reports still queued for it.
  for (auto& run : m_runs)
    if (run->thread.joinable()) run->thread.join();
}

void BackgroundJob::startWork(ErasedWork work) {
  if (auto* previous = currentRun()) previous->cancelled = true;
  auto run = std::make_unique<detail::JobRun>();
  run->id = ++m_lastId;
  m_current = run->id;
  detail::JobRun* raw = run.get();
  m_runs.push_back(std::move(run));
  // The worker reads only its own run and posts to this object; the run and this object live
  // until the thread is joined (in finish() or in the destructor).
  raw->thread = std::thread([this, raw, work = std::move(work)]() mutable {
    Delivery delivery = work(JobContext(this, raw));
    work = nullptr;  // the job's captures go here, on the worker thread
    QMetaObject::invokeMethod(
        this, [this, raw, delivery = std::move(delivery)] { finish(raw, delivery); },
        Qt::QueuedConnection);
  });
}

void BackgroundJob::finish(detail::JobRun* run, const Delivery& delivery) {
  const auto it =
      std::find_if(m_runs.begin(), m_runs.end(), [run](const auto& r) { return r.get() == run; });
  if (it == m_runs.end()) return;
  // The worker posted this as its last step: the join is immediate.
  if ((*it)->thread.joinable()) (*it)->thread.join();
  const bool wanted = (*it)->id == m_current;
  m_runs.erase(it);
  if (!wanted) return;  // superseded or cancelled
  m_current = 0;
  delivery();
}

void BackgroundJob::postProgress(std::uint64_t id, std::int64_t done, std::int64_t total) {
  QMetaObject::invokeMethod(
      this,
      [this, id, done, total] {
        if (id == m_current) Q_EMIT progress(qint64(done), qint64(total));
      },
      Qt::QueuedConnection);
}

void BackgroundJob::cancel() {
  if (auto* run = currentRun()) run->cancelled = true;
  m_current = 0;
}

void BackgroundJob::requestStop() {
  if (auto* run = currentRun()) run->cancelled = true;
}

detail::JobRun* BackgroundJob::currentRun() const {
  for (const auto& run : m_runs)
    if (run->id == m_current) return run.get();
  return nullptr;
}

}  // namespace netsmith::ui
