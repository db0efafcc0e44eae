#pragma once

// A page's background work: a callable run on a worker thread, its progress and its result handed
// back to the UI thread. A page owns one BackgroundJob per kind of work (the data scan, the
// evaluation, the augmentation preview) and connects to progress() once.
#include <QObject>
#include <QString>

#include <cstdint>
#include <exception>
#include <functional>
#include <list>
#include <memory>
#include <type_traits>
#include <utility>

namespace netsmith::ui {

class BackgroundJob;
namespace detail {
struct JobRun;
}

/// What a running job sees of its BackgroundJob, on the worker thread.
class JobContext {
 public:
  /// True once the job is cancelled, asked to stop or superseded by a newer start(); a long job
  /// checks it now and then and returns early.
  bool cancelled() const;
  /// Reports (done, total); BackgroundJob::progress() follows on the UI thread.
  void progress(std::int64_t done, std::int64_t total) const;

 private:
  friend class BackgroundJob;
  JobContext(BackgroundJob* job, detail::JobRun* run) : m_job(job), m_run(run) {}

  BackgroundJob* m_job;
  detail::JobRun* m_run;
};

/// Runs work for a UI object on worker threads and hands the result of the latest job back to
/// the UI thread through a queued call, only while it is still wanted: starting a new job
/// supersedes the running one (its result is never delivered), cancel() drops it, and destroying
/// the BackgroundJob cancels every job and joins its thread, so no callback reaches a destroyed
/// widget (a job that never checks cancelled() delays the destruction until it ends). Make it a
/// child (or a member) of the widget its callbacks use, and call it from that widget's thread.
///
///     m_job = new BackgroundJob(this);
///     connect(m_job, &BackgroundJob::progress, m_bar, [this](qint64 done, qint64 total) {...});
///     m_job->start([project](const JobContext& job) { return scan(project, job); },
///                  [this](Scan scan) { show(scan); },
///                  [this](const QString& error) { showError(error); });
class BackgroundJob : public QObject {
  Q_OBJECT

 public:
  explicit BackgroundJob(QObject* parent = nullptr);
  /// Cancels every job still running and waits for its thread.
  ~BackgroundJob() override;

  /// Runs `work(const JobContext&)` on a new worker thread, then, on the UI thread,
  /// `onResult(result)` with what it returned, or `onError(message)` when it threw a
  /// std::exception. Neither is called when the job is superseded or cancelled first. A job
  /// still running is superseded: its context reports cancelled() and its result is dropped.
  template <typename Work, typename OnResult, typename OnError>
  void start(Work work, OnResult onResult, OnError onError);
  /// Asks the current job to stop (its context reports cancelled()) and drops its result.
  void cancel();
  /// Asks the current job to stop (its context reports cancelled()) but still delivers what it
  /// returns: a partial scan, a partial evaluation.
  void requestStop();
  /// True from start() until the current job's result is delivered or cancel() drops it.
  bool isRunning() const { return m_current != 0; }

 Q_SIGNALS:
  /// The current job's progress, on the UI thread.
  void progress(qint64 done, qint64 total);

 private:
  friend class JobContext;
  using Delivery = std::function<void()>;
  using ErasedWork = std::function<Delivery(const JobContext&)>;

  void startWork(ErasedWork work);
  void finish(detail::JobRun* run, const Delivery& delivery);
  void postProgress(std::uint64_t id, std::int64_t done, std::int64_t total);
  detail::JobRun* currentRun() const;

  std::list<std::unique_ptr<detail::JobRun>> m_runs;  ///< every thread not joined yet
  std::uint64_t m_current = 0;                        ///< the run whose result is wanted; 0: none
  std::uint64_t m_lastId = 0;
};

template <typename Work, typename OnResult, typename OnError>
void BackgroundJob::start(Work work, OnResult onResult, OnError onError) {
  using Result = std::invoke_result_t<Work&, const JobContext&>;
  startWork([work = std::move(work), onResult = std::move(onResult),
             onError = std::move(onError)](const JobContext& context) mutable -> Delivery {
    try {
      if constexpr (std::is_void_v<Result>) {
        work(context);
        return [onResult] { onResult(); };
      } else {
        // Shared: the delivery is a copyable std::function, the result may be large.
        auto result = std::make_shared<Result>(work(context));
        return [onResult, result] { onResult(std::move(*result)); };
      }
    } catch (const std::exception& e) {
      return [onError, message = QString::fromUtf8(e.what())] { onError(message); };
    } catch (...) {
      return [onError] { onError(QObject::tr("unknown error")); };
    }
  });
}

}  // namespace netsmith::ui
