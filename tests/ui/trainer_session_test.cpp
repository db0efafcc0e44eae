// TrainerSession: the Qt bridge to the trainer thread, on real (test-written) data.
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QtTest>
#include <filesystem>

#include "../core/train_fixtures.h"
#include "checkpoint/checkpoint.h"
#include "project/project.h"
#include "registries/registries.h"
#include "session/trainer_session.h"

using namespace netsmith;
using netsmith::testutil::TempDir;

namespace {

train::TrainerConfig configFor(const TempDir& dir, const Json& train) {
  return testutil::trainerConfigFor(testutil::writeTrainProject(dir, train), dir);
}

}  // namespace

class TrainerSessionTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void deliversBatchedEventsInOrder() {
    TempDir dir;
    ui::TrainerSession session;
    QSignalSpy started(&session, &ui::TrainerSession::started);
    QSignalSpy batches(&session, &ui::TrainerSession::batches);
    QSignalSpy epochs(&session, &ui::TrainerSession::epochEnded);
    QSignalSpy finished(&session, &ui::TrainerSession::finished);
    QSignalSpy monitor(&session, &ui::TrainerSession::monitorChosen);
    QVERIFY(session.start(configFor(dir, {{"epochs", 2}, {"monitor", "val_loss"}})));
    QString error;
    QVERIFY(!session.start(configFor(dir, {}), &error));  // one run at a time
    QVERIFY(!error.isEmpty());
    QVERIFY(finished.wait(60000));
    QCOMPARE(started.count(), 1);
    // The run says which metric makes an epoch "best", as it resolved it: the loss is lowered.
    QCOMPARE(monitor.count(), 1);
    QCOMPARE(monitor.at(0).at(0).toString(), QStringLiteral("val_loss"));
    QCOMPARE(monitor.at(0).at(1).toBool(), false);
    QCOMPARE(epochs.count(), 2);
    std::int64_t lastStep = 0, total = 0;
    for (const auto& args : batches) {
      const auto list = args.at(0).value<QVector<run::BatchMetrics>>();
      QVERIFY(!list.isEmpty());
      for (const auto& b : list) {
        QCOMPARE(b.step, lastStep + 1);
        lastStep = b.step;
        ++total;
      }
    }
    QCOMPARE(total, std::int64_t(12));
    QVERIFY(batches.count() <= total);  // batched, never more signals than events
    QCOMPARE(finished.at(0).at(0).value<run::FinishState>(), run::FinishState::Completed);
    QVERIFY(!session.isRunning());
    QVERIFY(session.lastResult().hasTest);
  }

  void stopReturnsWithinTwoSecondsWithACheckpoint() {
    TempDir dir;
    ui::TrainerSession session;
    QSignalSpy batches(&session, &ui::TrainerSession::batches);
    QSignalSpy finished(&session, &ui::TrainerSession::finished);
    QVERIFY(session.start(configFor(dir, {{"epochs", 500}})));
    QVERIFY(batches.wait(30000));
    session.pause();
    QTRY_COMPARE_WITH_TIMEOUT(session.state(), train::RunState::Paused, 5000);
    session.resume();
    QElapsedTimer clock;
    clock.start();
    QVERIFY(session.stopAndWait(2000));
    QVERIFY(clock.elapsed() < 2000);
    QCOMPARE(finished.count(), 1);
    QCOMPARE(session.lastResult().state, run::FinishState::Stopped);
    const auto ckpt = session.lastResult().lastCheckpoint;
    QVERIFY(!ckpt.empty());
    checkpoint::readCheckpoint(ckpt);  // throws if not loadable
  }

  // "Local processes: 2" from the studio: the session's trainer is rank 0 and starts rank 1
  // (netsmith-cli). A pause longer than the exchange timeout holds both ranks (a heartbeat
  // keeps them in touch); after resuming both go on, and a stop ends both with a checkpoint.
  void twoLocalProcessesPauseResumeAndStopTogether() {
    TempDir dir;
    auto config = configFor(dir, {{"epochs", 500}, {"local_processes", 2}, {"dist_timeout", 2.0}});
    config.workerProgram = NETSMITH_CLI;
    ui::TrainerSession session;
    QSignalSpy batches(&session, &ui::TrainerSession::batches);
    QSignalSpy finished(&session, &ui::TrainerSession::finished);
    QVERIFY(session.start(config));
    QVERIFY(batches.wait(60000));
    session.pause();
    QTRY_COMPARE_WITH_TIMEOUT(session.state(), train::RunState::Paused, 5000);
    QTest::qWait(3500);  // longer than dist_timeout
    QCOMPARE(session.state(), train::RunState::Paused);
    QVERIFY(finished.isEmpty());
    batches.clear();
    session.resume();
    QVERIFY(batches.wait(30000));
    QVERIFY(session.stopAndWait(10000));
    QCOMPARE(finished.count(), 1);
    const auto result = session.lastResult();
    QVERIFY2(result.state == run::FinishState::Stopped, result.reason.c_str());
    QCOMPARE(result.worldSize, 2);
    checkpoint::readCheckpoint(result.lastCheckpoint);
    // Only rank 0 wrote a run folder.
    int runs = 0;
    for (const auto& run : std::filesystem::directory_iterator(dir.file("runs"))) {
      (void)run;
      ++runs;
    }
    QCOMPARE(runs, 1);
  }

  void destroyingTheSessionDuringTrainingLeavesALoadableCheckpoint() {
    TempDir dir;
    std::string runsRoot = dir.file("runs");
    {
      ui::TrainerSession session;
      QSignalSpy batches(&session, &ui::TrainerSession::batches);
      QVERIFY(session.start(configFor(dir, {{"epochs", 500}})));
      QVERIFY(batches.wait(30000));
    }
    int found = 0;
    for (const auto& run : std::filesystem::directory_iterator(runsRoot)) {
      const auto last = run.path() / "checkpoints" / "last.safetensors";
      QVERIFY(std::filesystem::exists(last));
      const auto meta = checkpoint::readCheckpoint(last.string()).meta;
      QVERIFY(meta["step"].get<std::int64_t>() > 0);
      ++found;
    }
    QCOMPARE(found, 1);
  }
};

QTEST_GUILESS_MAIN(TrainerSessionTest)
#include "trainer_session_test.moc"
