// A task the studio does not know, written in the tests (tests/core/quadrant_task.h) with its
// own target statistics and its own evaluation view, registered in the registries and the task
// views handed to the main window: its project opens, the Data page shows what the task counts
// of its targets, Start trains it, and the Evaluation page shows it through its own view. No
// file of the studio or core names it.
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QtTest>

#include <filesystem>
#include <fstream>

#include "../core/quadrant_task.h"
#include "../core/train_fixtures.h"
#include "eval/evaluation.h"
#include "evaluation/evaluation_page.h"
#include "evaluation/task_view.h"
#include "forms/data_page.h"
#include "session/trainer_session.h"
#include "shell/main_window.h"
#include "shell/project_pages.h"
#include "ui_test_support.h"

using namespace netsmith;
using netsmith::testutil::TempDir;

namespace {

/// The test task's view: its figures as one line of text.
class QuadrantView : public ui::TaskView {
 public:
  explicit QuadrantView(QWidget* parent) : TaskView(parent), m_text(new QLabel(this)) {
    m_text->setObjectName(QStringLiteral("quadrantFigures"));
    (new QVBoxLayout(this))->addWidget(m_text);
  }
  void showResult(const eval::Evaluation& e) override {
    m_text->setText(QStringLiteral("mae %1 on %2 samples")
                        .arg(e.metrics.figures.at("mae"), 0, 'f', 6)
                        .arg(e.metrics.samples));
  }
  void clearResult() override { m_text->clear(); }
  QString text() const { return m_text->text(); }

 private:
  QLabel* m_text;
};

/// The studio's task views with the test task's added.
ui::TaskViewsPtr viewsWithQuadrants() {
  auto views = std::make_shared<ui::TaskViewRegistry>(*ui::TaskViewRegistry::builtins());
  views->add("quadrant_regression", [](QWidget* parent) { return new QuadrantView(parent); });
  return views;
}

/// The blob project as the test task's: two outputs, a short run.
std::string writeQuadrantProject(const TempDir& dir) {
  const auto path = testutil::writeTrainProject(dir, {{"epochs", 2}, {"monitor", "val_mae"}});
  Json project;
  {
    std::ifstream in(path);
    project = Json::parse(in);
  }
  project["task"] = "quadrant_regression";
  for (auto& node : project["model"]["nodes"])
    if (node["id"] == "fc") node["params"]["out_features"] = 2;
  std::ofstream(path) << project.dump(2);
  return path;
}

}  // namespace

class TestTaskTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void aTaskFromTheTestsRunsThroughTheStudio() {
    TempDir dir;
    const auto path = writeQuadrantProject(dir);
    ui::MainWindow window(testutil::withQuadrants(), viewsWithQuadrants());
    window.resize(1280, 720);
    window.show();
    QVERIFY(window.openProject(QString::fromStdString(path), /*quiet=*/true));

    // The Data page: the task's own count of its training targets, in its own tab, against
    // the labels the fixture wrote (the training split is what the validation fraction left:
    // its rows add up to the scan's training images).
    window.pages()->showPage(ui::ProjectPages::DataPage);
    auto* data = window.pages()->dataPage();
    QSignalSpy scanned(data, &ui::DataPage::scanned);
    QTest::mouseClick(data->findChild<QPushButton*>(QStringLiteral("dataScan")), Qt::LeftButton);
    QVERIFY(scanned.wait(60000));
    QVERIFY(data->result().ok);
    QVERIFY(data->result().targets);
    auto* table = data->cooccurrence();
    auto* tabs = data->findChild<QTabWidget*>();
    QVERIFY(tabs->isTabVisible(tabs->indexOf(table)));
    QCOMPARE(tabs->tabText(tabs->indexOf(table)), QStringLiteral("Blob positions"));
    QCOMPARE(table->rowCount(), 4);
    QCOMPARE(table->item(0, 0)->text(), QStringLiteral("top row"));
    const qint64 top = table->item(0, 1)->text().toLongLong();
    const qint64 bottom = table->item(1, 1)->text().toLongLong();
    QCOMPARE(top + bottom, data->result().train);
    // Rows 0 and 1 are the classes 0-1 and 2-3 of the class counts the scan made itself.
    const auto& counts = data->result().trainCounts;
    QCOMPARE(top, counts[0] + counts[1]);
    QCOMPARE(bottom, counts[2] + counts[3]);

    // Start trains it; the Evaluation page evaluates the test split through the task's own
    // view, and says what the run's own test pass said of the same checkpoint.
    QSignalSpy finished(window.session(), &ui::TrainerSession::finished);
    uitest::action(window, "actionTrainStart")->trigger();
    QVERIFY(finished.wait(120000));
    QCOMPARE(finished[0][0].value<run::FinishState>(), run::FinishState::Completed);
    auto* page = window.pages()->evaluationPage();
    QVERIFY(QTest::qWaitFor([page] { return !page->summaryText().isEmpty() && !page->isRunning(); },
                            120000));
    window.pages()->showPage(ui::ProjectPages::EvalPage);
    auto* view = dynamic_cast<QuadrantView*>(page->taskView());
    QVERIFY(view && view->isVisible());
    const auto& e = page->result();
    QCOMPARE(e.task, std::string("quadrant_regression"));
    QCOMPARE(e.metrics.samples, std::int64_t(64));
    // The run's test figure, read from its events.jsonl.
    const auto runDir = std::filesystem::path(e.checkpoint).parent_path().parent_path();
    double runMae = -1;
    std::ifstream events(runDir / "events.jsonl");
    for (std::string line; std::getline(events, line);) {
      const Json event = Json::parse(line);
      if (event.value("event", "") == "finished" && event.contains("test"))
        runMae = event["test"]["figures"]["mae"].get<double>();
    }
    QVERIFY(runMae >= 0);
    QVERIFY2(std::abs(e.metrics.figures.at("mae") - runMae) < 1e-5,
             qPrintable(QStringLiteral("%1 vs %2").arg(e.metrics.figures.at("mae")).arg(runMae)));
    QCOMPARE(view->text(), QStringLiteral("mae %1 on 64 samples").arg(runMae, 0, 'f', 6));
    const QString shots = qEnvironmentVariable("NETSMITH_SCREENSHOT_DIR");
    if (!shots.isEmpty()) window.grab().save(shots + QStringLiteral("/evaluation_test_task.png"));
  }
};

QTEST_MAIN(TestTaskTest)
#include "test_task_test.moc"
