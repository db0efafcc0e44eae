// The studio on the offscreen platform: real widgets, real project files, real training runs
// driven through the window's own actions.
#include <fstream>

#include <QAbstractButton>
#include <QAbstractScrollArea>
#include <QAction>
#include <QClipboard>
#include <QComboBox>
#include <QDialog>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QListWidget>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProcess>
#include <QPushButton>
#include <QScreen>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QTextDocument>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>
#include <QTreeWidget>
#include <QtTest>
#include <map>
#include <set>

#include <qcustomplot.h>
#include <spdlog/spdlog.h>
#include <QAction>
#include <filesystem>

#include "../core/train_fixtures.h"
#include "editor/graph_canvas.h"
#include "editor/model_page.h"
#include "evaluation/evaluation_page.h"
#include "evaluation/sample_dialog.h"
#include "export/onnx_runtime.h"
#include "forms/data_page.h"
#include "monitor/cost_plot.h"
#include "monitor/dashboard.h"
#include "monitor/runs_page.h"
#include "registries/registries.h"
#include "session/project_document.h"
#include "session/trainer_session.h"
#include "shell/dialogs.h"
#include "shell/export_controller.h"
#include "shell/guide_window.h"
#include "shell/log_panel.h"
#include "shell/main_window.h"
#include "shell/project_files.h"
#include "shell/project_pages.h"
#include "shell/recent_files.h"
#include "shell/run_controller.h"
#include "shell/start_page.h"
#include "ui_test_support.h"

using netsmith::Json;
using netsmith::ui::ExportController;
using netsmith::ui::MainWindow;
using netsmith::ui::ProjectDocument;
using netsmith::ui::ProjectPages;
using netsmith::ui::RecentFiles;
using netsmith::uitest::action;
using netsmith::uitest::example;
namespace fs = std::filesystem;

namespace {

/// Answers the next modal message box with `button` (from the event loop it runs).
void answerNextMessageBox(QMessageBox::StandardButton button, QString* text = nullptr) {
  QTimer::singleShot(0, [button, text] {
    for (int i = 0; i < 200; ++i) {
      if (auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget())) {
        if (text) *text = box->text();
        box->button(button)->click();
        return;
      }
      QTest::qWait(10);
    }
  });
}

template <class T>
T* waitForDialog(const MainWindow& window, const char* name, int ms = 10000) {
  T* found = nullptr;
  (void)QTest::qWaitFor(
      [&] {
        found = window.findChild<T*>(QLatin1String(name));
        return found && found->isVisible();
      },
      ms);
  return found;
}

}  // namespace

/// Trains the open project for its epochs through the Start action.
void trainOneEpochHere(MainWindow& window) {
  QSignalSpy finished(window.session(), &netsmith::ui::TrainerSession::finished);
  window.findChild<QAction*>(QStringLiteral("actionTrainStart"))->trigger();
  QVERIFY(finished.wait(60000));
}

class MainWindowTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("NetsmithTests"));
    QCoreApplication::setApplicationName(QStringLiteral("netsmith_ui_tests"));
  }
  void init() { QSettings().clear(); }

  // The window fits the screen it opens on (a 1280x720 laptop included), and its toolbar's
  // toggle says what it is.
  void opensTheDefaultProject() {
    MainWindow window(m_registries);
    window.show();
    QSignalSpy changed(window.document(), &ProjectDocument::projectChanged);
    QVERIFY(window.openProject(example(), /*quiet=*/true));
    QCOMPARE(changed.count(), 1);
    auto* table = window.findChild<QTableWidget*>(QStringLiteral("modelTable"));
    QVERIFY(table);
    QCOMPARE(table->rowCount(), 21);
    QCOMPARE(table->item(1, 0)->text(), QStringLiteral("conv1_1"));
    QCOMPARE(table->item(1, 2)->text(), QStringLiteral("32x28x28"));
    QCOMPARE(table->item(20, 2)->text(), QStringLiteral("10"));
    QVERIFY(window.windowTitle().contains(QStringLiteral("fashion_mnist")));
    auto* problems = window.findChild<QListWidget*>(QStringLiteral("problemList"));
    QVERIFY(problems && problems->isHidden());
    // The read-only pages summarise the rest of the project.
    auto* augment = window.findChild<QListWidget*>(QStringLiteral("transformList"));
    QCOMPARE(augment->count(), 1);
    QCOMPARE(augment->item(0)->text(), QStringLiteral("HorizontalFlip  (p=0.5)"));
    auto* epochs = window.findChild<QSpinBox*>(QStringLiteral("param_epochs"));
    QVERIFY(epochs);
    QCOMPARE(epochs->value(), 15);
    QCOMPARE(window.findChild<QComboBox*>(QStringLiteral("optimizerType"))->currentText(),
             QStringLiteral("adam"));
    // The recent files list keeps it.
    QCOMPARE(RecentFiles::list().value(0), QFileInfo(example()).absoluteFilePath());
  }

  // No key does two things: the window's actions and the buttons of every page, each shortcut
  // once (Qt runs neither of two that share a key and the same window).
  void noTwoCommandsShareAShortcut() {
    MainWindow window(m_registries);
    window.show();
    QVERIFY(window.openProject(example(), /*quiet=*/true));
    std::map<QString, QStringList> owners;
    for (auto* action : window.findChildren<QAction*>()) {
      if (action->shortcutContext() == Qt::WidgetShortcut) continue;
      for (const auto& key : action->shortcuts())
        owners[key.toString()] << (action->objectName().isEmpty() ? action->text()
                                                                  : action->objectName());
    }
    for (auto* button : window.findChildren<QAbstractButton*>())
      if (!button->shortcut().isEmpty() && !button->text().contains(QLatin1Char('&')))
        owners[button->shortcut().toString()]
            << (button->objectName().isEmpty() ? button->text() : button->objectName());
    QVERIFY(owners.size() > 20);
    for (const auto& [key, names] : owners)
      QVERIFY2(names.size() == 1, qPrintable(key + QStringLiteral(": ") + names.join(", ")));
  }

  // With no project open the window shows the start page: New / Open / Import, the examples and
  // templates by name with a line each, the recent projects; Return on a recent one opens it,
  // and the model's newest run checkpoint is offered again.
  void startPageListsExamplesAndOpensARecentProject() {
    netsmith::testutil::TempDir dir;
    const QString path = QString::fromStdString(netsmith::testutil::writeTrainProject(dir));
    {
      MainWindow first(m_registries);
      QVERIFY(first.openProject(path, true));
      trainOneEpochHere(first);
    }
    MainWindow window(m_registries);
    QVERIFY(netsmith::uitest::showAt(window));
    auto* start = window.startPage();
    QVERIFY(start && start->isVisible());
    QVERIFY(!window.pages()->isVisible());
    for (const char* button : {"startNew", "startFromData", "startOpen", "startImport"})
      QVERIFY2(start->findChild<QPushButton*>(QLatin1String(button)), button);
    QStringList titles;
    for (int i = 0; i < start->examplesList()->count(); ++i)
      titles << start->examplesList()->item(i)->text().section(QLatin1Char('\n'), 0, 0);
    QVERIFY2(titles.contains(QStringLiteral("The default network on Fashion-MNIST")),
             qPrintable(titles.join(QLatin1String(" | "))));
    QVERIFY(titles.contains(QStringLiteral("ResNet-18 in torchvision's layout")));
    QVERIFY(!start->examplesList()->item(0)->icon().isNull());
    // Recent: the project opened above; Return on it opens it.
    auto* recent = start->recentList();
    QCOMPARE(recent->item(0)->data(Qt::UserRole).toString(), QFileInfo(path).absoluteFilePath());
    recent->setFocus();
    recent->setCurrentRow(0);
    QTest::keyClick(recent->viewport(), Qt::Key_Return);
    QTRY_COMPARE(window.document()->filePath(), QFileInfo(path).absoluteFilePath());
    QVERIFY(window.pages()->isVisible() && !start->isVisible());
    // Its run's checkpoint is the current one again: Export is on without training.
    QVERIFY2(window.runs()->currentCheckpoint().endsWith(QStringLiteral(".safetensors")),
             qPrintable(window.runs()->currentCheckpoint()));
    QVERIFY(action(window, "actionExport_onnx")->isEnabled());
  }

  // File > New asks for the task first (Down to "Multi-label", Enter; Esc cancels), and the
  // blank project takes that task's template: its task key, loss, monitor, data format and input
  // size. The start page names each entry's task, and its filter shows one task's entries: as
  // many as resources/ holds files of that task (their "task" keys read here).
  void newProjectAsksForTheTaskAndTheStartPageFiltersByTask() {
    QMap<QString, int> filesPerTask;
    QMap<QString, QString> taskOfTemplate;
    int files = 0;
    for (const char* dir : {"/resources/templates", "/resources/examples"}) {
      const QDir folder(QStringLiteral(NETSMITH_SOURCE_DIR) + QLatin1String(dir));
      for (const QString& name :
           folder.entryList({QStringLiteral("*.netsmith.json")}, QDir::Files)) {
        QFile file(folder.filePath(name));
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QJsonObject root = QJsonDocument::fromJson(file.readAll()).object();
        QVERIFY2(!root.isEmpty(), qPrintable(name));
        // No "task" key: a classification project.
        const QString task =
            root.value(QStringLiteral("task")).toString(QStringLiteral("classification"));
        ++filesPerTask[task];
        if (QLatin1String(dir) == QLatin1String("/resources/templates"))
          taskOfTemplate[name] = task;
        ++files;
      }
    }
    // Each task File > New offers starts from a template of that task.
    for (const auto& choice : netsmith::ui::NewProjectTaskDialog::choices())
      QCOMPARE(taskOfTemplate.value(choice.templateFile), choice.name);

    MainWindow window(m_registries);
    QVERIFY(netsmith::uitest::showAt(window));
    auto* start = window.startPage();
    QVERIFY(start && start->isVisible());
    auto* examples = start->examplesList();
    const auto shownLines = [examples] {
      QStringList lines;
      for (int i = 0; i < examples->count(); ++i)
        if (!examples->item(i)->isHidden())
          lines << examples->item(i)->text().section(QLatin1Char('\n'), 1, 1);
      return lines;
    };
    QCOMPARE(examples->count(), files);
    QCOMPARE(shownLines().size(), files);
    auto* filter = start->findChild<QComboBox*>(QStringLiteral("startTaskFilter"));
    QVERIFY(filter && filter == start->taskFilter());
    QCOMPARE(filter->currentText(), QStringLiteral("All tasks"));
    QCOMPARE(filter->count(), 1 + netsmith::ui::NewProjectTaskDialog::choices().size());
    // Through every task by keyboard: only its entries stay, each line naming it.
    filter->setFocus();
    for (int i = 1; i < filter->count(); ++i) {
      QTest::keyClick(filter, Qt::Key_Down);
      QCOMPARE(filter->currentIndex(), i);
      const auto task =
          netsmith::ui::NewProjectTaskDialog::choice(filter->currentData().toString());
      QCOMPARE(filter->currentText(), task.title);
      QVERIFY2(filesPerTask.value(task.name) > 0, qPrintable(task.name));  // a template at least
      const QStringList lines = shownLines();
      QCOMPARE(lines.size(), filesPerTask.value(task.name));
      for (const auto& line : lines)
        QVERIFY2(line.contains(QStringLiteral(" \u00b7 ") + task.noun + QLatin1Char(':')),
                 qPrintable(line));
    }
    QCOMPARE(filter->currentText(), QStringLiteral("Object detection"));
    const QString shots = qEnvironmentVariable("NETSMITH_SCREENSHOT_DIR");
    if (!shots.isEmpty())
      QVERIFY(window.grab().save(shots + QStringLiteral("/start_detection.png")));
    filter->setCurrentIndex(0);
    QCOMPARE(shownLines().size(), files);

    // The task dialog: classification at first; Esc cancels.
    {
      netsmith::ui::NewProjectTaskDialog cancelled(&window);
      QSignalSpy rejected(&cancelled, &QDialog::rejected);
      cancelled.show();
      QVERIFY(QTest::qWaitForWindowExposed(&cancelled));
      QCOMPARE(cancelled.task(), QStringLiteral("classification"));
      QTest::keyClick(cancelled.list(), Qt::Key_Escape);
      QCOMPARE(rejected.count(), 1);
      QVERIFY(!cancelled.isVisible());
    }
    netsmith::ui::NewProjectTaskDialog ask(&window);
    QCOMPARE(ask.objectName(), QStringLiteral("newProjectTask"));
    QSignalSpy accepted(&ask, &QDialog::accepted);
    ask.show();
    QVERIFY(QTest::qWaitForWindowExposed(&ask));
    QCOMPARE(ask.list()->count(), netsmith::ui::NewProjectTaskDialog::choices().size());
    ask.list()->setFocus();
    QTest::keyClick(ask.list(), Qt::Key_Down);
    QVERIFY2(ask.list()->currentItem()->text().startsWith(QStringLiteral("Multi-label\n")),
             qPrintable(ask.list()->currentItem()->text()));
    if (!shots.isEmpty()) QVERIFY(ask.grab().save(shots + QStringLiteral("/new_project_task.png")));
    QTest::keyClick(ask.list(), Qt::Key_Return);
    QCOMPARE(accepted.count(), 1);
    QVERIFY(!ask.isVisible());
    QCOMPARE(ask.task(), QStringLiteral("multilabel"));

    // The save dialog's part: the target (as the other File > New tests do).
    QTemporaryDir tmp;
    const QString target = tmp.filePath(QStringLiteral("tags.netsmith.json"));
    QVERIFY2(window.files()->createBlankProject(target, ask.task()),
             qPrintable(window.files()->lastError()));
    QCOMPARE(window.document()->filePath(), target);
    QTRY_VERIFY(window.pages()->isVisible() && !start->isVisible());
    QCOMPARE(window.document()->project().model.nodes.size(), std::size_t(1));
    // The file as written, read as JSON here rather than through the project reader.
    QFile saved(target);
    QVERIFY(saved.open(QIODevice::ReadOnly));
    const QJsonObject root = QJsonDocument::fromJson(saved.readAll()).object();
    QCOMPARE(root.value(QStringLiteral("task")).toString(), QStringLiteral("multilabel"));
    const QJsonObject train = root.value(QStringLiteral("train")).toObject();
    QCOMPARE(train.value(QStringLiteral("loss")).toString(), QStringLiteral("bce"));
    QCOMPARE(train.value(QStringLiteral("monitor")).toString(), QStringLiteral("val_map"));
    const QJsonObject data = root.value(QStringLiteral("data")).toObject();
    QCOMPARE(
        data.value(QStringLiteral("train")).toObject().value(QStringLiteral("format")).toString(),
        QStringLiteral("multilabel_csv"));
    const QJsonObject input =
        root.value(QStringLiteral("model")).toObject().value(QStringLiteral("input")).toObject();
    QCOMPARE(input.value(QStringLiteral("channels")).toInt(), 3);
    QCOMPARE(input.value(QStringLiteral("height")).toInt(), 64);
    // A task without a template is refused with the reason, and the open project stays.
    QVERIFY(!window.files()->createBlankProject(tmp.filePath(QStringLiteral("x.netsmith.json")),
                                                QStringLiteral("keypoints")));
    QVERIFY2(window.files()->lastError().contains(QStringLiteral("keypoints")),
             qPrintable(window.files()->lastError()));
    QCOMPARE(window.document()->filePath(), target);
  }

  void dataPageReadsSplitsAndClassCounts() {
    netsmith::testutil::TempDir dir;
    MainWindow window(m_registries);
    QVERIFY(window.openProject(QString::fromStdString(netsmith::testutil::writeTrainProject(dir)),
                               true));
    QSignalSpy ready(window.pages(), &ProjectPages::dataSummaryReady);
    window.pages()->showPage(ProjectPages::DataPage);  // opening the page reads the data
    QVERIFY(ready.wait(30000));
    const auto& s = window.pages()->dataPage()->result();
    QVERIFY2(s.ok, qPrintable(s.error));
    QCOMPARE(s.train + s.validation, 256);
    QCOMPARE(s.validation, 64);
    QCOMPARE(s.test, 64);
    QCOMPARE(s.classes.size(), 4);
    QCOMPARE(s.testCounts[0], 16);  // 64 / 4 classes
    QCOMPARE(s.mean.size(), 1);
    QVERIFY(s.skipped.isEmpty());
    QCOMPARE(window.pages()->dataPage()->sampleGrid()->count(), 4 * 8);
    window.pages()->dataPage()->filterSamples(2);
    int shown = 0;
    for (int i = 0; i < window.pages()->dataPage()->sampleGrid()->count(); ++i)
      shown += !window.pages()->dataPage()->sampleGrid()->item(i)->isHidden();
    QCOMPARE(shown, 8);
  }

  void showsProblemsOfAnInvalidProjectAndRefusesToTrain() {
    MainWindow window(m_registries);
    window.show();
    QVERIFY(window.openProject(
        QStringLiteral(NETSMITH_SOURCE_DIR "/tests/data/bad_linear.netsmith.json"), true));
    auto* problems = window.findChild<QListWidget*>(QStringLiteral("problemList"));
    QVERIFY(problems && !problems->isHidden());
    QCOMPARE(problems->count(), 1);
    QVERIFY(problems->item(0)->text().contains(QStringLiteral("set in_features to 1568")));
    // Start is disabled, and says why.
    auto* start = action(window, "actionTrainStart");
    QVERIFY(!start->isEnabled());
    QVERIFY2(start->toolTip().contains(QStringLiteral("set in_features to 1568")),
             qPrintable(start->toolTip()));
    start->trigger();
    QVERIFY(!window.session()->isRunning());
  }

  void failedOpenKeepsTheCurrentProject() {
    MainWindow window(m_registries);
    QVERIFY(window.openProject(example(), true));
    QVERIFY(!window.openProject(
        QStringLiteral(NETSMITH_SOURCE_DIR "/tests/data/malformed.netsmith.json"), true));
    QVERIFY(window.document()->errorString().contains(QStringLiteral("JSON syntax error")));
    QCOMPARE(QString::fromStdString(window.document()->project().name),
             QStringLiteral("fashion_mnist"));
    QCOMPARE(window.document()->filePath(), example());
  }

  // Trains through Train > Start: every chart's series receive a point per step, the epoch
  // table fills with the best epoch marked, the log has the epoch lines, the Runs page lists
  // the run, and Export > ONNX writes a verified file and shows its report.
  void trainsThroughTheStartActionAndExportsThroughTheMenu() {
    netsmith::testutil::TempDir dir;
    MainWindow window(m_registries);
    window.show();
    QVERIFY(window.openProject(QString::fromStdString(netsmith::testutil::writeTrainProject(
                                   dir, {{"epochs", 2}, {"clip_grad_norm", 5.0}})),
                               true));
    auto* start = action(window, "actionTrainStart");
    QVERIFY(start && start->isEnabled());
    QVERIFY(!action(window, "actionExport_onnx")->isEnabled());  // no checkpoint yet
    QSignalSpy finished(window.session(), &netsmith::ui::TrainerSession::finished);
    start->trigger();
    QVERIFY(!start->isEnabled());
    QCOMPARE(window.pages()->currentPage(), ProjectPages::DashboardPage);
    QVERIFY(finished.wait(60000));
    auto* dash = window.dashboard();
    for (const char* series : {"train_loss", "train_loss_ema", "train_accuracy_step", "lr",
                               "grad_norm", "memory", "throughput"})
      QCOMPARE(dash->pointCount(QLatin1String(series)), 12);  // 2 epochs x 6 steps
    for (const char* series : {"val_loss", "train_accuracy", "val_accuracy"})
      QCOMPARE(dash->pointCount(QLatin1String(series)), 2);
    QCOMPARE(dash->pointCount(QStringLiteral("memory_reserved")), 0);  // CPU: RSS only
    QCOMPARE(dash->memoryLabel(), QStringLiteral("process RSS (MiB)"));
    auto* table = window.findChild<QTreeWidget*>(QStringLiteral("epochTable"));
    QCOMPARE(table->topLevelItemCount(), 2);
    QVERIFY(dash->bestEpoch() >= 0);
    QVERIFY(table->topLevelItem(dash->bestEpoch())->text(0).contains(QChar(0x2605)));
    QVERIFY(table->topLevelItem(dash->bestEpoch())->font(0).bold());
    // Log lines reach the panel through the event loop (the spdlog sink queues them).
    QTRY_VERIFY(
        window.logPanel()->visibleText().contains(QStringLiteral("completed: trained 2 epochs")));
    const QString log = window.logPanel()->visibleText();
    QVERIFY2(log.contains(QStringLiteral("epoch 2/2: train loss")), qPrintable(log));
    QVERIFY2(log.contains(QStringLiteral("completed: trained 2 epochs; test accuracy")),
             qPrintable(log));
    QVERIFY(start->isEnabled());
    QVERIFY(window.bannerText().isEmpty());
    QVERIFY(window.runs()->currentCheckpoint().endsWith(QStringLiteral("best.safetensors")));
    // One test figure per run: the Evaluation page evaluates the same checkpoint by itself and
    // shows what the log and the status bar say, denominator and checkpoint included.
    auto* evaluation = window.pages()->evaluationPage();
    QTRY_VERIFY_WITH_TIMEOUT(!evaluation->summaryText().isEmpty(), 60000);
    const QString figure = evaluation->summaryText();
    QVERIFY2(figure.startsWith(QStringLiteral("test accuracy ")) &&
                 figure.endsWith(QStringLiteral(" on 64 images (checkpoint best)")),
             qPrintable(figure));
    QVERIFY2(log.contains(QStringLiteral("; ") + figure),
             qPrintable(log + QStringLiteral("\n") + figure));
    QVERIFY2(window.runStateText().contains(figure), qPrintable(window.runStateText()));
    // A sample opened large: its Grad-CAM maps of the predicted and the true class, the
    // prediction agreeing with the evaluation's own.
    const auto& sample = evaluation->result().samples.at(0);
    auto* opened = evaluation->openSample(sample.position);
    QVERIFY(opened);
    QVERIFY2(opened->errorText().isEmpty(), qPrintable(opened->errorText()));
    QCOMPARE(opened->predictedMap().predicted, sample.predicted);
    QCOMPARE(opened->predictedMap().targetClass, sample.predicted);
    QCOMPARE(opened->trueMap().targetClass, sample.label);
    QCOMPARE(opened->predictedMap().heat.rows, 16);
    QVERIFY(!opened->overlay().isNull());
    opened->showPredicted(false);
    QVERIFY(!opened->overlay().isNull());
    // At a node the user picks: the test model's pooled feature map instead of its
    // convolution.
    QCOMPARE(opened->predictedMap().node, std::string("conv"));
    QCOMPARE(opened->predictedMap().featureNodes,
             (std::vector<std::string>{"conv", "bn", "relu", "pool"}));
    const std::string picked = opened->predictedMap().featureNodes.back();
    opened->mapAt(QString::fromStdString(picked));
    QCOMPARE(opened->trueMap().node, picked);
    QVERIFY2(opened->errorText().isEmpty(), qPrintable(opened->errorText()));
    opened->close();

    // NETSMITH_SCREENSHOT_DIR=docs/screenshots: offscreen grabs of the window after a run.
    const QString shots = qEnvironmentVariable("NETSMITH_SCREENSHOT_DIR");
    if (!shots.isEmpty()) {
      QTest::qWait(100);  // let the queued chart replots run
      QVERIFY(window.grab().save(shots + QStringLiteral("/training.png")));
    }

    // Runs page: the run is listed; it overlays on the charts; "load best" picks its checkpoint.
    window.pages()->showPage(ProjectPages::RunsPage);
    QTRY_COMPARE(window.pages()->runs().size(), 1);  // read on a worker thread
    QCOMPARE(window.pages()->runs()[0].epochs(), 2);
    QCOMPARE(window.pages()->runs()[0].stepLoss.size(), 12);
    // Its test figure as the run recorded it equals the Evaluation page's own count.
    const auto& listed = window.pages()->runs()[0];
    QCOMPARE(listed.testSamples, 64);
    QVERIFY(std::abs(listed.testFigure - evaluation->result().metrics.accuracy) < 1e-9);
    QCOMPARE(listed.device.section(QLatin1Char(','), 0, 0), QStringLiteral("cpu"));
    QVERIFY(listed.durationSeconds > 0);
    window.pages()->overlaySelectedRun();
    QCOMPARE(dash->overlayNames().size(), 1);
    // What the run's model costs deployed, once measured (`netsmith-cli bench RUN_DIR`): the
    // table's Latency and Size are its deploy.json's, and the cost plot shows the run, alone
    // on its Pareto front.
    {
      const QString runName = listed.name, runDir = listed.dir;  // the list is read again below
      QProcess cli;
      cli.start(QStringLiteral(NETSMITH_CLI),
                {QStringLiteral("bench"), runDir, QStringLiteral("--runs"), QStringLiteral("5"),
                 QStringLiteral("--seconds"), QStringLiteral("0.1")});
      QVERIFY(cli.waitForFinished(120000));
      QVERIFY2(cli.exitCode() == 0, cli.readAllStandardError().constData());
      QFile f(runDir + QStringLiteral("/deploy.json"));
      QVERIFY(f.open(QIODevice::ReadOnly));
      const auto deploy = netsmith::Json::parse(f.readAll().toStdString());
      auto* runsPage = window.findChild<netsmith::ui::RunsPage*>();
      QVERIFY(runsPage);
      QSignalSpy relisted(runsPage, &netsmith::ui::RunsPage::runsListed);
      runsPage->refresh();
      QVERIFY(relisted.wait(30000));
      auto* table = runsPage->findChild<QTreeWidget*>(QStringLiteral("runsTable"));
      QCOMPARE(table->headerItem()->text(8), QStringLiteral("Latency"));
      QCOMPARE(table->topLevelItem(0)->text(8),
               QStringLiteral("%1 ms").arg(deploy["runtimes"][0]["batch1_p50_ms"].get<double>(), 0,
                                           'f', 3));
      QCOMPARE(table->topLevelItem(0)->text(9),
               QLocale().formattedDataSize(deploy["file_bytes"].get<qint64>()));
      QCOMPARE(runsPage->costPlot()->frontNames(), QStringList{runName});
      if (!shots.isEmpty()) QVERIFY(window.grab().save(shots + QStringLiteral("/runs-costs.png")));
    }

    // Export > ONNX (the menu lists exactly the registry's exporters).
    QStringList exportActions;
    for (auto* a : window.findChildren<QAction*>())
      if (a->objectName().startsWith(QStringLiteral("actionExport_")))
        exportActions << a->objectName();
    exportActions.sort();
    QCOMPARE(exportActions, QStringList({QStringLiteral("actionExport_onnx"),
                                         QStringLiteral("actionExport_onnx-int8"),
                                         QStringLiteral("actionExport_pytorch"),
                                         QStringLiteral("actionExport_safetensors")}));
    QSignalSpy exported(window.exports(), &ExportController::exportFinished);
    action(window, "actionExport_onnx")->trigger();
    QVERIFY(exported.wait(60000));
    QVERIFY2(exported[0][0].toBool(), qPrintable(exported[0][1].toString()));
    const QString report = exported[0][1].toString();
    QVERIFY2(report.contains(QStringLiteral("max abs diff")), qPrintable(report));
    QVERIFY2(report.contains(QStringLiteral("top-1 agreement 100.00%")), qPrintable(report));
    const fs::path onnx =
        fs::path(window.runs()->currentCheckpoint().toStdString()).parent_path().parent_path() /
        "exports" / "best.onnx";
    QVERIFY2(fs::exists(onnx), onnx.c_str());
    auto* dialog = waitForDialog<netsmith::ui::ExportReportDialog>(window, "exportReport");
    QVERIFY(dialog);
    QVERIFY(dialog->passed());
    QVERIFY(dialog->reportText().contains(QString::fromStdString(onnx.string())));
    // The parity figures are said once for each runtime; "Open folder" opens where the files
    // went.
    const bool ort = netsmith::exporting::findOnnxRuntime().has_value();
    QCOMPARE(dialog->reportText().count(QStringLiteral("top-1 agreement")), ort ? 2 : 1);
    QVERIFY(dialog->reportText().contains(QStringLiteral("parity passed (OpenCV DNN")));
    if (ort) QVERIFY(dialog->reportText().contains(QStringLiteral("parity passed (ONNX Runtime")));
    auto* openFolder = dialog->findChild<QPushButton*>(QStringLiteral("openExportFolder"));
    QVERIFY(openFolder && openFolder->isVisible());
    QCOMPARE(QDir(dialog->folder()), QDir(QString::fromStdString(onnx.parent_path().string())));
    if (!shots.isEmpty()) QVERIFY(dialog->grab().save(shots + QStringLiteral("/export.png")));
    dialog->close();
    QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);

    // Export > Export all to folder (Ctrl+Alt+E): every format, under the same names, in the
    // folder chosen (what the action does once its folder dialog returns one).
    QAction* toFolder = action(window, "actionExportToFolder");
    QVERIFY(toFolder->isEnabled());
    QCOMPARE(toFolder->shortcut(), QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_E));
    QTemporaryDir chosen;
    exported.clear();
    window.exports()->exportCurrent(QString(), chosen.path());
    QVERIFY(exported.wait(60000));
    QVERIFY2(exported[0][0].toBool(), qPrintable(exported[0][1].toString()));
    for (const char* name : {"best.onnx", "best-weights.safetensors", "best.py"})
      QVERIFY2(QFileInfo(chosen.filePath(QLatin1String(name))).size() > 0, name);
    auto* second = waitForDialog<netsmith::ui::ExportReportDialog>(window, "exportReport");
    QVERIFY(second);
    QCOMPARE(QDir(second->folder()), QDir(chosen.path()));
    second->close();
    QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);

    // Export > ONNX int8: calibrated on the project's training images in the background, its
    // check against the float model in the report, the file beside the float one.
    if (ort) {
      exported.clear();
      action(window, "actionExport_onnx-int8")->trigger();
      QVERIFY(exported.wait(120000));
      const QString int8Report = exported[0][1].toString();
      QVERIFY2(int8Report.contains(QStringLiteral("int8 checked")), qPrintable(int8Report));
      QVERIFY2(int8Report.contains(QStringLiteral(" training images")), qPrintable(int8Report));
      QVERIFY2(int8Report.contains(QStringLiteral("ONNX Runtime")), qPrintable(int8Report));
      auto* third = waitForDialog<netsmith::ui::ExportReportDialog>(window, "exportReport");
      QVERIFY(third && third->passed());
      QVERIFY(fs::exists(onnx.parent_path() / "best-int8.onnx"));
      if (!shots.isEmpty()) QVERIFY(third->grab().save(shots + QStringLiteral("/export-int8.png")));
      third->close();
      QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
    }

    // File > New: the run's figures belong to the old project. The Evaluation page, the
    // dashboard and the status bar forget them.
    QTemporaryDir other;
    QVERIFY(window.files()->createProject(
        QStringLiteral(NETSMITH_SOURCE_DIR "/resources/templates/lenet5.netsmith.json"),
        other.filePath(QStringLiteral("next.netsmith.json"))));
    QVERIFY(evaluation->summaryText().isEmpty());
    QCOMPARE(evaluation->result().metrics.samples, 0);
    QVERIFY(window.runs()->currentCheckpoint().isEmpty());
    QVERIFY2(!window.runStateText().contains(figure), qPrintable(window.runStateText()));
    QCOMPARE(dash->chart(QStringLiteral("loss"))->graph(0)->dataCount(), 0);
  }

  // The default Fashion-MNIST project with a tiny sample limit, through the window's actions:
  // Start, then Stop after this epoch; one epoch of 4 steps reaches every chart and the table.
  void trainsTheDefaultProjectWithATinyLimit() {
    QTemporaryDir tmp;  // a copy, so the run folder lands outside the source tree
    const QString copy = tmp.filePath(QStringLiteral("fashion_mnist.netsmith.json"));
    QVERIFY(QFile::copy(example(), copy));
    MainWindow window(m_registries);
    window.show();
    QVERIFY(window.openProject(copy, true));
    window.runs()->setSampleLimits(512, 128);
    QSignalSpy started(window.session(), &netsmith::ui::TrainerSession::started);
    QSignalSpy finished(window.session(), &netsmith::ui::TrainerSession::finished);
    action(window, "actionTrainStart")->trigger();
    QVERIFY(started.wait(60000));
    action(window, "actionTrainStopAfterEpoch")->trigger();
    QVERIFY(finished.wait(120000));
    QCOMPARE(window.session()->lastResult().state, netsmith::run::FinishState::Stopped);
    QCOMPARE(window.dashboard()->pointCount(QStringLiteral("train_loss")), 4);  // 512 / 128
    QCOMPARE(window.dashboard()->pointCount(QStringLiteral("val_accuracy")), 1);
    QCOMPARE(window.dashboard()->epochTable()->topLevelItemCount(), 1);
    QVERIFY(QDir(tmp.filePath(QStringLiteral("runs")))
                .entryList(QDir::Dirs | QDir::NoDotAndDotDot)
                .size() == 1);
  }

  void pauseResumeStopAndCloseDuringTraining() {
    netsmith::testutil::TempDir dir;
    const auto project =
        QString::fromStdString(netsmith::testutil::writeTrainProject(dir, {{"epochs", 500}}));
    QString lastCheckpoint;
    std::int64_t stoppedAt = 0;
    {
      MainWindow window(m_registries);
      QVERIFY(window.openProject(project, true));
      QSignalSpy batches(window.session(), &netsmith::ui::TrainerSession::batches);
      QSignalSpy finished(window.session(), &netsmith::ui::TrainerSession::finished);
      action(window, "actionTrainStart")->trigger();
      QVERIFY(batches.wait(30000));
      // Pause: the trainer stops taking batches; the points stop coming.
      auto* pause = action(window, "actionTrainPause");
      QVERIFY(pause->isEnabled());
      pause->trigger();
      QVERIFY(pause->isChecked());
      // The trainer's "paused" line follows every batch event sent before the pause (events
      // arrive in order, a drain delivers them all), so once it is here the count is final.
      QSignalSpy messages(window.session(), &netsmith::ui::TrainerSession::message);
      QVERIFY(QTest::qWaitFor(
          [&] {
            for (const auto& m : messages)
              if (m[1].toString() == QLatin1String("paused")) return true;
            return false;
          },
          10000));
      QCOMPARE(window.session()->state(), netsmith::train::RunState::Paused);
      const int pausedAt = window.dashboard()->pointCount(QStringLiteral("train_loss"));
      QTest::qWait(300);
      QCOMPARE(window.dashboard()->pointCount(QStringLiteral("train_loss")), pausedAt);
      pause->trigger();  // resume
      QVERIFY(!pause->isChecked());
      QVERIFY(QTest::qWaitFor(
          [&] { return window.dashboard()->pointCount(QStringLiteral("train_loss")) > pausedAt; },
          10000));
      // Stop returns control within 2 s, with a checkpoint.
      QElapsedTimer clock;
      clock.start();
      action(window, "actionTrainStop")->trigger();
      QVERIFY(finished.wait(2000));
      QVERIFY(clock.elapsed() < 2000);
      QCOMPARE(window.session()->lastResult().state, netsmith::run::FinishState::Stopped);
      lastCheckpoint = QString::fromStdString(window.session()->lastResult().lastCheckpoint);
      QVERIFY(QFileInfo::exists(lastCheckpoint));
      stoppedAt = window.session()->lastResult().steps;

      // Resume from that checkpoint: the run continues from the same step in the same folder.
      QSignalSpy started(window.session(), &netsmith::ui::TrainerSession::started);
      window.runs()->resumeFrom(lastCheckpoint);
      QVERIFY(started.wait(30000));
      QVERIFY(batches.wait(30000));
      QVERIFY(QTest::qWaitFor(
          [&] { return window.dashboard()->pointCount(QStringLiteral("train_loss")) > 0; }, 5000));
      // The run's history from its folder first (step 1 on), then the resumed steps from the
      // step after the stop.
      QVERIFY(QTest::qWaitFor(
          [&] { return window.dashboard()->pointCount(QStringLiteral("train_loss")) > stoppedAt; },
          5000));
      // (The live steps may come with gaps: the display queue drops points it cannot keep up
      // with, and says so.)
      const auto* points = window.dashboard()->series(QStringLiteral("train_loss"))->data().data();
      QCOMPARE(points->constBegin()->key, 1.0);
      for (auto it = points->constBegin() + 1; it != points->constEnd(); ++it)
        QVERIFY(it->key > (it - 1)->key);
      // Close the window mid-run: it stops within 2 s with a checkpoint.
      clock.restart();
      window.close();
      QVERIFY(clock.elapsed() < 2000);
      QVERIFY(!window.session()->isRunning());
      QCOMPARE(QString::fromStdString(window.session()->lastResult().lastCheckpoint),
               lastCheckpoint);  // the run's last.safetensors, rewritten on close
    }
    int runs = 0;
    for (const auto& run : fs::directory_iterator(dir.file("runs"))) {
      QVERIFY(fs::exists(run.path() / "checkpoints" / "last.safetensors"));
      ++runs;
    }
    QCOMPARE(runs, 1);  // the resume continued in the same run folder
    // The checkpoint written on close loads: a new window resumes from it.
    MainWindow again(m_registries);
    QVERIFY(again.openProject(project, true));
    QSignalSpy batches(again.session(), &netsmith::ui::TrainerSession::batches);
    QSignalSpy finished(again.session(), &netsmith::ui::TrainerSession::finished);
    again.runs()->resumeFrom(lastCheckpoint);
    QVERIFY(batches.wait(30000));
    QVERIFY(QTest::qWaitFor(
        [&] {
          return (again.dashboard()->series(QStringLiteral("train_loss"))->data()->constEnd() - 1)
                     ->key > double(stoppedAt + 1);  // past where the first stop left off
        },
        10000));
    action(again, "actionTrainStop")->trigger();
    QVERIFY(finished.wait(2000));
    QCOMPARE(again.session()->lastResult().state, netsmith::run::FinishState::Stopped);
  }

  // Stopped after its first epoch and resumed with Train > Resume last run (Ctrl+F5): the
  // dashboard shows the whole run as its folder records it, epochs numbered as the run numbers
  // them.
  void aResumedRunShowsItsWholeHistory() {
    netsmith::testutil::TempDir dir;
    const auto project =
        QString::fromStdString(netsmith::testutil::writeTrainProject(dir, {{"epochs", 8}}));
    MainWindow window(m_registries);
    window.show();
    QVERIFY(window.openProject(project, true));
    QSignalSpy started(window.session(), &netsmith::ui::TrainerSession::started);
    QSignalSpy finished(window.session(), &netsmith::ui::TrainerSession::finished);
    action(window, "actionTrainStart")->trigger();
    QVERIFY(started.wait(30000));
    action(window, "actionTrainStopAfterEpoch")->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, 60000);
    QCOMPARE(window.session()->lastResult().state, netsmith::run::FinishState::Stopped);
    auto* table = window.dashboard()->epochTable();
    const int before = table->topLevelItemCount();
    QVERIFY(before >= 1 && before < 8);
    const std::int64_t stoppedAt = window.session()->lastResult().steps;
    // The status bar says how the run ended once ("stopped: stopped ..." was said twice).
    QVERIFY2(window.runStateText().startsWith(QStringLiteral("stopped")) &&
                 window.runStateText().count(QStringLiteral("stopped"), Qt::CaseInsensitive) == 1,
             qPrintable(window.runStateText()));
    // After the last epoch the status bar says the run is testing, and Pause is off.
    QString whileTesting;
    bool pauseWhileTesting = true;
    connect(window.session(), &netsmith::ui::TrainerSession::testing, &window, [&] {
      whileTesting = window.runStateText();
      pauseWhileTesting = action(window, "actionTrainPause")->isEnabled();
    });
    window.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&window));
    QTest::keyClick(&window, Qt::Key_F5, Qt::ControlModifier);
    QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 2, 60000);
    QCOMPARE(window.session()->lastResult().state, netsmith::run::FinishState::Completed);
    QVERIFY2(
        whileTesting.startsWith(QStringLiteral("Testing: evaluating the test split (64 images)")),
        qPrintable(whileTesting));
    QVERIFY(!pauseWhileTesting);
    // The run folder's own record, read here: every step number it wrote (the resumed part
    // goes on from the stop) and each epoch's last row.
    const auto runs = QDir(QString::fromStdString(dir.file("runs")))
                          .entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot);
    QCOMPARE(runs.size(), 1);  // resumed in the same folder
    QFile csv(QDir(runs[0].absoluteFilePath()).filePath(QStringLiteral("metrics.csv")));
    QVERIFY(csv.open(QIODevice::ReadOnly));
    std::set<long long> steps;
    std::map<int, QString> epochLoss;
    for (const QByteArray& line : csv.readAll().split('\n')) {
      const QList<QByteArray> cells = line.split(',');
      if (cells.size() < 5) continue;
      if (cells[0] == "step") steps.insert(cells[3].toLongLong());
      if (cells[0] == "epoch")
        epochLoss[cells[1].toInt()] = QString::number(cells[4].toDouble(), 'f', 4);
    }
    QCOMPARE(epochLoss.size(), std::size_t(8));
    QCOMPARE(table->topLevelItemCount(), 8);
    for (int i = 0; i < 8; ++i) {
      QCOMPARE(table->topLevelItem(i)->text(0).section(' ', 0, 0), QString::number(i + 1));
      QCOMPARE(table->topLevelItem(i)->text(1), epochLoss[i]);
    }
    QCOMPARE(window.dashboard()->pointCount(QStringLiteral("val_loss")), 8);
    // Step points: the history's every step up to the stop, then the resumed steps (the display
    // may drop some of those under load), each one the run wrote, in order.
    const auto* points = window.dashboard()->series(QStringLiteral("train_loss"))->data().data();
    QVERIFY(points->size() >= stoppedAt);
    for (std::int64_t i = 0; i < stoppedAt; ++i)
      QCOMPARE((points->constBegin() + i)->key, double(i + 1));
    for (auto it = points->constBegin(); it != points->constEnd(); ++it) {
      QVERIFY(steps.count((long long)it->key));
      if (it != points->constBegin()) QVERIFY(it->key > (it - 1)->key);
    }
    QCOMPARE((long long)(points->constEnd() - 1)->key, *steps.rbegin());
    window.resize(1280, 720);
    window.pages()->showPage(ProjectPages::DashboardPage);
    QVERIFY(netsmith::uitest::shootThemes(window, &window, QStringLiteral("dashboard-resumed")));
  }

  // A run that fails (its data vanished after the project was opened) shows why in the banner.
  void aFailedRunShowsTheBanner() {
    netsmith::testutil::TempDir dir;
    MainWindow window(m_registries);
    QVERIFY(window.openProject(QString::fromStdString(netsmith::testutil::writeTrainProject(dir)),
                               true));
    fs::remove(dir.file("train-images.idx"));
    QSignalSpy finished(window.session(), &netsmith::ui::TrainerSession::finished);
    action(window, "actionTrainStart")->trigger();
    QVERIFY(finished.wait(30000));
    QCOMPARE(window.session()->lastResult().state, netsmith::run::FinishState::Failed);
    QVERIFY2(window.bannerText().contains(QStringLiteral("train-images.idx")),
             qPrintable(window.bannerText()));
    QVERIFY(window.findChild<QLabel*>(QStringLiteral("runState"))
                ->text()
                .startsWith(QStringLiteral("failed")));
  }

  // A loss that runs away but stays finite is marked on the loss chart at the batch the run
  // warned about, and the marker follows the x axis.
  void aRunawayLossIsMarkedOnTheLossChart() {
    netsmith::testutil::TempDir dir;
    MainWindow window(m_registries);
    QVERIFY(window.openProject(QString::fromStdString(netsmith::testutil::writeTrainProject(
                                   dir, {{"epochs", 1},
                                         {"optimizer", Json{{"type", "adam"}, {"lr", 5.0}}},
                                         {"schedule", Json{{"type", "constant"}}}})),
                               true));
    QSignalSpy finished(window.session(), &netsmith::ui::TrainerSession::finished);
    action(window, "actionTrainStart")->trigger();
    QVERIFY(finished.wait(60000));
    auto* dash = window.dashboard();
    QCOMPARE(dash->warningTexts().size(), 1);
    QVERIFY(dash->warningTexts()[0].contains(QStringLiteral("training is diverging")));
    // The run's own record: the warned batch in events.jsonl, and its step key on the chart.
    const auto runDir = window.session()->lastResult().runDir;
    std::ifstream events(runDir + "/events.jsonl");
    std::string line;
    Json warned, batch;
    while (std::getline(events, line)) {
      const Json e = Json::parse(line);
      if (e["event"] == "warning" && e.value("tag", "") == "divergence") warned = e;
      if (!warned.is_null() && batch.is_null() && e["event"] == "batch_end") batch = e;
    }
    QVERIFY(!warned.is_null() && !batch.is_null());
    QCOMPARE(dash->warningKeys()[0], batch["step"].get<double>());
    dash->setXAxisMode(netsmith::ui::XAxisMode::Epoch);
    QCOMPARE(dash->warningKeys()[0], (batch["batch"].get<double>() + 1) / 6.0);
  }

  void lrFinderShowsItsCurve() {
    netsmith::testutil::TempDir dir;
    MainWindow window(m_registries);
    QVERIFY(window.openProject(QString::fromStdString(netsmith::testutil::writeTrainProject(dir)),
                               true));
    QSignalSpy finished(window.session(), &netsmith::ui::TrainerSession::finished);
    action(window, "actionTrainLrFind")->trigger();
    QVERIFY(finished.wait(60000));
    auto* dialog = waitForDialog<netsmith::ui::LrFinderDialog>(window, "lrFinderDialog");
    QVERIFY(dialog);
    QVERIFY2(dialog->summary().contains(QStringLiteral("Suggested learning rate")),
             qPrintable(dialog->summary()));
    auto* chart = dialog->findChild<QCustomPlot*>(QStringLiteral("lrFinderChart"));
    QVERIFY(chart->graph(0)->dataCount() > 10);
    QCOMPARE(window.dashboard()->pointCount(QStringLiteral("train_loss")), 0);  // not a run
    // The suggestion (red) and the lowest loss (grey) are drawn on the curve, as the summary
    // gives them.
    QCOMPARE(chart->itemCount(), 2);
    const QString shots = qEnvironmentVariable("NETSMITH_SCREENSHOT_DIR");
    if (!shots.isEmpty()) dialog->grab().save(shots + QStringLiteral("/lr-finder.png"));
    dialog->close();
  }

  void unsavedChangesArePromptedAndUndoable() {
    QTemporaryDir tmp;
    const QString copy = tmp.filePath(QStringLiteral("copy.netsmith.json"));
    QVERIFY(QFile::copy(example(), copy));
    MainWindow window(m_registries);
    window.show();
    QVERIFY(window.openProject(copy, true));
    window.document()->setProjectName(QStringLiteral("renamed"));
    QVERIFY(window.document()->isModified());
    QVERIFY(window.windowTitle().startsWith(QStringLiteral("renamed *")));
    // Undo / Redo through the Edit menu's actions.
    action(window, "actionUndo")->trigger();
    QCOMPARE(QString::fromStdString(window.document()->project().name),
             QStringLiteral("fashion_mnist"));
    QVERIFY(!window.document()->isModified());
    action(window, "actionRedo")->trigger();
    QCOMPARE(QString::fromStdString(window.document()->project().name), QStringLiteral("renamed"));
    // Closing asks; Cancel keeps the window and the change.
    QString asked;
    answerNextMessageBox(QMessageBox::Cancel, &asked);
    QVERIFY(!window.close());
    QVERIFY(asked.contains(QStringLiteral("unsaved changes")));
    QVERIFY(window.isVisible());
    // Save writes the file and clears the mark; then closing does not ask.
    action(window, "actionSave")->trigger();
    QVERIFY(!window.document()->isModified());
    ProjectDocument reread(m_registries);
    QVERIFY(reread.load(copy));
    QCOMPARE(QString::fromStdString(reread.project().name), QStringLiteral("renamed"));
    QVERIFY(window.close());
    // The layout was kept.
    QVERIFY(!QSettings().value(QStringLiteral("window/state")).toByteArray().isEmpty());
  }

  void environmentDialogAndTheme() {
    MainWindow window(m_registries);
    window.show();
    action(window, "actionEnvironment")->trigger();
    auto* env = waitForDialog<netsmith::ui::EnvironmentDialog>(window, "environmentDialog");
    QVERIFY(env);
    QVERIFY2(env->reportText().contains(QStringLiteral("LibTorch")), qPrintable(env->reportText()));
    QVERIFY(env->reportText().contains(QStringLiteral("BLAS")));
    env->close();
    // Dark theme: the palette turns dark and the preference is kept.
    action(window, "actionTheme_dark")->trigger();
    QVERIFY(QApplication::palette().color(QPalette::Window).lightness() < 100);
    QCOMPARE(netsmith::ui::Preferences::load().theme, QStringLiteral("dark"));
    QCOMPARE(window.dashboard()->chart(QStringLiteral("loss"))->xAxis->tickLabelColor(),
             QApplication::palette().color(QPalette::WindowText));
    action(window, "actionTheme_system")->trigger();
    QVERIFY(QApplication::palette().color(QPalette::Window).lightness() > 100);
  }

  void newProjectFromTemplate() {
    QTemporaryDir tmp;
    ProjectDocument doc(m_registries);
    const QString target = tmp.filePath(QStringLiteral("mine.netsmith.json"));
    QVERIFY(doc.createFromTemplate(
        QStringLiteral(NETSMITH_SOURCE_DIR "/resources/templates/lenet5.netsmith.json"), target));
    QCOMPARE(QString::fromStdString(doc.project().name), QStringLiteral("mine"));
    QCOMPARE(doc.filePath(), target);
    QVERIFY(QFileInfo::exists(target));
    MainWindow window(m_registries);
    QVERIFY(window.findChild<QAction*>(QStringLiteral("actionTemplate_lenet5")));
  }

  void logPanelFiltersAndCopies() {
    netsmith::ui::LogPanel panel;
    spdlog::info("alpha line");
    spdlog::warn("beta warning");
    QVERIFY(QTest::qWaitFor([&] { return panel.lineCount() >= 2; }, 2000));
    QVERIFY(panel.visibleText().contains(QStringLiteral("alpha line")));
    panel.setMinimumLevel(3);  // warnings and up
    QVERIFY(!panel.visibleText().contains(QStringLiteral("alpha line")));
    QVERIFY(panel.visibleText().contains(QStringLiteral("warning: beta warning")));
    panel.setMinimumLevel(2);
    panel.setFilter(QStringLiteral("ALPHA"));
    QVERIFY(panel.visibleText().contains(QStringLiteral("alpha line")));
    QVERIFY(!panel.visibleText().contains(QStringLiteral("beta")));
    panel.copy();
    QVERIFY(QApplication::clipboard()->text().contains(QStringLiteral("alpha line")));
  }

  void documentSavesAtomically() {
    QTemporaryDir dir;
    ProjectDocument doc(m_registries);
    QVERIFY(doc.load(example()));
    const QString target = dir.filePath(QStringLiteral("copy.netsmith.json"));
    QVERIFY(doc.save(target));
    ProjectDocument again(m_registries);
    QVERIFY(again.load(target));
    QVERIFY(again.project().model == doc.project().model);
    QVERIFY(!doc.save(dir.filePath(QStringLiteral("missing/dir/x.netsmith.json"))));
    QVERIFY(doc.errorString().contains(QStringLiteral("cannot write")));
  }

  // F1 opens the guide at the page for what the window shows (the start page's contents, the
  // Data page's formats, the Evaluation page its task's page); a click on a link in it follows
  // the link inside the window, and Back returns.
  void f1OpensTheGuideAtThePageShown() {
    MainWindow window(m_registries);
    QVERIFY(netsmith::uitest::showAt(window));
    QTest::keyClick(&window, Qt::Key_F1);
    auto* guide = window.findChild<netsmith::ui::GuideWindow*>(QStringLiteral("guideWindow"));
    QVERIFY(guide && guide->isVisible());
    QCOMPARE(guide->currentPage(), QStringLiteral("README.md"));
    QCOMPARE(guide->windowTitle(), QStringLiteral("The Netsmith guide - Netsmith guide"));
    QVERIFY(guide->browser()->toPlainText().contains(QStringLiteral("Common jobs")));

    // A click on the "Training" link of the contents.
    QVERIFY(QTest::qWaitForWindowExposed(guide));
    auto* browser = guide->browser();
    QTextCursor link = browser->document()->find(QStringLiteral("Training"), 0,
                                                 QTextDocument::FindCaseSensitively);
    while (!link.isNull() && !link.charFormat().isAnchor())
      link = browser->document()->find(QStringLiteral("Training"), link,
                                       QTextDocument::FindCaseSensitively);
    QVERIFY(!link.isNull());
    QCOMPARE(link.charFormat().anchorHref(), QStringLiteral("training.md"));
    QTextCursor inside(browser->document());
    inside.setPosition((link.selectionStart() + link.selectionEnd()) / 2);
    browser->setTextCursor(inside);
    browser->ensureCursorVisible();
    const QPoint at = browser->cursorRect(inside).center();
    QTest::mouseClick(browser->viewport(), Qt::LeftButton, {}, at);
    QTRY_COMPARE(guide->currentPage(), QStringLiteral("training.md"));
    QCOMPARE(guide->windowTitle(), QStringLiteral("Training - Netsmith guide"));
    auto* back = guide->findChild<QToolButton*>(QStringLiteral("guideBack"));
    QVERIFY(back->isEnabled());
    QTest::mouseClick(back, Qt::LeftButton);
    QCOMPARE(guide->currentPage(), QStringLiteral("README.md"));
    const QString shots = qEnvironmentVariable("NETSMITH_SCREENSHOT_DIR");
    if (!shots.isEmpty()) QVERIFY(guide->grab().save(shots + QStringLiteral("/guide.png")));
    guide->showPage(QStringLiteral("dashboard.md"));  // a page with a picture
    if (!shots.isEmpty())
      QVERIFY(guide->grab().save(shots + QStringLiteral("/guide-dashboard.png")));

    // A project's pages: each its own topic; Evaluation the task's.
    QVERIFY(window.openProject(example(), /*quiet=*/true));
    window.pages()->showPage(ProjectPages::DataPage);
    QCOMPARE(window.guidePageForView(), QStringLiteral("data-formats.md"));
    QApplication::setActiveWindow(&window);  // back from the guide's window to the studio's
    QTRY_COMPARE(QApplication::activeWindow(), &window);
    QTest::keyClick(&window, Qt::Key_F1);
    QCOMPARE(guide->currentPage(), QStringLiteral("data-formats.md"));
    QCOMPARE(window.findChildren<netsmith::ui::GuideWindow*>().size(), 1);  // the same window
    window.pages()->showPage(ProjectPages::EvalPage);
    QCOMPARE(window.guidePageForView(), QStringLiteral("evaluation.md"));
    window.pages()->showPage(ProjectPages::ExperimentsPage);
    QCOMPARE(window.guidePageForView(), QStringLiteral("experiments-and-sweeps.md"));
    // Every page the studio names is in the guide, each task's page too.
    for (const auto& name : window.document()->tasks().names()) {
      const auto page = QString::fromStdString(window.document()->tasks().get(name).guidePage);
      QVERIFY2(QFileInfo::exists(QStringLiteral(NETSMITH_SOURCE_DIR "/docs/guide/") + page),
               qPrintable(page));
    }
    for (auto p : {ProjectPages::ModelPage, ProjectPages::DataPage, ProjectPages::AugmentPage,
                   ProjectPages::TrainingPage, ProjectPages::DashboardPage, ProjectPages::RunsPage,
                   ProjectPages::EvalPage, ProjectPages::ExperimentsPage}) {
      window.pages()->showPage(p);
      QVERIFY2(QFileInfo::exists(QStringLiteral(NETSMITH_SOURCE_DIR "/docs/guide/") +
                                 window.guidePageForView()),
               qPrintable(window.guidePageForView()));
    }
  }

 private:
  const netsmith::RegistriesPtr m_registries = netsmith::Registries::builtins();
  const netsmith::ops::OpRegistry& m_registry = m_registries->ops;
};

QTEST_MAIN(MainWindowTest)
#include "main_window_test.moc"
