// The studio shell on the offscreen platform: real widgets, real project files.
#include <QListWidget>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

#include "main_window.h"
#include "project_document.h"

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
