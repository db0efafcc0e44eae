// BackgroundJob: results reach the UI thread, a newer job drops the older one's result, cancel
// and stop are seen by the job, progress arrives, and destruction joins the worker.
#include <QSignalSpy>
#include <QThread>
#include <QWidget>
#include <QtTest>

#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <thread>

#include "util/background_job.h"

using netsmith::ui::BackgroundJob;
using netsmith::ui::JobContext;

namespace {

/// Spins until `flag` is set or `job` is cancelled (at most 10 s, so a broken test ends).
void waitFor(const std::atomic<bool>& flag, const JobContext* job = nullptr) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!flag && !(job && job->cancelled()) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

void ignoreError(const QString&) {}

}  // namespace

class BackgroundJobTest : public QObject {
  Q_OBJECT

 private slots:
  void resultIsDeliveredOnTheUiThread() {
    BackgroundJob job;
    std::atomic<QThread*> worker{nullptr};
    QThread* deliveredOn = nullptr;
    int value = 0;
    job.start(
        [&worker](const JobContext&) {
          worker = QThread::currentThread();
          return 42;
        },
        [&](int v) {
          deliveredOn = QThread::currentThread();
          value = v;
        },
        ignoreError);
    QVERIFY(job.isRunning());
    QTRY_COMPARE(value, 42);
    QVERIFY(!job.isRunning());
    QCOMPARE(deliveredOn, QThread::currentThread());
    QVERIFY(worker.load() != nullptr);
    QVERIFY(worker.load() != QThread::currentThread());
  }

  void errorsAreDeliveredAsMessages() {
    BackgroundJob job;
    QString error;
    bool gotResult = false;
    job.start([](const JobContext&) -> int { throw std::runtime_error("disk on fire"); },
              [&](int) { gotResult = true; }, [&](const QString& e) { error = e; });
    QTRY_COMPARE(error, QStringLiteral("disk on fire"));
    QVERIFY(!gotResult);
    QVERIFY(!job.isRunning());
  }

  void aSecondStartDropsTheFirstResult() {
    BackgroundJob job;
    std::atomic<bool> release{false}, firstSawCancel{false};
    std::atomic<int> finished{0};
    QList<int> delivered;
    job.start(
        [&](const JobContext& context) {
          waitFor(release);  // ignores cancelled(): the helper alone must drop the result
          firstSawCancel = context.cancelled();
          ++finished;
          return 1;
        },
        [&](int v) { delivered << v; }, ignoreError);
    job.start(
        [&](const JobContext&) {
          ++finished;
          return 2;
        },
        [&](int v) { delivered << v; }, ignoreError);
    QTRY_COMPARE(delivered, QList<int>{2});
    release = true;
    QTRY_COMPARE(finished.load(), 2);
    QTest::qWait(100);  // the first job's hand-back, queued after it returned, has run by now
    QCOMPARE(delivered, QList<int>{2});
    QVERIFY(firstSawCancel);
  }

  void cancelIsSeenAndNothingIsDelivered() {
    BackgroundJob job;
    std::atomic<bool> never{false}, sawCancel{false};
    bool delivered = false;
    job.start(
        [&](const JobContext& context) {
          waitFor(never, &context);
          sawCancel = context.cancelled();
          return 7;
        },
        [&](int) { delivered = true; }, [&](const QString&) { delivered = true; });
    QVERIFY(job.isRunning());
    job.cancel();
    QVERIFY(!job.isRunning());
    QTRY_VERIFY(sawCancel);
    QTest::qWait(100);
    QVERIFY(!delivered);
  }

  void requestStopStillDeliversThePartialResult() {
    BackgroundJob job;
    std::atomic<bool> never{false};
    int value = 0;
    job.start(
        [&](const JobContext& context) {
          waitFor(never, &context);
          return context.cancelled() ? -1 : 1;  // "partial" when stopped
        },
        [&](int v) { value = v; }, ignoreError);
    job.requestStop();
    QVERIFY(job.isRunning());
    QTRY_COMPARE(value, -1);
    QVERIFY(!job.isRunning());
  }

  void progressArrivesOnTheUiThread() {
    BackgroundJob job;
    QList<QPair<qint64, qint64>> reports;
    bool allOnUiThread = true;
    connect(&job, &BackgroundJob::progress, this, [&](qint64 done, qint64 total) {
      reports << qMakePair(done, total);
      allOnUiThread = allOnUiThread && QThread::currentThread() == thread();
    });
    bool finished = false;
    job.start(
        [](const JobContext& context) {
          for (int i = 1; i <= 3; ++i)
            context.progress(i, 3);
          return true;
        },
        [&](bool) { finished = true; }, ignoreError);
    QTRY_VERIFY(finished);
    // Reports are queued before the result: all of them are in.
    const QList<QPair<qint64, qint64>> expected = {{1, 3}, {2, 3}, {3, 3}};
    QCOMPARE(reports, expected);
    QVERIFY(allOnUiThread);
  }

  void progressOfACancelledJobIsDropped() {
    BackgroundJob job;
    QSignalSpy spy(&job, &BackgroundJob::progress);
    std::atomic<bool> cancelled{false}, reported{false};
    job.start(
        [&](const JobContext& context) {
          waitFor(cancelled);
          context.progress(1, 1);
          reported = true;
          return 0;
        },
        [](int) {}, ignoreError);
    job.cancel();
    cancelled = true;
    QTRY_VERIFY(reported);
    QTest::qWait(100);
    QCOMPARE(spy.count(), 0);
  }

  void destructionWhileRunningJoinsAndDeliversNothing() {
    auto owner = std::make_unique<QWidget>();
    auto* job = new BackgroundJob(owner.get());
    std::atomic<bool> started{false}, never{false}, ended{false};
    int delivered = 0;
    job->start(
        [&](const JobContext& context) {
          started = true;
          waitFor(never, &context);
          // Still busy after seeing the cancel: a detached thread would outlive the owner here.
          std::this_thread::sleep_for(std::chrono::milliseconds(200));
          context.progress(1, 1);
          ended = true;
          return 1;
        },
        [&](int) { ++delivered; }, [&](const QString&) { ++delivered; });
    QTRY_VERIFY(started);
    owner.reset();  // deletes the job: cancels and joins
    QVERIFY(ended);
    QTest::qWait(100);
    QCOMPARE(delivered, 0);
  }
};

QTEST_MAIN(BackgroundJobTest)
#include "background_job_test.moc"
