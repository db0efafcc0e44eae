// The Training and Augment pages on the offscreen platform: forms from the core schemas, the
// planned LR chart against netsmith-cli, invalid fields, the augmentation preview.
#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMessageBox>
#include <QPointer>
#include <QProcess>
#include <QPushButton>
#include <QScrollArea>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTableWidget>
#include <QToolButton>
#include <QUndoStack>
#include <QtTest>

#include <qcustomplot.h>
#include <QAction>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>

#include "../core/train_fixtures.h"
#include "augment/transform.h"
#include "common/file_util.h"
#include "data/source_formats.h"
#include "doctor/doctor_panel.h"
#include "doctor/doctor_report.h"
#include "editor/model_editor.h"
#include "editor/model_page.h"
#include "eval/calibration.h"
#include "evaluation/calibration_panel.h"
#include "evaluation/classification_view.h"
#include "evaluation/embedding_panel.h"
#include "evaluation/evaluation_page.h"
#include "evaluation/sample_dialog.h"
#include "forms/augment_page.h"
#include "forms/class_editor.h"
#include "forms/data_page.h"
#include "forms/training_page.h"
#include "input_driver.h"
#include "registries/registries.h"
#include "session/project_document.h"
#include "session/trainer_session.h"
#include "shell/main_window.h"
#include "shell/project_pages.h"
#include "shell/run_controller.h"
#include "train/train_options.h"
#include "train/trainer.h"
#include "ui_test_support.h"
#include "util/schema_form.h"

using netsmith::Json;
using netsmith::ui::MainWindow;
using netsmith::ui::ProjectPages;
using netsmith::ui::TrainingPage;

namespace {

/// `netsmith-cli lr-schedule PROJECT --json`'s LR list.
std::vector<double> cliSchedule(const QString& project) {
  QProcess cli;
  cli.start(QStringLiteral(NETSMITH_CLI),
            {QStringLiteral("lr-schedule"), project, QStringLiteral("--json")});
  if (!cli.waitForFinished(60000) || cli.exitCode() != 0) return {};
  return Json::parse(cli.readAllStandardOutput().toStdString())["lr"].get<std::vector<double>>();
}

/// The lr column of a run's metrics.csv, one value per optimizer step (the row whose step count
/// grew), as written (9 significant digits).
std::vector<std::string> runLrPerStep(const std::string& runDir) {
  QFile csv(QString::fromStdString(runDir + "/metrics.csv"));
  if (!csv.open(QIODevice::ReadOnly)) return {};
  std::vector<std::string> out;
  long long previous = 0;
  csv.readLine();  // header
  while (!csv.atEnd()) {
    const QStringList cells = QString::fromUtf8(csv.readLine()).trimmed().split(QLatin1Char(','));
    if (cells.size() < 7 || cells[0] != QLatin1String("step")) continue;
    const long long step = cells[3].toLongLong();
    if (step > previous) out.push_back(cells[6].toStdString());
    previous = step;
  }
  return out;
}

std::vector<std::string> asCsvNumbers(const QVector<double>& values) {
  std::vector<std::string> out;
  for (double v : values) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    out.push_back(buf);
  }
  return out;
}

void compareCurves(const QVector<double>& plotted, const std::vector<double>& cli) {
  QCOMPARE(std::size_t(plotted.size()), cli.size());
  for (std::size_t i = 0; i < cli.size(); ++i)
    QVERIFY2(
        std::abs(plotted[int(i)] - cli[i]) <= 1e-12 * std::max(1.0, std::abs(cli[i])),
        qPrintable(QStringLiteral("step %1: %2 vs %3").arg(i).arg(plotted[int(i)]).arg(cli[i])));
}

}  // namespace

/// Opens a one-epoch project of `dir` in `window` and trains it through the window's action.
void trainOneEpoch(MainWindow& window, const netsmith::testutil::TempDir& dir) {
  QVERIFY(window.openProject(
      QString::fromStdString(netsmith::testutil::writeTrainProject(dir, {{"epochs", 1}})), true));
  QSignalSpy finished(window.session(), &netsmith::ui::TrainerSession::finished);
  window.findChild<QAction*>(QStringLiteral("actionTrainStart"))->trigger();
  QVERIFY(finished.wait(60000));
}

/// The Training page of `window` once the project at `path` is open and its plan drawn;
/// nullptr when the project does not open or no plan comes within 30 seconds.
TrainingPage* withPlan(MainWindow& window, const QString& path) {
  auto* page = window.pages()->trainingPage();
  QSignalSpy ready(page, &TrainingPage::planReady);
  return window.openProject(path, true) && ready.wait(30000) ? page : nullptr;
}

/// Class folders cats/ and dogs/ under `root`, `count` grey `size` x `size` PNGs each (dark
/// cats, light dogs); whether every file was written.
bool writeCatsAndDogs(const QString& root, int count, int size) {
  for (const char* cls : {"cats", "dogs"}) {
    QDir().mkpath(root + "/" + cls);
    for (int i = 0; i < count; ++i) {
      QImage image(size, size, QImage::Format_Grayscale8);
      image.fill(cls[0] == 'c' ? 40 + i : 200 - i);
      if (!image.save(QStringLiteral("%1/%2/%3.png").arg(root, cls).arg(i))) return false;
    }
  }
  return true;
}

/// `window` with the project at `path` open, shown at 1280 x 720 on the Data page.
void showOnDataPage(MainWindow& window, const QString& path) {
  QVERIFY(window.openProject(path, true));
  QVERIFY(netsmith::uitest::showAt(window));
  window.pages()->showPage(ProjectPages::DataPage);
}

/// The window at 1280 x 720 on the Data page's Doctor tab.
netsmith::ui::DoctorPanel* showDoctorTab(MainWindow& window) {
  window.resize(1280, 720);
  window.show();
  window.pages()->showPage(ProjectPages::DataPage);
  auto* doctor = window.pages()->dataPage()->doctor();
  window.pages()
      ->dataPage()
      ->findChild<QTabWidget*>(QStringLiteral("dataTabs"))
      ->setCurrentWidget(doctor);
  return doctor;
}

class FormsTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("NetsmithTests"));
    QCoreApplication::setApplicationName(QStringLiteral("netsmith_forms_tests"));
  }

  // The planned LR of every step is what netsmith-cli lr-schedule prints, before and after the
  // schedule's form changes.
  void lrChartMatchesTheCliPointForPoint() {
    netsmith::testutil::TempDir dir;
    const QString path = QString::fromStdString(netsmith::testutil::writeTrainProject(
        dir, {{"epochs", 4},
              {"schedule", Json{{"type", "cosine"}, {"warmup_epochs", 1}, {"min_lr", 0.001}}}}));
    MainWindow window(m_registries);
    auto* page = withPlan(window, path);
    QVERIFY(page);
    QCOMPARE(page->stepsPerEpoch(), 6);  // 192 training samples, batch 32
    compareCurves(page->plottedLr(), cliSchedule(path));

    // Step schedule through the form: type, then step_size through its spin box.
    page->scheduleType()->setCurrentText(QStringLiteral("step"));
    Q_EMIT page->scheduleType()->textActivated(QStringLiteral("step"));
    auto* stepSize = qobject_cast<QSpinBox*>(
        page->form(QStringLiteral("schedule"))->field(QStringLiteral("step_size")));
    QVERIFY(stepSize);
    stepSize->setValue(2);
    QCOMPARE(window.document()->project().train["schedule"],
             (Json{{"type", "step"}, {"step_size", 2}}));
    // The optimizer's lr through its form; the chart follows.
    auto* lr = qobject_cast<QDoubleSpinBox*>(
        page->form(QStringLiteral("optimizer"))->field(QStringLiteral("lr")));
    QVERIFY(lr);
    lr->setValue(0.05);
    QVERIFY(window.document()->save());
    compareCurves(page->plottedLr(), cliSchedule(path));
    QCOMPARE(page->plottedLr().front(), 0.05);
    QCOMPARE(page->plottedLr().back(), 0.05 * 0.1);  // one decay, after epoch 2
  }

  // With gradient accumulation and warmup, the planned LR is the LR the run uses, step for step:
  // the page's chart, netsmith-cli lr-schedule and the run's metrics.csv agree.
  void lrChartMatchesARunWithAccumulation() {
    netsmith::testutil::TempDir dir;
    const QString path = QString::fromStdString(netsmith::testutil::writeTrainProject(
        dir, {{"epochs", 2},
              {"batch_size", 20},
              {"grad_accumulation", 3},
              {"optimizer", Json{{"type", "sgd"}, {"lr", 0.05}}},
              {"schedule", Json{{"type", "cosine"}, {"warmup_epochs", 1}, {"min_lr", 0.001}}}}));
    MainWindow window(m_registries);
    auto* page = withPlan(window, path);
    QVERIFY(page);
    QCOMPARE(page->stepsPerEpoch(), 4);  // 10 batches of 20 in groups of 3: 3 + 3 + 3 + 1
    compareCurves(page->plottedLr(), cliSchedule(path));
    const auto loaded = netsmith::project::loadProject(path.toStdString());
    netsmith::train::TrainerConfig config;
    config.registries = ::netsmith::Registries::builtins();
    config.project = loaded.project;
    config.baseDir = loaded.baseDir();
    config.runsRoot = dir.file("runs");
    netsmith::train::Trainer trainer(config);
    trainer.start();
    trainer.wait();
    const auto result = trainer.result();
    QVERIFY2(result.state == netsmith::run::FinishState::Completed, result.reason.c_str());
    QCOMPARE(runLrPerStep(result.runDir), asCsvNumbers(page->plottedLr()));
  }

  // A model whose output does not fit the data's classes is marked on the Model page as it is
  // edited, with the fix that train's own message gives; Start says why it is disabled; the
  // fix applies from the problem list.
  void anOutputThatDoesNotFitTheClassesIsShownLiveWithItsFix() {
    netsmith::testutil::TempDir dir;
    const std::string path = netsmith::testutil::writeTrainProject(dir);
    Json j = Json::parse(netsmith::readTextFile(path));
    j["model"]["nodes"].back()["params"]["out_features"] = 3;  // the data has 4 classes
    std::ofstream(path) << j.dump(1);
    MainWindow window(m_registries);
    auto* page = withPlan(window, QString::fromStdString(path));
    QVERIFY(page);
    const std::string expected =
        "node \"fc\": the model outputs 3 scores but the data has 4 classes; set fc.out_features "
        "to 4";
    const auto& problems = window.document()->problems();
    QVERIFY(std::any_of(problems.begin(), problems.end(),
                        [&](const netsmith::Problem& p) { return p.toString() == expected; }));
    auto* list =
        window.pages()->modelPage()->findChild<QListWidget*>(QStringLiteral("problemList"));
    QVERIFY(list);
    QVERIFY(!list->findItems(QString::fromStdString(expected), Qt::MatchExactly).isEmpty());
    QVERIFY(page->blockedReason().contains(QStringLiteral("set fc.out_features to 4")));
    auto* editor = window.pages()->modelPage()->editor();
    QCOMPARE(editor->fixFor(QStringLiteral("fc")),
             QStringLiteral("Set out_features to 4 (the data's classes)"));
    QCOMPARE(editor->applyFix(QStringLiteral("fc")), QStringLiteral("set fc.out_features to 4"));
    QVERIFY(window.document()->problems().empty());
    QVERIFY(page->blockedReason().isEmpty());
    QVERIFY(list->findItems(QString::fromStdString(expected), Qt::MatchExactly).isEmpty());
  }

  // The device options include the local processes of torch.distributed; the other
  // distributed settings have their own group. Both write the train section.
  // train.monitor takes a name typed in (another task's figure); one the project's task does
  // not report is a problem at once, naming what the task reports, and Start says so.
  // A model that cannot answer the task is a problem as it is edited, with a Fix that gives it
  // a head: ending at a Flatten (64 features for 4 classes), a Linear of 4; ending at an image
  // (8x4x4), global pooling, Flatten and a Linear of 4. Each fix is one undo step.
  void aModelWithoutAHeadGetsOneFromItsFix() {
    netsmith::testutil::TempDir dir;
    const std::string path = netsmith::testutil::writeTrainProject(dir);
    MainWindow window(m_registries);
    QSignalSpy ready(window.pages()->trainingPage(), &TrainingPage::planReady);
    QVERIFY(window.openProject(QString::fromStdString(path), true));
    QVERIFY(ready.wait(30000));  // the data's classes known
    auto* editor = window.pages()->modelPage()->editor();
    auto* doc = window.document();
    const auto problemOf = [&](const char* node) {
      for (const auto& p : doc->problems())
        if (p.nodeId == node) return p.toString();
      return std::string();
    };
    QVERIFY(doc->problems().empty());
    editor->removeNodes({QStringLiteral("fc"), QStringLiteral("drop")});
    QCOMPARE(problemOf("flat"),
             std::string("node \"flat\": the model outputs 128 scores but the data has 4 "
                         "classes; end the model with a Linear of 4 outputs"));
    QCOMPARE(editor->fixFor(QStringLiteral("flat")), QStringLiteral("Add a Linear of 4 outputs"));
    const int steps = doc->undoStack()->count();
    QVERIFY(!editor->applyFix(QStringLiteral("flat")).isEmpty());
    QVERIFY(doc->problems().empty());
    QCOMPARE(doc->analysis().outputShape, (netsmith::Shape{4}));
    QCOMPARE(doc->undoStack()->count(), steps + 1);
    doc->undoStack()->undo();
    QVERIFY(!problemOf("flat").empty());
    // Without the Flatten the output is the pooled image.
    editor->removeNodes({QStringLiteral("flat")});
    QVERIFY2(problemOf("pool").find("end the model with Flatten and a Linear of 4 outputs") !=
                 std::string::npos,
             problemOf("pool").c_str());
    QCOMPARE(editor->fixFor(QStringLiteral("pool")),
             QStringLiteral("Add global pooling, Flatten and a Linear of 4 outputs"));
    QVERIFY(!editor->applyFix(QStringLiteral("pool")).isEmpty());
    QVERIFY(doc->problems().empty());
    QCOMPARE(doc->analysis().outputShape, (netsmith::Shape{4}));
    std::vector<std::string> ops;
    for (const auto& n : doc->analysis().nodes)
      ops.push_back(n.op);
    QCOMPARE(std::count(ops.begin(), ops.end(), std::string("GlobalAvgPool")), 1);
  }

  void aMonitorTypedInIsCheckedAgainstTheTask() {
    netsmith::testutil::TempDir dir;
    MainWindow window(m_registries);
    const QString path = QString::fromStdString(netsmith::testutil::writeTrainProject(dir));
    QVERIFY(window.openProject(path, true));
    window.show();
    window.pages()->showPage(ProjectPages::TrainingPage);
    auto* page = window.pages()->trainingPage();
    auto* monitor = qobject_cast<QComboBox*>(
        page->form(QStringLiteral("monitor"))->field(QStringLiteral("monitor")));
    QVERIFY(monitor && monitor->isEditable());
    const auto problemAt = [&](const std::string& path) -> std::string {
      for (const auto& p : window.document()->problems())
        if (p.path == path) return p.message;
      return {};
    };
    monitor->lineEdit()->setFocus();
    monitor->lineEdit()->selectAll();
    QTest::keyClicks(monitor->lineEdit(), QStringLiteral("val_mae"));
    QTest::keyClick(monitor->lineEdit(), Qt::Key_Return);
    QCOMPARE(window.document()->project().train["monitor"], Json("val_mae"));
    QCOMPARE(problemAt("train.monitor"),
             std::string("the task \"classification\" has no figure \"mae\" (it reports loss, "
                         "accuracy, each as val_ or train_)"));
    // A typo of a built-in name is one too, with the name meant.
    monitor = qobject_cast<QComboBox*>(
        page->form(QStringLiteral("monitor"))->field(QStringLiteral("monitor")));
    monitor->lineEdit()->setFocus();
    monitor->lineEdit()->selectAll();
    QTest::keyClicks(monitor->lineEdit(), QStringLiteral("val_acuracy"));
    QTest::keyClick(monitor->lineEdit(), Qt::Key_Return);
    QVERIFY2(problemAt("train.monitor").find("did you mean \"val_accuracy\"") != std::string::npos,
             problemAt("train.monitor").c_str());
    // Undo takes the typed names back (edits of one field merge into one step); the problem
    // goes with them.
    window.document()->undoStack()->undo();
    QVERIFY(!window.document()->project().train.contains("monitor"));
    QVERIFY(problemAt("train.monitor").empty());
  }

  void localProcessesAreADeviceOption() {
    netsmith::testutil::TempDir dir;
    MainWindow window(m_registries);
    const QString path = QString::fromStdString(netsmith::testutil::writeTrainProject(dir));
    auto* page = withPlan(window, path);
    QVERIFY(page);
    QCOMPARE(page->stepsPerEpoch(), 6);  // 192 samples, batch 32
    auto* device = page->findChild<QComboBox*>(QStringLiteral("trainDevice"));
    auto* group = page->form(QStringLiteral("local_processes"));
    QVERIFY(device && group);
    QCOMPARE(group, page->form(QStringLiteral("amp")));  // beside the device
    QVERIFY(group->isAncestorOf(device) || group->parentWidget()->isAncestorOf(device));
    auto* processes = qobject_cast<QSpinBox*>(group->field(QStringLiteral("local_processes")));
    QVERIFY(processes);
    QCOMPARE(processes->value(), 1);
    processes->setValue(2);
    QCOMPARE(window.document()->project().train["local_processes"], Json(2));
    // The plan counts global batches of 32 x 2, as netsmith-cli lr-schedule does.
    QCOMPARE(page->stepsPerEpoch(), 3);
    QVERIFY(window.document()->save());
    compareCurves(page->plottedLr(), cliSchedule(path));
    auto* sync = page->form(QStringLiteral("sync_batchnorm"));
    QVERIFY(sync && sync != group);
    QVERIFY(page->form(QStringLiteral("dist_timeout")) == sync);
    window.document()->undoStack()->undo();
    QVERIFY(!window.document()->project().train.contains("local_processes"));
  }

  // An invalid value is marked at its field with the reason, and Start is disabled with it.
  void anInvalidFieldDisablesStartWithItsReason() {
    netsmith::testutil::TempDir dir;
    MainWindow window(m_registries);
    QVERIFY(window.openProject(QString::fromStdString(netsmith::testutil::writeTrainProject(dir)),
                               true));
    auto* start = window.findChild<QAction*>(QStringLiteral("actionTrainStart"));
    QVERIFY(start->isEnabled());
    auto* page = window.pages()->trainingPage();
    Q_EMIT page->scheduleType()->textActivated(QStringLiteral("multistep"));
    auto* milestones = qobject_cast<QLineEdit*>(
        page->form(QStringLiteral("schedule"))->field(QStringLiteral("milestones")));
    QVERIFY(milestones);
    milestones->setText(QStringLiteral("\"soon\""));
    Q_EMIT milestones->editingFinished();
    const QString reason =
        page->form(QStringLiteral("schedule"))->problem(QStringLiteral("milestones"));
    QVERIFY2(!reason.isEmpty(), "no problem at the field");
    QVERIFY(milestones->toolTip() == reason);
    QVERIFY(!start->isEnabled());
    QVERIFY2(start->toolTip().contains(QStringLiteral("train.schedule.milestones")),
             qPrintable(start->toolTip()));
    // Undo brings the valid value back and Start with it.
    window.document()->undoStack()->undo();
    QVERIFY(
        page->form(QStringLiteral("schedule"))->problem(QStringLiteral("milestones")).isEmpty());
    QVERIFY(start->isEnabled());
  }

  // Changing a transform's parameter redraws the preview; reordering changes the saved JSON.
  // One click on a field's up arrow moves it by what suits the parameter: a rotation by a
  // degree, a probability by a hundredth, a learning rate by a tenth of its order.
  void arrowsStepEachFieldByWhatSuitsIt() {
    const auto registries = netsmith::Registries::builtins();
    const auto& transforms = registries->transforms;
    netsmith::schema::ParamSchema schema = transforms.find("RandomRotation")->schema;
    schema.push_back(
        netsmith::schema::ParamSpec::real("p", 0.5, "probability").atLeast(0).atMost(1));
    for (const auto& spec : netsmith::train::optimizerSchema("sgd"))
      if (spec.name == "lr") schema.push_back(spec);
    QCOMPARE(schema.size(), transforms.find("RandomRotation")->schema.size() + 2);
    netsmith::ui::SchemaForm form;
    form.setSchema(schema, Json{{"degrees", 15.0}, {"p", 0.5}, {"lr", 0.001}});
    form.resize(600, 400);
    form.show();
    QVERIFY(QTest::qWaitForWindowExposed(&form));
    const auto spin = [&](const char* key) {
      return qobject_cast<QDoubleSpinBox*>(form.field(QString::fromLatin1(key)));
    };
    QVERIFY(spin("degrees") && spin("p") && spin("lr"));
    QStringList changed;
    form.setOnChange([&](const QString& key, const Json&) { changed << key; });
    netsmith::uitest::clickArrow(spin("degrees"), true);
    QCOMPARE(spin("degrees")->value(), 16.0);
    netsmith::uitest::clickArrow(spin("p"), false);
    QVERIFY2(std::abs(spin("p")->value() - 0.49) < 1e-9, qPrintable(spin("p")->text()));
    netsmith::uitest::clickArrow(spin("lr"), true);
    QVERIFY2(std::abs(spin("lr")->value() - 0.0011) < 1e-12, qPrintable(spin("lr")->text()));
    netsmith::uitest::clickArrow(spin("lr"), false);
    netsmith::uitest::clickArrow(spin("lr"), false);
    QVERIFY2(std::abs(spin("lr")->value() - 0.0009) < 1e-12, qPrintable(spin("lr")->text()));
    QCOMPARE(changed, (QStringList{"degrees", "p", "lr", "lr", "lr"}));
  }

  void augmentPreviewFollowsTheFormAndReorderIsSaved() {
    netsmith::testutil::TempDir dir;
    const QString path = QString::fromStdString(netsmith::testutil::writeTrainProject(
        dir, Json::object(), 256,
        R"([{"transform": "HorizontalFlip", "p": 0.0}, {"transform": "VerticalFlip", "p": 0.0}])"));
    MainWindow window(m_registries);
    auto* page = window.pages()->augmentPage();
    QSignalSpy updated(page, &netsmith::ui::AugmentPage::previewUpdated);
    QVERIFY(window.openProject(path, true));
    QVERIFY(updated.wait(30000));
    QVERIFY2(page->previewError().isEmpty(), qPrintable(page->previewError()));
    const QImage unflipped = page->previewImage();
    QVERIFY(!unflipped.isNull());
    QCOMPARE(page->list()->count(), 2);
    // HorizontalFlip's p from 0 to 1 through its form: every draw is flipped.
    page->selectRow(0);
    auto* p = qobject_cast<QDoubleSpinBox*>(page->form()->field(QStringLiteral("p")));
    QVERIFY(p);
    QCOMPARE(p->value(), 0.0);
    const int before = page->previewCount();
    p->setValue(1.0);
    QVERIFY(QTest::qWaitFor([&] { return page->previewCount() > before; }, 30000));
    QVERIFY(page->previewImage() != unflipped);
    QCOMPARE(window.document()->project().augment[0]["p"], Json(1.0));
    // Reorder (what a drag does), then save: the file has the new order.
    page->moveRow(1, 0);
    QVERIFY(window.document()->save());
    const auto saved = netsmith::project::loadProject(path.toStdString()).project.augment;
    QCOMPARE(saved[0]["transform"], Json("VerticalFlip"));
    QCOMPARE(saved[1]["transform"], Json("HorizontalFlip"));
    QCOMPARE(page->list()->item(0)->text().section(' ', 0, 0), QStringLiteral("VerticalFlip"));
    // Disable one, add one from the registry, remove it.
    page->setEnabled(0, false);
    QCOMPARE(window.document()->project().augment[0]["enabled"], Json(false));
    QCOMPARE(page->list()->item(0)->checkState(), Qt::Unchecked);
    page->addTransform(QStringLiteral("RandomErasing"));
    QCOMPARE(window.document()->project().augment.size(), 3u);
    page->removeRow(2);
    QCOMPARE(window.document()->project().augment.size(), 2u);
    // MixUp is shown on a pair of images with the mixed label's weights.
    const int beforeMix = page->previewCount();
    page->addTransform(QStringLiteral("MixUp"));
    QVERIFY(QTest::qWaitFor([&] { return page->previewCount() > beforeMix; }, 30000));
    QVERIFY(QTest::qWaitFor(
        [&] {
          return page->findChild<QLabel*>(QStringLiteral("previewInfo"))
              ->text()
              .contains(QStringLiteral("MixUp of a pair"));
        },
        30000));
  }

  // The Evaluation page's confusion matrix is what netsmith-cli eval prints; a click on a cell
  // lists exactly that cell's samples.
  void evaluationMatchesTheCliAndCellsListTheirSamples() {
    netsmith::testutil::TempDir dir;
    MainWindow window(m_registries);
    trainOneEpoch(window, dir);
    if (QTest::currentTestFailed()) return;
    auto* page = window.pages()->evaluationPage();
    QCOMPARE(page->checkpoint(), window.runs()->currentCheckpoint());
    // Before Evaluate the PR curves say what fills them (no bare axes), and vanish with it.
    const auto emptyHint = [](QCustomPlot* plot) {
      plot->replot();
      for (int i = 0; i < plot->itemCount(); ++i)
        if (plot->item(i)->objectName() == QLatin1String("emptyHint")) return plot->item(i);
      return static_cast<QCPAbstractItem*>(nullptr);
    };
    // Before Evaluate the page says what will fill it; the classifier's view then shows.
    auto* placeholder = page->findChild<QLabel*>(QStringLiteral("evaluationPlaceholder"));
    QVERIFY(placeholder && !placeholder->text().isEmpty());
    QVERIFY(!page->taskView());
    QSignalSpy evaluated(page, &netsmith::ui::EvaluationPage::evaluated);
    page->evaluate();
    QVERIFY(evaluated.wait(60000));
    QVERIFY2(page->errorText().isEmpty(), qPrintable(page->errorText()));
    auto* view = qobject_cast<netsmith::ui::ClassificationView*>(page->taskView());
    QVERIFY(view);
    QCOMPARE(page->findChild<QStackedWidget*>(QStringLiteral("evaluationViews"))->currentWidget(),
             view);
    QVERIFY(emptyHint(view->prCurves()) && !emptyHint(view->prCurves())->visible());

    QProcess cli;
    cli.start(QStringLiteral(NETSMITH_CLI),
              {QStringLiteral("eval"), page->checkpoint(), QStringLiteral("--json")});
    QVERIFY(cli.waitForFinished(60000));
    QCOMPARE(cli.exitCode(), 0);
    const Json j = Json::parse(cli.readAllStandardOutput().toStdString());
    const auto confusion = j["confusion"].get<std::vector<std::vector<std::int64_t>>>();
    QCOMPARE(page->result().metrics.confusion, confusion);
    QCOMPARE(page->result().metrics.accuracy, j["accuracy"].get<double>());
    auto* table = view->confusion();
    QCOMPARE(table->rowCount(), 4);
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < 4; ++c)
        QCOMPARE(table->item(r, c)->data(Qt::UserRole).toLongLong(),
                 confusion[std::size_t(r)][std::size_t(c)]);
    QCOMPARE(view->perClass()->rowCount(), 4);
    // Each class's AP in its column and its curve in the PR curves tab, as the CLI gives it.
    QCOMPARE(view->prCurves()->plottableCount(), 4);
    for (int c = 0; c < 4; ++c) {
      const double ap = j["per_class"][std::size_t(c)]["average_precision"].get<double>();
      QCOMPARE(view->perClass()->item(c, 4)->text(),
               QString::number(100.0 * ap, 'f', 2) + QLatin1Char('%'));
      QVERIFY(view->prCurves()->plottable(c)->name().contains(QString::number(ap, 'f', 3)));
    }
    QCOMPARE(page->result().perClass[0].support,
             confusion[0][0] + confusion[0][1] + confusion[0][2] + confusion[0][3]);

    // Click every non-empty cell: the list holds exactly its samples, highest loss first.
    int clicked = 0;
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < 4; ++c) {
        if (confusion[std::size_t(r)][std::size_t(c)] == 0) continue;
        Q_EMIT table->cellClicked(r, c);
        ++clicked;
        auto* list = view->cellList();
        QCOMPARE(std::int64_t(list->count()), confusion[std::size_t(r)][std::size_t(c)]);
        double lastLoss = 1e300;
        for (int i = 0; i < list->count(); ++i) {
          const auto position = list->item(i)->data(Qt::UserRole).toLongLong();
          const auto& s = page->result().samples;
          const auto it = std::find_if(s.begin(), s.end(),
                                       [&](const auto& x) { return x.position == position; });
          QVERIFY(it != s.end());
          QCOMPARE(it->label, std::int64_t(r));
          QCOMPARE(it->predicted, std::int64_t(c));
          QVERIFY(it->loss <= lastLoss);
          lastLoss = it->loss;
          QCOMPARE(int(it->top.size()), 3);
          QCOMPARE(it->top[0].first, it->predicted);
        }
      }
    QVERIFY(clicked >= 4);

    // The Calibration tab: ECE and the diagram's bars equal a count made here from the kept
    // samples over the documented bins (bin = ceil(15 c) - 1); then a click fits the
    // temperature, records it beside the checkpoint and shows the scores before and after.
    window.show();
    window.pages()->showPage(ProjectPages::EvalPage);
    auto* calibration = view->calibration();
    page->findChild<QTabWidget*>(QStringLiteral("evaluationDetails"))
        ->setCurrentWidget(calibration);
    const auto checkCalibration = [&](int barSets) {
      std::vector<double> count(15), right(15), confidence(15);
      for (const auto& s : page->result().samples) {
        const double c = s.top[0].second;
        const auto b = std::size_t(std::clamp(int(std::ceil(c * 15)) - 1, 0, 14));
        count[b] += 1;
        right[b] += s.label == s.predicted;
        confidence[b] += c;
      }
      double ece = 0;
      const double n = double(page->result().samples.size());
      for (std::size_t b = 0; b < 15; ++b)
        if (count[b] > 0)
          ece += count[b] / n * std::abs(right[b] / count[b] - confidence[b] / count[b]);
      QVERIFY2(std::abs(page->result().calibration.ece - ece) < 1e-5,
               qPrintable(QString::number(page->result().calibration.ece) + " vs " +
                          QString::number(ece)));
      QVERIFY2(calibration->figures()->text().contains(QString::number(ece, 'f', 4)),
               qPrintable(calibration->figures()->text()));
      auto* chart = calibration->chart();
      QCOMPARE(chart->plottableCount(), 1 + barSets);
      // The last bar set is the scores as evaluated: a bar per bin holding samples, as high
      // as that bin's accuracy.
      auto* bars = qobject_cast<QCPBars*>(chart->plottable(barSets));
      QVERIFY(bars);
      int nonEmpty = 0;
      for (std::size_t b = 0; b < 15; ++b)
        if (count[b] > 0) {
          const auto bar = bars->data()->at(nonEmpty++);
          QCOMPARE(std::size_t(std::floor(bar->key * 15)), b);
          QVERIFY(std::abs(bar->value - right[b] / count[b]) < 1e-9);
        }
      QCOMPARE(bars->data()->size(), nonEmpty);
    };
    checkCalibration(1);
    if (QTest::currentTestFailed()) return;
    QVERIFY(calibration->fitButton()->isEnabled());
    QTest::mouseClick(calibration->fitButton(), Qt::LeftButton);
    QVERIFY(evaluated.wait(60000));
    QVERIFY2(page->errorText().isEmpty(), qPrintable(page->errorText()));
    const auto& fitted = page->result();
    QVERIFY(fitted.temperatureFitted);
    QVERIFY(fitted.temperatureFit.samples > 0);
    QVERIFY(fitted.temperatureFit.nllAfter <= fitted.temperatureFit.nllBefore);
    QCOMPARE(fitted.metrics.confusion, confusion);  // scaling changes no prediction
    const std::string recorded =
        netsmith::eval::calibrationFileFor(page->checkpoint().toStdString());
    QVERIFY(QFile::exists(QString::fromStdString(recorded)));
    QCOMPARE(netsmith::eval::readTemperature(recorded), fitted.temperature);
    QVERIFY(calibration->figures()->text().contains(QString::fromStdString(recorded)));
    checkCalibration(2);  // before (T = 1) and after
    // A status message ("Opened ...") is never drawn over the run state.
    QCOMPARE(window.findChild<QWidget*>(QStringLiteral("runState"))->isVisible(),
             window.statusBar()->currentMessage().isEmpty());
    if (const QString shots = qEnvironmentVariable("NETSMITH_SCREENSHOT_DIR"); !shots.isEmpty()) {
      QTest::qWait(100);  // the layout settles
      window.grab().save(shots + QStringLiteral("/evaluation-calibration.png"));
      auto* details = page->findChild<QTabWidget*>(QStringLiteral("evaluationDetails"));
      details->setCurrentWidget(view->prCurves());
      QTest::qWait(100);
      window.grab().save(shots + QStringLiteral("/evaluation-pr-curves.png"));
      details->setCurrentWidget(calibration);
    }

    // Test-time augmentation chosen with the keyboard: the page's figures are the CLI's.
    auto* tta = page->findChild<QComboBox*>(QStringLiteral("evaluationTta"));
    QVERIFY(tta->isVisible());  // a classifier's evaluator averages its class scores
    tta->setFocus();
    QTest::keyClick(tta, Qt::Key_Down);
    QCOMPARE(tta->currentData().toString(), QStringLiteral("flip"));
    page->evaluate();
    QVERIFY(evaluated.wait(60000));
    QProcess ttaCli;
    ttaCli.start(QStringLiteral(NETSMITH_CLI),
                 {QStringLiteral("eval"), page->checkpoint(), QStringLiteral("--tta"),
                  QStringLiteral("flip"), QStringLiteral("--json")});
    QVERIFY(ttaCli.waitForFinished(60000));
    QCOMPARE(ttaCli.exitCode(), 0);
    const Json withTta = Json::parse(ttaCli.readAllStandardOutput().toStdString());
    QCOMPARE(page->result().tta, std::string("flip"));
    QCOMPARE(page->result().metrics.accuracy, withTta["accuracy"].get<double>());
    QCOMPARE(page->result().accuracyWithoutTta, withTta["tta"]["accuracy_without"].get<double>());
    QCOMPARE(page->result().accuracyWithoutTta, j["accuracy"].get<double>());
    QVERIFY2(page->findChild<QLabel*>(QStringLiteral("evaluationSummary"))
                 ->text()
                 .contains(QStringLiteral("test-time augmentation (flip, 2 views)")),
             qPrintable(page->findChild<QLabel*>(QStringLiteral("evaluationSummary"))->text()));
  }

  // The Embedding tab: every evaluated sample laid out and coloured by class (a graph per
  // class holding exactly that class's samples, as the confusion matrix counts them); the
  // pointer over a point shows that sample; a lasso drag lists the samples inside the loop
  // with their accuracy, counted here from the layout and the kept samples; a click on a point
  // opens it with its Grad-CAM maps.
  void embeddingLaysOutHoversLassosAndOpens() {
    using netsmith::ui::EmbeddingPanel;
    netsmith::testutil::TempDir dir;
    MainWindow window(m_registries);
    trainOneEpoch(window, dir);
    if (QTest::currentTestFailed()) return;
    auto* page = window.pages()->evaluationPage();
    QSignalSpy evaluated(page, &netsmith::ui::EvaluationPage::evaluated);
    page->evaluate();
    QVERIFY(evaluated.wait(60000));
    QVERIFY2(page->errorText().isEmpty(), qPrintable(page->errorText()));
    const auto& result = page->result();
    QVERIFY(result.featureWidth > 0);
    QCOMPARE(result.features.size(), std::size_t(64 * result.featureWidth));
    window.resize(1280, 720);
    window.show();
    window.activateWindow();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.pages()->showPage(ProjectPages::EvalPage);
    auto* view = qobject_cast<netsmith::ui::ClassificationView*>(page->taskView());
    QVERIFY(view);
    auto* panel = view->embedding();
    page->findChild<QTabWidget*>(QStringLiteral("evaluationDetails"))->setCurrentWidget(panel);
    QSignalSpy laidOut(panel, &EmbeddingPanel::laidOut);
    QTest::mouseClick(panel->layOutButton(), Qt::LeftButton);
    QVERIFY(laidOut.wait(120000));
    QCOMPARE(int(panel->points().size()), 64);
    QTest::qWait(50);  // the chart's layout settles before pixels are read

    // A graph per class, each as many points as the class has samples.
    const auto& confusion = result.metrics.confusion;
    auto* chart = panel->chart();
    int classGraphs = 0;
    for (int g = 0; g < chart->graphCount(); ++g) {
      const QVariant group = chart->graph(g)->property("netsmithGroup");
      if (!group.isValid()) continue;
      const auto& row = confusion.at(std::size_t(group.toInt()));
      QCOMPARE(std::int64_t(chart->graph(g)->dataCount()),
               std::accumulate(row.begin(), row.end(), std::int64_t(0)));
      ++classGraphs;
    }
    QCOMPARE(classGraphs, 4);
    // Right / wrong, chosen with the keyboard: the diagonal and the rest.
    panel->colouring()->setFocus();
    QTest::keyClick(panel->colouring(), Qt::Key_Down);
    std::int64_t rightCount = 0;
    for (std::size_t k = 0; k < confusion.size(); ++k)
      rightCount += confusion[k][k];
    for (int g = 0; g < chart->graphCount(); ++g) {
      const QVariant group = chart->graph(g)->property("netsmithGroup");
      if (!group.isValid()) continue;
      QCOMPARE(std::int64_t(chart->graph(g)->dataCount()),
               group.toInt() == 0 ? rightCount : 64 - rightCount);
    }

    // The pointer over a point shows its sample.
    const QPointF first = panel->pixelOf(0);
    QTest::mouseMove(chart, first.toPoint());
    QTRY_VERIFY2(panel->hoverText()->text().contains(
                     QStringLiteral("#%1<").arg(panel->points()[0].position)),
                 qPrintable(panel->hoverText()->text()));

    // A lasso (L) around the middle of the chart.
    QTest::keyClick(&window, Qt::Key_L);
    if (!panel->lassoButton()->isChecked()) panel->lassoButton()->click();  // no active window
    QVERIFY(panel->lassoButton()->isChecked());
    const QRect area = chart->axisRect()->rect();
    const QRect loop =
        area.adjusted(area.width() / 5, area.height() / 5, -area.width() / 5, -area.height() / 5);
    QTest::mousePress(chart, Qt::LeftButton, {}, loop.topLeft());
    for (const QPoint corner : {loop.topRight(), loop.bottomRight(), loop.bottomLeft()})
      QTest::mouseMove(chart, corner);
    QTest::mouseRelease(chart, Qt::LeftButton, {}, loop.bottomLeft());
    std::int64_t inside = 0, right = 0;
    for (int i = 0; i < int(panel->points().size()); ++i) {
      const QPointF p = panel->pixelOf(i);
      if (p.x() > loop.left() && p.x() < loop.right() && p.y() > loop.top() &&
          p.y() < loop.bottom()) {
        ++inside;
        const auto& s = result.samples[panel->points()[std::size_t(i)].sample];
        right += s.label == s.predicted;
      }
    }
    QVERIFY(inside > 0);
    QCOMPARE(std::int64_t(panel->selection().size()), inside);
    QCOMPARE(std::int64_t(panel->selectionList()->count()), inside);
    QVERIFY2(panel->selectionText()->text().contains(
                 QStringLiteral("%1 selected</b>: accuracy %2%")
                     .arg(inside)
                     .arg(100.0 * double(right) / double(inside), 0, 'f', 1)),
             qPrintable(panel->selectionText()->text()));
    if (const QString shots = qEnvironmentVariable("NETSMITH_SCREENSHOT_DIR"); !shots.isEmpty()) {
      QTest::qWait(100);
      window.grab().save(shots + QStringLiteral("/evaluation-embedding.png"));
    }

    // Lasso off: a click on a point opens that sample with its Grad-CAM maps.
    panel->lassoButton()->click();
    QVERIFY(!panel->lassoButton()->isChecked());
    const QPoint target = panel->pixelOf(0).toPoint();
    QCOMPARE(panel->pointAt(target), 0);
    QTest::mouseMove(chart, target);
    QTRY_VERIFY(panel->hoverText()->text().contains(
        QStringLiteral("#%1<").arg(panel->points()[0].position)));
    QTest::mouseClick(chart, Qt::LeftButton, {}, target);
    netsmith::ui::SampleDialog* dialog = nullptr;
    QTRY_VERIFY((dialog = window.findChild<netsmith::ui::SampleDialog*>()) != nullptr);
    QTRY_VERIFY_WITH_TIMEOUT(dialog->isVisible(), 10000);
    QCOMPARE(dialog->windowTitle(), QStringLiteral("Sample #%1").arg(panel->points()[0].position));
    dialog->close();
  }

  // A checkpoint from elsewhere whose data the user never named: the page asks before reading
  // it, and evaluates only after a yes.
  void evaluationAsksBeforeReadingDataTheUserDidNotName() {
    netsmith::testutil::TempDir dir, inbox;
    MainWindow window(m_registries);
    trainOneEpoch(window, dir);
    if (QTest::currentTestFailed()) return;
    auto* page = window.pages()->evaluationPage();
    // The run's own checkpoint is evaluated on its own (its data is the open project's).
    QTRY_VERIFY_WITH_TIMEOUT(!page->summaryText().isEmpty(), 60000);
    // Rewrite the checkpoint's metadata in its safetensors header (offsets are relative to the
    // data that follows, so the tensors stay as they are).
    const std::string bytes =
        netsmith::readTextFile(window.runs()->currentCheckpoint().toStdString());
    std::uint64_t headerSize = 0;
    for (int i = 7; i >= 0; --i)
      headerSize = (headerSize << 8) | static_cast<unsigned char>(bytes[std::size_t(i)]);
    Json header = Json::parse(bytes.substr(8, headerSize));
    Json meta = Json::parse(header["__metadata__"]["netsmith"].get<std::string>());
    for (const char* split : {"train", "test"})
      for (const char* key : {"images", "labels"})
        meta["project"]["data"][split][key] =
            dir.file(meta["project"]["data"][split][key].get<std::string>());
    meta["base_dir"] = "/";
    header["__metadata__"]["netsmith"] = meta.dump();
    std::string text = header.dump();
    text.append((8 - text.size() % 8) % 8, ' ');
    std::string out;
    for (int i = 0; i < 8; ++i)
      out += char((std::uint64_t(text.size()) >> (8 * i)) & 0xFF);
    out += text + bytes.substr(8 + headerSize);
    const std::string sent = inbox.file("sent.safetensors");
    std::ofstream(sent, std::ios::binary) << out;

    page->setCheckpoint(QString::fromStdString(sent));
    for (const auto answer : {QMessageBox::No, QMessageBox::Yes}) {
      QSignalSpy evaluated(page, &netsmith::ui::EvaluationPage::evaluated);
      page->evaluate();
      QVERIFY(evaluated.wait(60000));
      QMessageBox* box = nullptr;
      QVERIFY(QTest::qWaitFor(
          [&] {
            box = page->findChild<QMessageBox*>();
            return box && box->isVisible();
          },
          10000));
      QVERIFY2(box->text().contains(QString::fromStdString(dir.file("train-images.idx"))),
               qPrintable(box->text()));
      box->button(answer)->click();
      if (answer == QMessageBox::No) {
        QTRY_VERIFY(page->findChild<QMessageBox*>() == nullptr ||
                    !page->findChild<QMessageBox*>()->isVisible());
        QVERIFY(page->summaryText().isEmpty());
        QVERIFY(page->result().metrics.samples == 0);
        continue;
      }
      QVERIFY(evaluated.wait(60000));  // the evaluation the yes started
      QVERIFY2(page->errorText().isEmpty(), qPrintable(page->errorText()));
      QCOMPARE(page->result().metrics.samples, std::int64_t(64));  // the whole test split
    }
  }

  // The Data page's Doctor tab on blobs with 12 labels flipped and a training image copied into
  // the test set: settings typed, Run clicked, Stop clicked while a fold trains, Run again goes
  // on; then the galleries hold exactly what the doctor.json it wrote lists, leak first, with
  // pictures.
  void doctorTabRunsStopsGoesOnAndListsItsReport() {
    netsmith::testutil::TempDir dir;
    const QString path =
        QString::fromStdString(netsmith::testutil::writeTrainProject(dir, {{"epochs", 1}}, 384));
    {
      // Flip the labels of the first 12 training images; copy training image 5 over test
      // image 0 (IDX: a 16-byte image header, an 8-byte label header).
      std::fstream labels(dir.file("train-labels.idx"),
                          std::ios::in | std::ios::out | std::ios::binary);
      for (int i = 0; i < 12; ++i) {
        labels.seekg(8 + i);
        const int label = labels.get();
        labels.seekp(8 + i);
        labels.put(char((label + 1) % 4));
      }
      std::ifstream train(dir.file("train-images.idx"), std::ios::binary);
      std::string picture(256, '\0');
      train.seekg(16 + 5 * 256);
      train.read(picture.data(), 256);
      std::fstream test(dir.file("test-images.idx"),
                        std::ios::in | std::ios::out | std::ios::binary);
      test.seekp(16);
      test.write(picture.data(), 256);
    }
    MainWindow window(m_registries);
    QVERIFY(window.openProject(path, true));
    auto* doctor = showDoctorTab(window);
    for (const auto& [box, text] :
         {std::pair{doctor->folds(), "2"}, std::pair{doctor->epochs(), "3"}}) {
      box->setFocus();
      box->selectAll();
      QTest::keyClicks(box, QString::fromLatin1(text));
    }
    QCOMPARE(doctor->folds()->value(), 2);
    QCOMPARE(doctor->epochs()->value(), 3);
    QSignalSpy finished(doctor, &netsmith::ui::DoctorPanel::finished);
    QTest::mouseClick(doctor->runButton(), Qt::LeftButton);
    QVERIFY2(
        QTest::qWaitFor(
            [&] { return doctor->progressBar()->format().startsWith(QStringLiteral("fold 1")); },
            60000),
        qPrintable(doctor->progressBar()->format() + QStringLiteral(": ") +
                   doctor->findChild<QLabel*>(QStringLiteral("doctorStatus"))->text()));
    QTest::mouseClick(doctor->stopButton(), Qt::LeftButton);
    QVERIFY(finished.wait(60000));
    QVERIFY2(doctor->errorText().isEmpty(), qPrintable(doctor->errorText()));
    QVERIFY(doctor->report().stopped);
    QVERIFY(doctor->runButton()->isEnabled());
    QTest::mouseClick(doctor->runButton(), Qt::LeftButton);
    QVERIFY(finished.wait(120000));
    QVERIFY2(doctor->errorText().isEmpty(), qPrintable(doctor->errorText()));
    QVERIFY(!doctor->report().stopped);
    QVERIFY(doctor->progressBar()->format().startsWith(QStringLiteral("done in")));

    const Json report = Json::parse(netsmith::readTextFile(
        QDir(doctor->folder()).filePath(QStringLiteral("doctor.json")).toStdString()));
    QCOMPARE(report["stopped"], Json(false));
    const auto& issues = report["label_issues"]["samples"];
    const auto& pairs = report["duplicates"]["pairs"];
    QCOMPARE(std::size_t(doctor->labelIssues()->count()), issues.size());
    QCOMPARE(std::size_t(doctor->duplicates()->count()), pairs.size());
    QCOMPARE(std::size_t(doctor->outliers()->count()), report["outliers"]["samples"].size());
    // The copied image is found as a leak, listed first.
    QVERIFY(report["duplicates"]["leaks"].get<int>() >= 1);
    QVERIFY(doctor->duplicates()->item(0)->text().startsWith(QStringLiteral("LEAK")));
    QVERIFY(!doctor->duplicates()->item(0)->icon().isNull());
    QVERIFY2(doctor->summary()->text().contains(
                 QStringLiteral("Leakage: %1 pair").arg(report["duplicates"]["leaks"].get<int>())),
             qPrintable(doctor->summary()->text()));
    // Most flagged labels are the flipped ones; each item names its given and suggested class.
    QVERIFY(!issues.empty());
    int flipped = 0;
    const QStringList classes = {QStringLiteral("top-left"), QStringLiteral("top-right"),
                                 QStringLiteral("bottom-left"), QStringLiteral("bottom-right")};
    for (std::size_t i = 0; i < issues.size(); ++i) {
      const auto& issue = issues[i];
      flipped += issue["sample"]["index"].get<int>() < 12;
      const QString text = doctor->labelIssues()->item(int(i))->text();
      QVERIFY2(text.startsWith(classes[issue["sample"]["label"].get<int>()] +
                               QStringLiteral(" → ") + classes[issue["suggested"].get<int>()]),
               qPrintable(text));
      QVERIFY(!doctor->labelIssues()->item(int(i))->icon().isNull());
    }
    QVERIFY2(flipped * 2 >= int(issues.size()), qPrintable(QString::number(flipped)));

    // IDX keeps its labels in a binary file: Relabel says so; Delete on the gallery excludes the
    // selected sample (data.exclude, relative to the project), struck through; undo restores.
    auto* gallery = doctor->labelIssues();
    QTest::mouseClick(gallery->viewport(), Qt::LeftButton, {},
                      gallery->visualItemRect(gallery->item(0)).center());
    QCOMPARE(gallery->currentRow(), 0);
    QVERIFY(!doctor->relabelButton()->isEnabled());
    QVERIFY2(doctor->relabelButton()->toolTip().contains(QStringLiteral("exclude the sample")),
             qPrintable(doctor->relabelButton()->toolTip()));
    QVERIFY(doctor->excludeButton()->isEnabled());
    QTest::keyClick(gallery, Qt::Key_Delete);
    const std::string entry =
        "train-images.idx #" + std::to_string(issues[0]["sample"]["index"].get<int>());
    const auto excluded = [&] {
      const Json& data = window.document()->project().data;
      return data.contains("exclude") ? data["exclude"] : Json::array();
    };
    QCOMPARE(excluded(), Json::array({entry}));
    QVERIFY(gallery->item(0)->font().strikeOut());
    QVERIFY(!doctor->excludeButton()->isEnabled());
    // The leak: its training copy (image 5) is the one excluded.
    doctor->findChild<QTabWidget*>(QStringLiteral("doctorFindings"))->setCurrentIndex(1);
    doctor->duplicates()->setCurrentRow(0);
    QTest::mouseClick(doctor->excludeButton(), Qt::LeftButton);
    QCOMPARE(excluded(), Json::array({entry, "train-images.idx #5"}));
    window.document()->undoStack()->undo();
    window.document()->undoStack()->undo();
    QCOMPARE(excluded(), Json::array());
    QVERIFY(!gallery->item(0)->font().strikeOut());
    if (const QString shots = qEnvironmentVariable("NETSMITH_SCREENSHOT_DIR"); !shots.isEmpty()) {
      QTest::qWait(100);
      window.grab().save(shots + QStringLiteral("/data-doctor.png"));
    }
  }

  // A CSV manifest project, unbalanced and with labels flipped: the doctor offers class weights
  // and a balanced sampler (each an undo step); Relabel rewrites the flagged row's label in the
  // manifest (Ctrl+R), undo puts the file back byte for byte, redo relabels again.
  void doctorRelabelsACsvManifestAndEvensOutTheClasses() {
    netsmith::testutil::TempDir dir;
    const QString path =
        QString::fromStdString(netsmith::testutil::writeTrainProject(dir, {{"epochs", 1}}, 384));
    // The training images as PNGs: every class-0 image, a quarter of the others; the labels of
    // the first 6 listed rows of class 0 written as class 1.
    std::string manifest = "path,label\n";
    {
      std::ifstream images(dir.file("train-images.idx"), std::ios::binary);
      std::ifstream labels(dir.file("train-labels.idx"), std::ios::binary);
      std::string pixels(256, '\0');
      QDir().mkpath(QString::fromStdString(dir.file("imgs")));
      int seen[4] = {0, 0, 0, 0}, flipped = 0;
      for (int i = 0; i < 384; ++i) {
        images.seekg(16 + 256 * i);
        images.read(pixels.data(), 256);
        labels.seekg(8 + i);
        const int label = labels.get();
        if (label != 0 && seen[label]++ % 4 != 0) continue;
        const QString file = QStringLiteral("imgs/%1.png").arg(i);
        QImage(reinterpret_cast<const uchar*>(pixels.data()), 16, 16, 16, QImage::Format_Grayscale8)
            .save(QString::fromStdString(dir.file(file.toStdString())));
        const bool flip = label == 0 && flipped < 6;
        flipped += flip;
        manifest += file.toStdString() + "," + std::to_string(flip ? 1 : label) + "\n";
      }
    }
    std::ofstream(dir.file("train.csv"), std::ios::binary) << manifest;
    {
      Json project = Json::parse(netsmith::readTextFile(path.toStdString()));
      project["data"]["train"] = {{"format", "csv"}, {"manifest", "train.csv"}};
      std::ofstream(path.toStdString()) << project.dump(2);
    }
    MainWindow window(m_registries);
    QVERIFY(window.openProject(path, true));
    auto* doctor = showDoctorTab(window);
    doctor->folds()->setValue(2);
    doctor->epochs()->setValue(3);
    QSignalSpy finished(doctor, &netsmith::ui::DoctorPanel::finished);
    QTest::mouseClick(doctor->runButton(), Qt::LeftButton);
    QVERIFY(finished.wait(120000));
    QVERIFY2(doctor->errorText().isEmpty(), qPrintable(doctor->errorText()));

    // Unbalanced (class 0 about three times the others): both evening-outs offered.
    QVERIFY2(doctor->report().balance.imbalanceRatio >= 3,
             qPrintable(QString::number(doctor->report().balance.imbalanceRatio)));
    QVERIFY(doctor->classWeightsButton()->isVisible());
    QVERIFY(doctor->samplerButton()->isVisible());
    QTest::mouseClick(doctor->samplerButton(), Qt::LeftButton);
    QCOMPARE(window.document()->project().train["sampler"], Json("balanced"));
    QVERIFY(!doctor->samplerButton()->isVisible());
    QVERIFY(!doctor->classWeightsButton()->isVisible());
    window.document()->undoStack()->undo();
    QVERIFY(!window.document()->project().train.contains("sampler"));
    QVERIFY(doctor->samplerButton()->isVisible());

    // Relabel the first flagged sample as suggested.
    const auto& issues = doctor->report().labelIssues;
    QVERIFY(!issues.empty());
    auto* gallery = doctor->labelIssues();
    QTest::mouseClick(gallery->viewport(), Qt::LeftButton, {},
                      gallery->visualItemRect(gallery->item(0)).center());
    QVERIFY2(doctor->relabelButton()->isEnabled(), qPrintable(doctor->relabelButton()->toolTip()));
    const auto& issue = issues[0];
    const QString file = QDir(QString::fromStdString(dir.path().string()))
                             .relativeFilePath(QString::fromStdString(issue.sample.item));
    const std::string row = file.toStdString() + "," + std::to_string(issue.sample.label) + "\n";
    const std::string relabelled =
        file.toStdString() + "," + std::to_string(issue.suggested) + "\n";
    QVERIFY2(manifest.find(row) != std::string::npos, row.c_str());
    QTest::keyClick(gallery, Qt::Key_R, Qt::ControlModifier);
    std::string after = manifest;
    after.replace(after.find(row), row.size(), relabelled);
    QCOMPARE(netsmith::readTextFile(dir.file("train.csv")), after);
    QVERIFY(!doctor->relabelButton()->isEnabled());
    window.document()->undoStack()->undo();
    QCOMPARE(netsmith::readTextFile(dir.file("train.csv")), manifest);
    QVERIFY(doctor->relabelButton()->isEnabled());  // the label is back: it can be done again
    window.document()->undoStack()->redo();
    QVERIFY(!doctor->relabelButton()->isEnabled());
    QCOMPARE(netsmith::readTextFile(dir.file("train.csv")), after);
    if (const QString shots = qEnvironmentVariable("NETSMITH_SCREENSHOT_DIR"); !shots.isEmpty()) {
      QTest::qWait(100);
      window.grab().save(shots + QStringLiteral("/data-doctor-relabel.png"));
    }
  }

  // The Data page's source fields come from core's format descriptions: choosing a format with
  // the keyboard names its keys beside the fields (IDX's second key on a second row, shown only
  // for IDX), and what is typed lands in the project under that format's keys.
  // normalize "explicit" from its drop-down shows mean and std fields; figures typed in reach
  // the project; a count that fits no channel count, or a std of 0, is refused with its reason
  // and the project keeps what it had; one undo step each.
  void explicitNormalizationIsTypedIntoItsFields() {
    netsmith::testutil::TempDir dir;
    const QString path = QString::fromStdString(netsmith::testutil::writeTrainProject(dir));
    MainWindow window(m_registries);
    showOnDataPage(window, path);
    if (QTest::currentTestFailed()) return;
    auto* page = window.pages()->dataPage();
    auto* mode = page->findChild<QComboBox*>(QStringLiteral("normalizeMode"));
    auto* mean = page->findChild<QLineEdit*>(QStringLiteral("normalizeMean"));
    auto* stdev = page->findChild<QLineEdit*>(QStringLiteral("normalizeStd"));
    QVERIFY(mode && mean && stdev);
    const auto& data = [&]() -> const Json& { return window.document()->project().data; };
    // The project's own figures, then "auto": no figures to type.
    QVERIFY(mean->isVisibleTo(page));
    QCOMPARE(mean->text(), QStringLiteral("0.3"));
    netsmith::uitest::chooseItem(mode, mode->findText(QStringLiteral("auto")));
    QCOMPARE(data()["normalize"], Json("auto"));
    QVERIFY(!mean->isVisibleTo(page) && !stdev->isVisibleTo(page));
    netsmith::uitest::chooseItem(mode, mode->findText(QStringLiteral("explicit")));
    QCOMPARE(mode->currentText(), QStringLiteral("explicit"));
    QVERIFY(mean->isVisibleTo(page) && stdev->isVisibleTo(page));
    // The scan's figures when the page has them, else the identity: one figure per channel
    // (the model input has 1), shown in the fields.
    const Json chosen = data()["normalize"];
    QVERIFY2(chosen.is_object() && chosen["mean"].size() == 1 && chosen["std"].size() == 1 &&
                 chosen["std"][0].get<double>() > 0,
             chosen.dump().c_str());
    QCOMPARE(mean->text(), QString::number(chosen["mean"][0].get<double>(), 'g', 6));
    QCOMPARE(stdev->text(), QString::number(chosen["std"][0].get<double>(), 'g', 6));
    netsmith::uitest::typeInto(mean, QStringLiteral("0.286"));
    netsmith::uitest::typeInto(stdev, QStringLiteral("0.353"));
    QCOMPARE(data()["normalize"], Json::parse(R"({"mean": [0.286], "std": [0.353]})"));
    const int steps = window.document()->undoStack()->count();
    // Two figures for one channel, then a std of 0: refused, each with its reason.
    netsmith::uitest::typeInto(mean, QStringLiteral("0.5, 0.5"));
    QVERIFY2(mean->toolTip().contains(QStringLiteral("one per channel")),
             qPrintable(mean->toolTip()));
    netsmith::uitest::typeInto(stdev, QStringLiteral("0"));
    QVERIFY2(stdev->toolTip().contains(QStringLiteral("above 0")), qPrintable(stdev->toolTip()));
    QCOMPARE(data()["normalize"], Json::parse(R"({"mean": [0.286], "std": [0.353]})"));
    QCOMPARE(window.document()->undoStack()->count(), steps);
    window.document()->undoStack()->undo();
    QCOMPARE(data()["normalize"], chosen);
    QCOMPARE(mean->text(), QString::number(chosen["mean"][0].get<double>(), 'g', 6));
  }

  void dataPageSourceFieldsFollowTheFormatDescriptions() {
    netsmith::testutil::TempDir dir;
    const QString path = QString::fromStdString(netsmith::testutil::writeTrainProject(dir));
    MainWindow window(m_registries);
    QVERIFY(window.openProject(path, true));
    window.show();
    window.pages()->showPage(ProjectPages::DataPage);
    auto* page = window.pages()->dataPage();
    auto* format = page->findChild<QComboBox*>(QStringLiteral("testFormat"));
    auto* first = page->findChild<QLineEdit*>(QStringLiteral("testPath"));
    auto* second = page->findChild<QLineEdit*>(QStringLiteral("testLabels"));
    QVERIFY(format && first && second);
    // "(none)" and one entry per format, in the description's order.
    QCOMPARE(format->count(), int(netsmith::data::sourceFormats().size()) + 1);
    format->setFocus();
    QTest::keyClick(format, Qt::Key_Home);  // (none): the test source is removed
    QVERIFY(!window.document()->project().data.contains("test"));
    for (const auto& def : netsmith::data::sourceFormats()) {
      QTest::keyClick(format, Qt::Key_Down);
      QCOMPARE(format->currentData().toString().toStdString(), def.name);
      const Json src = window.document()->project().data["test"];
      QCOMPARE(src["format"], Json(def.name));
      QCOMPARE(page->findChild<QLabel*>(QStringLiteral("testPathLabel"))->text().toStdString(),
               def.fields[0].key);
      QVERIFY2(first->toolTip().toStdString() == def.fields[0].help, qPrintable(first->toolTip()));
      QCOMPARE(second->isVisibleTo(page), def.fields.size() > 1);
      first->setFocus();
      first->selectAll();
      QTest::keyClicks(first, QStringLiteral("a.bin, b.bin"));
      QTest::keyClick(first, Qt::Key_Return);
      const Json written = window.document()->project().data["test"][def.fields[0].key];
      if (def.fields[0].kind == netsmith::data::SourceField::Kind::FileList)
        QCOMPARE(written, Json::array({"a.bin", "b.bin"}));
      else
        QCOMPARE(written, Json("a.bin, b.bin"));
      if (def.fields.size() > 1) {
        second->setFocus();
        second->selectAll();
        QTest::keyClicks(second, QStringLiteral("labels.gz"));
        QTest::keyClick(second, Qt::Key_Return);
        QCOMPARE(window.document()->project().data["test"][def.fields[1].key], Json("labels.gz"));
      }
      format->setFocus();
    }
    window.grab().save(QDir::tempPath() + QStringLiteral("/netsmith-data-formats.png"));
  }

  // The Data page's class list: names typed over where the project names the classes (IDX),
  // refused when empty or taken, with a word about earlier checkpoints; an order moved where
  // the data names them (COCO); colours typed for masks; read-only for class folders.
  void classesAreNamedOrderedAndColouredWhereTheDataLetsThem() {
    netsmith::testutil::TempDir dir;
    const QString path = QString::fromStdString(netsmith::testutil::writeTrainProject(dir));
    MainWindow window(m_registries);
    showOnDataPage(window, path);
    if (QTest::currentTestFailed()) return;
    auto* editor = window.pages()->dataPage()->classEditor();
    auto* table = editor->table();
    const auto data = [&]() -> Json { return window.document()->project().data; };
    const auto typeName = [&](int row, int column, const QString& text) {
      table->scrollToItem(table->item(row, column));
      const QRect cell = table->visualItemRect(table->item(row, column));
      QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, cell.center());
      QTest::mouseDClick(table->viewport(), Qt::LeftButton, {}, cell.center());
      QPointer<QLineEdit> field;
      const auto openEditor = [&] {
        for (auto* e : table->findChildren<QLineEdit*>())
          if (e->isVisible()) field = e;
        return !field.isNull();
      };
      QTRY_VERIFY(openEditor());
      QTest::keyClick(field, Qt::Key_A, Qt::ControlModifier);
      QTest::keyClicks(field, text);
      QTest::keyClick(field, Qt::Key_Return);
      QTRY_VERIFY(field.isNull() || !field->isVisible());  // committed (queued) and closed
      QApplication::processEvents();                       // and applied
    };
    QVERIFY(editor->isVisibleTo(window.pages()->dataPage()));
    for (QWidget* w = editor->parentWidget(); w; w = w->parentWidget())
      if (auto* scroll = qobject_cast<QScrollArea*>(w)) {
        scroll->ensureWidgetVisible(editor);
        break;
      }
    // The data scanned first: its histogram names the classes as they were.
    auto* page = window.pages()->dataPage();
    QSignalSpy scanned(page, &netsmith::ui::DataPage::scanned);
    QTest::mouseClick(page->findChild<QPushButton*>(QStringLiteral("dataScan")), Qt::LeftButton);
    QVERIFY(scanned.wait(60000));
    QVERIFY(page->result().ok);
    const auto tick = [page](int c) {
      const auto ticker =
          qSharedPointerDynamicCast<QCPAxisTickerText>(page->histogram()->xAxis->ticker());
      return ticker ? ticker->ticks().value(c) : QString();
    };
    QCOMPARE(tick(1), QStringLiteral("top-right"));
    QCOMPARE(table->rowCount(), 4);
    QCOMPARE(table->item(1, 0)->text(), QStringLiteral("top-right"));
    QVERIFY(table->item(1, 0)->flags() & Qt::ItemIsEditable);
    QVERIFY(!editor->upButton()->isVisibleTo(editor));
    QVERIFY(table->isColumnHidden(1));  // colours are for masks
    typeName(1, 0, QStringLiteral("upper right"));
    QCOMPARE(data()["classes"],
             Json::parse(R"(["top-left", "upper right", "bottom-left", "bottom-right"])"));
    QVERIFY(!editor->warning()->isVisibleTo(editor));  // no run has a checkpoint yet
    QCOMPARE(table->item(1, 0)->text(), QStringLiteral("upper right"));
    // The scan's histogram follows the rename, its counts kept, with no scan again.
    QCOMPARE(tick(1), QStringLiteral("upper right"));
    QCOMPARE(scanned.count(), 1);
    QCOMPARE(page->result().classes[1], QStringLiteral("upper right"));
    // A name another class has, then none: refused, each saying why; nothing written.
    const int steps = window.document()->undoStack()->count();
    typeName(2, 0, QStringLiteral("top-left"));
    QVERIFY2(editor->warning()->text().contains(QStringLiteral("already names another class")),
             qPrintable(editor->warning()->text()));
    typeName(2, 0, QStringLiteral("   "));
    QVERIFY2(editor->warning()->text().contains(QStringLiteral("needs a name")),
             qPrintable(editor->warning()->text()));
    QCOMPARE(window.document()->undoStack()->count(), steps);
    QCOMPARE(table->item(2, 0)->text(), QStringLiteral("bottom-left"));
    // A run of this project with a checkpoint: a rename says the checkpoint keeps the old names.
    const QString run =
        QFileInfo(path).absolutePath() + QStringLiteral("/runs/blobs-20261201-101010");
    QVERIFY(QDir().mkpath(run + QStringLiteral("/checkpoints")));
    QFile(run + QStringLiteral("/metrics.csv")).open(QIODevice::WriteOnly);
    QFile(run + QStringLiteral("/checkpoints/last.safetensors")).open(QIODevice::WriteOnly);
    typeName(3, 0, QStringLiteral("lower right"));
    QCOMPARE(data()["classes"][3], Json("lower right"));
    QVERIFY(editor->warning()->isVisibleTo(editor));
    QVERIFY2(editor->warning()->text().startsWith(QStringLiteral("1 run of this project")),
             qPrintable(editor->warning()->text()));
    const QString shots = qEnvironmentVariable("NETSMITH_SCREENSHOT_DIR");
    for (QWidget* w = editor->parentWidget(); w; w = w->parentWidget())
      if (auto* scroll = qobject_cast<QScrollArea*>(w)) {
        scroll->ensureWidgetVisible(editor->warning());
        break;
      }
    for (const char* theme : {"dark", "light"}) {  // the screenshots for the guide
      window.findChild<QAction*>(QStringLiteral("actionTheme_") + QLatin1String(theme))->trigger();
      QTest::qWait(50);
      if (!shots.isEmpty())
        QVERIFY(window.grab().save(shots + QStringLiteral("/class-editor-") + QLatin1String(theme) +
                                   QStringLiteral(".png")));
    }
    QVERIFY(editor->warning()->isVisibleTo(editor));
    window.document()->undoStack()->undo();  // the edit it spoke of is gone, and so is it
    QCOMPARE(table->item(3, 0)->text(), QStringLiteral("bottom-right"));
    QVERIFY(!editor->warning()->isVisibleTo(editor));

    // COCO names its categories: the project orders them (Alt+Down and the arrows).
    Json coco = data();
    coco["train"] = Json{{"format", "coco"}, {"annotations", "a.json"}, {"images", "images"}};
    coco.erase("test");
    coco["classes"] = Json::array({"car", "bus", "bike"});
    window.document()->editSection(QStringLiteral("data"), coco, QStringLiteral("coco data"));
    QVERIFY(editor->upButton()->isVisibleTo(editor) && editor->downButton()->isVisibleTo(editor));
    QVERIFY(!(table->item(0, 0)->flags() & Qt::ItemIsEditable));
    QTest::mouseClick(table->viewport(), Qt::LeftButton, {},
                      table->visualItemRect(table->item(0, 0)).center());
    QVERIFY(!editor->upButton()->isEnabled() && editor->downButton()->isEnabled());
    QTest::mouseClick(editor->downButton(), Qt::LeftButton);
    QCOMPARE(data()["classes"], Json::parse(R"(["bus", "car", "bike"])"));
    QCOMPARE(table->currentRow(), 1);
    QTest::keyClick(table, Qt::Key_Down, Qt::AltModifier);
    QCOMPARE(data()["classes"], Json::parse(R"(["bus", "bike", "car"])"));
    QVERIFY(!editor->downButton()->isEnabled());
    QTest::mouseClick(editor->upButton(), Qt::LeftButton);
    QCOMPARE(data()["classes"], Json::parse(R"(["bus", "car", "bike"])"));

    // Masks: the project names the values and gives each a colour, typed as #rrggbb.
    Json masks = data();
    masks["train"] = Json{{"format", "mask_folders"}, {"images", "i"}, {"masks", "m"}};
    masks["classes"] = Json::array({"background", "road"});
    window.document()->editSection(QStringLiteral("data"), masks, QStringLiteral("mask data"));
    QVERIFY(!table->isColumnHidden(1));
    const QString background = table->item(0, 1)->text();
    QVERIFY2(QColor::isValidColorName(background), qPrintable(background));
    typeName(1, 1, QStringLiteral("#00FF00"));
    QCOMPARE(data()["colors"], Json::array({background.toStdString(), "#00ff00"}));
    typeName(1, 1, QStringLiteral("green"));
    QVERIFY2(editor->warning()->text().contains(QStringLiteral("not a colour")),
             qPrintable(editor->warning()->text()));
    QCOMPARE(data()["colors"][1], Json("#00ff00"));
    typeName(1, 0, QStringLiteral("lane"));
    QCOMPARE(data()["classes"], Json::parse(R"(["background", "lane"])"));

    // Class folders name their classes: listed as they are, with where to rename them.
    const QString root = QString::fromStdString(dir.file("folder"));
    QVERIFY(writeCatsAndDogs(root, 3, 12));
    Json folders = data();
    folders["train"] = Json{{"format", "image_folder"}, {"root", root.toStdString()}};
    folders.erase("classes");
    folders.erase("colors");
    window.document()->editSection(QStringLiteral("data"), folders, QStringLiteral("folders"));
    QCOMPARE(table->rowCount(), 0);
    QVERIFY2(editor->note()->text().contains(QStringLiteral("Scan the data")),
             qPrintable(editor->note()->text()));
    QTRY_VERIFY_WITH_TIMEOUT(!page->isScanning(), 30000);  // a COCO reorder's scan ended
    scanned.clear();
    QTest::mouseClick(
        window.pages()->dataPage()->findChild<QPushButton*>(QStringLiteral("dataScan")),
        Qt::LeftButton);
    QVERIFY(scanned.wait(30000));
    QCOMPARE(editor->classes(), (QStringList{QStringLiteral("cats"), QStringLiteral("dogs")}));
    QVERIFY(!(table->item(0, 0)->flags() & Qt::ItemIsEditable));
    QVERIFY2(editor->note()->text().contains(QStringLiteral("rename a folder")),
             qPrintable(editor->note()->text()));
    QVERIFY(!data().contains("classes"));
  }

  // A corrupt file in an image folder shows on the Data page as skipped, with its reason.
  void dataPageListsACorruptFileAsSkipped() {
    netsmith::testutil::TempDir dir;
    const QString path = QString::fromStdString(netsmith::testutil::writeTrainProject(dir));
    const QString root = QString::fromStdString(dir.file("folder"));
    QVERIFY(writeCatsAndDogs(root, 6, 20));
    QFile corrupt(root + "/cats/corrupt.png");
    QVERIFY(corrupt.open(QIODevice::WriteOnly));
    corrupt.write("this is not a PNG file at all");
    corrupt.close();

    MainWindow window(m_registries);
    QVERIFY(window.openProject(path, true));
    auto* page = window.pages()->dataPage();
    page->setSource(QStringLiteral("train"), QStringLiteral("image_folder"), QStringLiteral("root"),
                    root);
    QCOMPARE(window.document()->project().data["train"]["root"], Json(root.toStdString()));
    Json data = window.document()->project().data;  // the folders name the classes; no test split
    data.erase("classes");
    data.erase("test");
    window.document()->editSection(QStringLiteral("data"), data, QStringLiteral("folder data"));
    QSignalSpy scanned(page, &netsmith::ui::DataPage::scanned);
    page->scan();
    QVERIFY(scanned.wait(30000));
    QVERIFY2(page->result().ok, qPrintable(page->result().error));
    // 13 files listed; the corrupt one fails to decode and is not counted, whichever split the
    // random split put it in (the class counts agree).
    QCOMPARE(page->result().train + page->result().validation, 12);
    qint64 counted = 0;
    for (auto c : page->result().trainCounts + page->result().validationCounts)
      counted += c;
    QCOMPARE(counted, 12);
    QCOMPARE(page->skippedList()->count(), 1);
    const QString item = page->skippedList()->item(0)->text();
    QVERIFY2(item.contains(QStringLiteral("corrupt.png")), qPrintable(item));
    QVERIFY2(item.section(QStringLiteral(": "), 1).size() > 3, qPrintable(item));  // a reason
  }

 private:
  const netsmith::RegistriesPtr m_registries = netsmith::Registries::builtins();
  const netsmith::ops::OpRegistry& m_registry = m_registries->ops;
};

QTEST_MAIN(FormsTest)
#include "forms_test.moc"
