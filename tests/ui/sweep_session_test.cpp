// SweepSession, the studio's side of a `netsmith-cli sweep --json` child: lines read back into
// sweep events (the same type the CLI wrote), other output as text, the exit code, stop by
// SIGTERM, a window closed while a sweep runs. Children are small shell scripts standing in for
// the sweep (their output is the test's input), and the real netsmith-cli for the exit codes.
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

#include "common/exit_codes.h"
#include "experiment/sweep_event.h"
#include "session/sweep_session.h"

using netsmith::experiment::SweepEvent;
using netsmith::experiment::SweepEventType;
using netsmith::ui::SweepSession;

namespace {

/// A script in `dir` that runs `body` under /bin/sh.
QString script(const QTemporaryDir& dir, const QString& name, const QString& body) {
  const QString path = dir.filePath(name);
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly)) return {};
  f.write(("#!/bin/sh\n" + body + "\n").toUtf8());
  f.close();
  f.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
  return path;
}

QString shellQuoted(const std::string& text) {
  QString q = QString::fromStdString(text);
  q.replace(QStringLiteral("'"), QStringLiteral("'\\''"));
  return "'" + q + "'";
}

QStringList texts(const QSignalSpy& spy) {
  QStringList out;
  for (const auto& args : spy)
    out << args.at(0).toString();
  return out;
}

}  // namespace

class SweepSessionTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    qRegisterMetaType<netsmith::experiment::SweepEvent>("netsmith::experiment::SweepEvent");
  }

  // Events come back as the CLI wrote them; other lines and standard error as text, the last
  // line too when the child ends without a newline; the exit code last.
  void linesBecomeEventsAndTextThenTheExitCode() {
    QTemporaryDir dir;
    SweepEvent started;
    started.type = SweepEventType::SweepStarted;
    started.folder = "sweeps/lr-1";
    started.name = "lr";
    started.plannedTrials = 12;
    started.parallel = 2;
    SweepEvent epoch;
    epoch.type = SweepEventType::Epoch;
    epoch.trial = 3;
    epoch.epoch = 2;
    epoch.epochs = 9;
    epoch.objective = "val_mae";
    epoch.value = 0.125;
    const QString body = "printf '%s\\n' " + shellQuoted(started.toJson().dump()) +
                         "\necho 'resuming trial 3'\necho 'a warning' >&2\nprintf '%s\\n' " +
                         shellQuoted(epoch.toJson().dump()) +
                         "\necho '{\"event\": \"from_a_newer_netsmith\"}'\nprintf 'no newline'\n"
                         "exit 3";
    SweepSession session;
    QSignalSpy events(&session, &SweepSession::eventArrived);
    QSignalSpy text(&session, &SweepSession::textArrived);
    QSignalSpy finished(&session, &SweepSession::finished);
    QString error;
    QVERIFY2(session.start(script(dir, "sweep.sh", body), {}, &error), qPrintable(error));
    QVERIFY(finished.wait(10000));
    QCOMPARE(finished.at(0).at(0).toInt(), 3);
    QVERIFY(!session.isRunning());

    QCOMPARE(events.size(), 2);
    const auto first = events.at(0).at(0).value<SweepEvent>();
    QVERIFY(first.type == SweepEventType::SweepStarted);
    QCOMPARE(QString::fromStdString(first.folder), QStringLiteral("sweeps/lr-1"));
    QCOMPARE(first.plannedTrials, std::int64_t(12));
    QCOMPARE(first.parallel, std::int64_t(2));
    const auto second = events.at(1).at(0).value<SweepEvent>();
    QVERIFY(second.type == SweepEventType::Epoch);
    QCOMPARE(second.trial, std::int64_t(3));
    QCOMPARE(QString::fromStdString(second.objective), QStringLiteral("val_mae"));
    QCOMPARE(second.value, 0.125);

    const QStringList said = texts(text);
    QVERIFY2(said.contains(QStringLiteral("resuming trial 3")), qPrintable(said.join('|')));
    QVERIFY2(said.contains(QStringLiteral("a warning")), qPrintable(said.join('|')));
    // An event this Netsmith does not know is shown, not dropped.
    QVERIFY2(said.contains(QStringLiteral("{\"event\": \"from_a_newer_netsmith\"}")),
             qPrintable(said.join('|')));
    QVERIFY2(said.contains(QStringLiteral("no newline")), qPrintable(said.join('|')));
  }

  // A child that writes without end does not grow the studio's memory: past 1 MiB without a
  // newline the line is shown cut and dropped, and what follows is read normally.
  void anEndlessLineIsCutAndDropped() {
    QTemporaryDir dir;
    const QString body = "head -c 3000000 /dev/zero | tr '\\0' x\necho\necho after\nexit 0";
    SweepSession session;
    QSignalSpy text(&session, &SweepSession::textArrived);
    QSignalSpy finished(&session, &SweepSession::finished);
    QString error;
    QVERIFY2(session.start(script(dir, "endless.sh", body), {}, &error), qPrintable(error));
    QVERIFY(finished.wait(20000));
    // Exactly two lines: the cut one (its first 200 characters), then the next line.
    const QStringList said = texts(text);
    QCOMPARE(said.size(), 2);
    QCOMPARE(said.at(0), QString(200, QLatin1Char('x')) + QStringLiteral("..."));
    QCOMPARE(said.at(1), QStringLiteral("after"));
  }

  // One sweep at a time; a program that does not start is said.
  void oneSweepAtATimeAndAProgramThatDoesNotStart() {
    QTemporaryDir dir;
    SweepSession session;
    QString error;
    QVERIFY(!session.start(dir.filePath(QStringLiteral("no-such-program")), {}, &error));
    QVERIFY2(error.contains(QStringLiteral("Could not start")), qPrintable(error));
    QVERIFY(!session.isRunning());
    QSignalSpy finished(&session, &SweepSession::finished);
    QVERIFY2(session.start(script(dir, "slow.sh", "sleep 30"), {}, &error), qPrintable(error));
    QVERIFY(session.isRunning());
    error.clear();
    QVERIFY(!session.start(script(dir, "other.sh", "exit 0"), {}, &error));
    QVERIFY2(error.contains(QStringLiteral("already running")), qPrintable(error));
    session.stop();
    QVERIFY(finished.wait(10000));
    QVERIFY(!session.isRunning());
  }

  // Stop sends SIGTERM, which the sweep turns into checkpoints and exit 130; closing the studio
  // while a sweep runs does the same and waits for it.
  void stopAndTheDestructorLetTheSweepWriteItsCheckpoints() {
    QTemporaryDir dir;
    const QString marker = dir.filePath(QStringLiteral("checkpointed"));
    const QString body = "trap 'touch " + marker +
                         "; exit 130' TERM\necho ready\n"
                         "while true; do sleep 0.05; done";
    {
      SweepSession session;
      QSignalSpy text(&session, &SweepSession::textArrived);
      QSignalSpy finished(&session, &SweepSession::finished);
      QString error;
      QVERIFY2(session.start(script(dir, "trap.sh", body), {}, &error), qPrintable(error));
      QTRY_VERIFY_WITH_TIMEOUT(texts(text).contains(QStringLiteral("ready")), 10000);
      session.stop();
      QVERIFY(finished.wait(10000));
      QCOMPARE(finished.at(0).at(0).toInt(), netsmith::kExitInterrupted);
      QVERIFY(QFile::exists(marker));
      QFile::remove(marker);
    }
    {
      auto* session = new SweepSession;
      QSignalSpy text(session, &SweepSession::textArrived);
      QString error;
      QVERIFY2(session->start(script(dir, "trap2.sh", body), {}, &error), qPrintable(error));
      QTRY_VERIFY_WITH_TIMEOUT(texts(text).contains(QStringLiteral("ready")), 10000);
      delete session;  // the window closes
      QVERIFY(QFile::exists(marker));
    }
  }

  // The real CLI: a sweep of a project that does not exist ends with the invalid-input code
  // and its message as text.
  void theRealCliSaysWhyASweepCannotStart() {
    QTemporaryDir dir;
    SweepSession session;
    QSignalSpy text(&session, &SweepSession::textArrived);
    QSignalSpy finished(&session, &SweepSession::finished);
    QString error;
    const QString missing = dir.filePath(QStringLiteral("missing.netsmith.json"));
    QVERIFY2(session.start(QStringLiteral(NETSMITH_CLI),
                           {QStringLiteral("sweep"), missing, QStringLiteral("--json")}, &error),
             qPrintable(error));
    QVERIFY(finished.wait(30000));
    QCOMPARE(finished.at(0).at(0).toInt(), netsmith::kExitInvalid);
    const QString said = texts(text).join('\n');
    QVERIFY2(said.contains(QStringLiteral("missing.netsmith.json")), qPrintable(said));
  }
};

QTEST_MAIN(SweepSessionTest)
#include "sweep_session_test.moc"
