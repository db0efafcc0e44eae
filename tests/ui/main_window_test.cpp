// The studio shell on the offscreen platform: real widgets, real project files.
#include <QListWidget>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

#include <qcustomplot.h>
#include <QAction>
#include <QPlainTextEdit>
#include <filesystem>

#include "../core/train_fixtures.h"
#include "main_window.h"
#include "project_document.h"
#include "trainer_session.h"

using netsmith::ui::MainWindow;
using netsmith::ui::ProjectDocument;

class MainWindowTest : public QObject {
  Q_OBJECT

 private slots:
  void opensTheDefaultProject() {
    MainWindow window(m_registry);
    window.show();
    QSignalSpy changed(window.document(), &ProjectDocument::projectChanged);
    QVERIFY(window.openProject(example(), /*quiet=*/true));
    QCOMPARE(changed.count(), 1);
    auto* table = window.findChild<QTableWidget*>();
    QVERIFY(table);
    QCOMPARE(table->rowCount(), 14);
    QCOMPARE(table->item(1, 0)->text(), QStringLiteral("conv1"));
    QCOMPARE(table->item(1, 2)->text(), QStringLiteral("32x28x28"));
    QCOMPARE(table->item(13, 2)->text(), QStringLiteral("10"));
    QVERIFY(window.windowTitle().contains(QStringLiteral("fashion_mnist")));
    auto* problems = window.findChild<QListWidget*>();
    QVERIFY(problems && problems->isHidden());
  }

  void showsProblemsOfAnInvalidProject() {
    MainWindow window(m_registry);
    window.show();
    QVERIFY(window.openProject(
        QStringLiteral(NETSMITH_SOURCE_DIR "/tests/data/bad_linear.netsmith.json"), true));
    auto* problems = window.findChild<QListWidget*>();
    QVERIFY(problems && !problems->isHidden());
    QCOMPARE(problems->count(), 1);
    QVERIFY(problems->item(0)->text().contains(QStringLiteral("set in_features to 1568")));
  }

  void failedOpenKeepsTheCurrentProject() {
    MainWindow window(m_registry);
    QVERIFY(window.openProject(example(), true));
    QVERIFY(!window.openProject(
        QStringLiteral(NETSMITH_SOURCE_DIR "/tests/data/malformed.netsmith.json"), true));
    QVERIFY(window.document()->errorString().contains(QStringLiteral("JSON syntax error")));
    QCOMPARE(QString::fromStdString(window.document()->project().name),
             QStringLiteral("fashion_mnist"));
    QCOMPARE(window.document()->filePath(), example());
  }

  // Trains through the window's own Train > Start action: the chart receives a point per step,
  // the log gets the epoch lines, the state shows the end.
  void trainsThroughTheStartAction() {
    netsmith::testutil::TempDir dir;
    MainWindow window(m_registry);
    window.show();
    QVERIFY(window.openProject(
        QString::fromStdString(netsmith::testutil::writeTrainProject(dir, {{"epochs", 2}})), true));
    auto* start = window.findChild<QAction*>(QStringLiteral("actionTrainStart"));
    QVERIFY(start && start->isEnabled());
    QSignalSpy finished(window.session(), &netsmith::ui::TrainerSession::finished);
    start->trigger();
    QVERIFY(!start->isEnabled());
    QVERIFY(finished.wait(60000));
    auto* chart = window.findChild<QCustomPlot*>(QStringLiteral("lossChart"));
    QVERIFY(chart);
    QCOMPARE(chart->graph(0)->dataCount(), 12);  // 2 epochs x 6 steps
    QCOMPARE(chart->graph(1)->dataCount(), 2);   // validation loss per epoch
    const QString log =
        window.findChild<QPlainTextEdit*>(QStringLiteral("trainingLog"))->toPlainText();
    QVERIFY2(log.contains(QStringLiteral("epoch 2/2: train loss")), qPrintable(log));
    QVERIFY2(log.contains(QStringLiteral("completed: trained 2 epochs; test accuracy")),
             qPrintable(log));
    QVERIFY(start->isEnabled());
    // NETSMITH_SCREENSHOT_DIR=docs/screenshots: the offscreen grab of the window after a run.
    const QString shots = qEnvironmentVariable("NETSMITH_SCREENSHOT_DIR");
    if (!shots.isEmpty()) {
      QTest::qWait(100);  // let the queued chart replot run
      QVERIFY(window.grab().save(shots + QStringLiteral("/training.png")));
    }
  }

  void stopAndCloseDuringTrainingLeaveCheckpoints() {
    netsmith::testutil::TempDir dir;
    const auto project =
        QString::fromStdString(netsmith::testutil::writeTrainProject(dir, {{"epochs", 500}}));
    {
      MainWindow window(m_registry);
      QVERIFY(window.openProject(project, true));
      QSignalSpy batches(window.session(), &netsmith::ui::TrainerSession::batches);
      QSignalSpy finished(window.session(), &netsmith::ui::TrainerSession::finished);
      window.findChild<QAction*>(QStringLiteral("actionTrainStart"))->trigger();
      QVERIFY(batches.wait(30000));
      window.findChild<QAction*>(QStringLiteral("actionTrainStop"))->trigger();
      QVERIFY(finished.wait(2000));
      QCOMPARE(window.session()->lastResult().state, netsmith::train::FinishState::Stopped);
      // Start again and close the window mid-run: it stops within 2 s with a checkpoint.
      window.findChild<QAction*>(QStringLiteral("actionTrainStart"))->trigger();
      QVERIFY(batches.wait(30000));
      QElapsedTimer clock;
      clock.start();
      window.close();
      QVERIFY(clock.elapsed() < 2000);
      QVERIFY(!window.session()->isRunning());
    }
    int runs = 0;
    for (const auto& run : std::filesystem::directory_iterator(dir.file("runs"))) {
      QVERIFY(std::filesystem::exists(run.path() / "checkpoints" / "last.safetensors"));
      ++runs;
    }
    QCOMPARE(runs, 2);
  }

  void documentSavesAtomically() {
    QTemporaryDir dir;
    ProjectDocument doc(m_registry);
    QVERIFY(doc.load(example()));
    const QString target = dir.filePath(QStringLiteral("copy.netsmith.json"));
    QVERIFY(doc.save(target));
    ProjectDocument again(m_registry);
    QVERIFY(again.load(target));
    QVERIFY(again.project().model == doc.project().model);
    QVERIFY(!doc.save(dir.filePath(QStringLiteral("missing/dir/x.netsmith.json"))));
    QVERIFY(doc.errorString().contains(QStringLiteral("cannot write")));
  }

 private:
  static QString example() {
    return QStringLiteral(NETSMITH_SOURCE_DIR "/resources/examples/fashion_mnist.netsmith.json");
  }
  const netsmith::ops::OpRegistry m_registry = netsmith::ops::OpRegistry::withBuiltins();
};

QTEST_MAIN(MainWindowTest)
#include "main_window_test.moc"
