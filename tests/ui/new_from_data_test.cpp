// A user's own data to an exported model, in the studio and by input events only: the test writes
// images (and YOLO label lines), never a project file. File > New from data (Ctrl+Shift+N), the
// data path typed, the proposal's fields changed by typing, Create clicked; then a short
// training (F5), the Evaluation page's figure and File > Export > ONNX with its check.
#include <qcustomplot.h>
#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTextStream>
#include <QToolButton>
#include <QTreeWidget>
#include <QtTest>

#include "doctor/doctor_panel.h"
#include "evaluation/classification_view.h"
#include "evaluation/evaluation_page.h"
#include "forms/data_page.h"
#include "forms/training_page.h"
#include "input_driver.h"
#include "monitor/dashboard.h"
#include "monitor/experiments_page.h"
#include "registries/registries.h"
#include "session/project_document.h"
#include "session/trainer_session.h"
#include "shell/example_data_box.h"
#include "shell/export_controller.h"
#include "shell/main_window.h"
#include "shell/new_from_data_dialog.h"
#include "shell/project_pages.h"
#include "shell/run_controller.h"
#include "shell/start_page.h"
#include "ui_test_support.h"
#include "util/schema_form.h"

using netsmith::ui::ExportController;
using netsmith::ui::MainWindow;
using netsmith::ui::NewFromDataDialog;
using netsmith::uitest::action;
using netsmith::uitest::settle;
using netsmith::uitest::typeInto;

namespace {

/// `count` images of `size` x `size` for each class folder under `root`: a bright square whose
/// place says the class, on a dark ground.
void writeClassFolders(const QString& root, const QStringList& classes, int count, int size) {
  for (int c = 0; c < classes.size(); ++c) {
    QVERIFY(QDir(root).mkpath(classes[c]));
    for (int i = 0; i < count; ++i) {
      QImage image(size, size, QImage::Format_RGB888);
      image.fill(QColor(20 + i, 30, 40));
      const int x = (c * size / classes.size()) % (size - 8);
      for (int y = 4; y < 12; ++y)
        for (int dx = 0; dx < 8; ++dx)
          image.setPixelColor(x + dx, y + (i % 3), QColor(230, 200 + c * 5, 90));
      QVERIFY(image.save(QDir(root).filePath(classes[c] + QStringLiteral("/%1.png").arg(i))));
    }
  }
}

/// A YOLO set (images/ and labels/, no names file): image i holds one box of class i % 2.
void writeYoloSet(const QString& root, int count, int size) {
  QVERIFY(QDir(root).mkpath(QStringLiteral("images")));
  QVERIFY(QDir(root).mkpath(QStringLiteral("labels")));
  for (int i = 0; i < count; ++i) {
    QImage image(size, size, QImage::Format_Grayscale8);
    image.fill(QColor(10, 10, 10));
    const int cls = i % 2, side = cls ? 20 : 12, x0 = 4 + (i * 5) % 20, y0 = 6 + (i * 3) % 20;
    for (int y = y0; y < y0 + side; ++y)
      for (int x = x0; x < x0 + side; ++x)
        image.setPixelColor(x, y, QColor(240, 240, 240));
    const QString stem = QStringLiteral("im%1").arg(i);
    QVERIFY(
        image.save(QDir(root).filePath(QStringLiteral("images/") + stem + QStringLiteral(".png"))));
    QFile label(QDir(root).filePath(QStringLiteral("labels/") + stem + QStringLiteral(".txt")));
    QVERIFY(label.open(QIODevice::WriteOnly));
    QTextStream(&label) << cls << ' ' << (x0 + side / 2.0) / size << ' ' << (y0 + side / 2.0) / size
                        << ' ' << double(side) / size << ' ' << double(side) / size << '\n';
  }
}

/// Opens File > New from data with its shortcut and types the data path into it.
NewFromDataDialog* openWithData(MainWindow& window, const QString& data) {
  window.activateWindow();
  if (!QTest::qWaitForWindowActive(&window)) return nullptr;
  QTest::keyClick(&window, Qt::Key_N, Qt::ControlModifier | Qt::ShiftModifier);
  NewFromDataDialog* dialog = nullptr;
  if (!QTest::qWaitFor(
          [&] {
            dialog = window.findChild<NewFromDataDialog*>();
            return dialog && dialog->isVisible();
          },
          5000))
    return nullptr;
  if (!QTest::qWaitForWindowActive(dialog)) return nullptr;
  QSignalSpy scanned(dialog, &NewFromDataDialog::scanned);
  typeInto(dialog->dataEdit(), data, Qt::Key_Return);
  if (scanned.isEmpty() && !scanned.wait(60000)) {
    qWarning("no scan: %s", qPrintable(dialog->statusLabel()->text()));
    return nullptr;
  }
  return dialog;
}

/// The Training page's epochs field set by typing, then F5, and the run's end.
void trainFor(MainWindow& window, int epochs) {
  window.pages()->showPage(netsmith::ui::ProjectPages::TrainingPage);
  window.activateWindow();  // the dialog that had the keyboard is gone
  QVERIFY(QTest::qWaitForWindowActive(&window));
  settle();
  auto* page = window.pages()->trainingPage();
  auto* field = qobject_cast<QSpinBox*>(
      page->form(QStringLiteral("basics"))->field(QStringLiteral("epochs")));
  QVERIFY(field && field->isVisible());
  typeInto(field, QString::number(epochs));
  QCOMPARE(window.document()->project().train["epochs"].get<int>(), epochs);
  QSignalSpy finished(window.session(), &netsmith::ui::TrainerSession::finished);
  QTest::keyClick(&window, Qt::Key_F5);
  QVERIFY(finished.wait(120000));
  QVERIFY2(window.bannerText().isEmpty(), qPrintable(window.bannerText()));
}

/// File > Export > ONNX, its check passed and the file written.
void exportOnnx(MainWindow& window) {
  QSignalSpy exported(window.exports(), &ExportController::exportFinished);
  action(window, "actionExport_onnx")->trigger();
  QVERIFY(exported.wait(120000));
  QVERIFY2(exported[0][0].toBool(), qPrintable(exported[0][1].toString()));
  const QString onnx =
      QFileInfo(window.runs()->currentCheckpoint())
          .dir()
          .filePath(QStringLiteral("../exports/%1.onnx")
                        .arg(QFileInfo(window.runs()->currentCheckpoint()).baseName()));
  QVERIFY2(QFileInfo::exists(onnx), qPrintable(onnx));
  for (auto* dialog : window.findChildren<QDialog*>())
    if (dialog->isVisible()) dialog->close();
}

void shoot(QWidget* widget, const QString& name) {
  const QString shots = qEnvironmentVariable("NETSMITH_SCREENSHOT_DIR");
  if (shots.isEmpty()) return;
  QTest::qWait(100);
  QVERIFY(widget->grab().save(shots + QLatin1Char('/') + name));
}

}  // namespace

class NewFromDataTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("NetsmithTests"));
    QCoreApplication::setApplicationName(QStringLiteral("netsmith_ui_new_from_data_tests"));
  }
  void init() { QSettings().clear(); }

  // Five classes of 48x48 colour images: recognised, the input made 32x32 by typing, created,
  // trained, evaluated and exported.
  void classFoldersToAnExportedClassifier() {
    QTemporaryDir tmp;
    const QString data = tmp.filePath(QStringLiteral("shapes"));
    const QStringList classes{QStringLiteral("circle"), QStringLiteral("cross"),
                              QStringLiteral("ring"), QStringLiteral("square"),
                              QStringLiteral("star")};
    writeClassFolders(data, classes, 8, 48);
    MainWindow window(m_registries);
    window.resize(1280, 720);
    window.show();
    auto* dialog = openWithData(window, data);
    QVERIFY(dialog);
    QVERIFY2(dialog->hasProposal(), qPrintable(dialog->statusLabel()->text()));
    const QString found =
        dialog->findChild<QPlainTextEdit*>(QStringLiteral("newFromDataFound"))->toPlainText();
    QVERIFY2(found.contains(QStringLiteral("40 training images")), qPrintable(found));
    QVERIFY2(found.contains(QStringLiteral("48x48")), qPrintable(found));
    QCOMPARE(dialog->channelsBox()->value(), 3);
    QCOMPARE(dialog->heightBox()->value(), 48);
    // 30 images to train: the template's batch of 128 halved to the least, 8 (4 steps an epoch).
    QVERIFY(dialog->batchBox()->isEnabledTo(dialog));
    QCOMPARE(dialog->batchBox()->value(), 8);
    QCOMPARE(dialog->classList()->count(), 5);
    QCOMPARE(dialog->classList()->item(4)->text(), QStringLiteral("star"));
    QCOMPARE(dialog->projectEdit()->text(), tmp.filePath(QStringLiteral("shapes.netsmith.json")));
    QVERIFY(netsmith::uitest::shootThemes(window, dialog, QStringLiteral("new-from-data")));
    typeInto(dialog->heightBox(), QStringLiteral("32"));
    typeInto(dialog->widthBox(), QStringLiteral("32"));
    typeInto(dialog->validationBox(), QStringLiteral("25"));
    typeInto(dialog->batchBox(), QStringLiteral("10"));
    QVERIFY2(dialog->createButton()->isEnabled(),
             qPrintable(dialog->findChild<QLabel*>(QStringLiteral("newFromDataProblems"))->text()));
    QTest::mouseClick(dialog->createButton(), Qt::LeftButton);
    QTRY_VERIFY(!window.findChild<NewFromDataDialog*>());  // closed and gone

    const auto& doc = *window.document();
    QCOMPARE(doc.filePath(), tmp.filePath(QStringLiteral("shapes.netsmith.json")));
    QVERIFY(QFileInfo::exists(doc.filePath()));
    QCOMPARE(doc.project().model.input.height, 32);
    QCOMPARE(doc.project().model.input.width, 32);
    QCOMPARE(doc.project().data["validation"]["fraction"].get<double>(), 0.25);
    QCOMPARE(doc.project().train["batch_size"].get<int>(), 10);
    QVERIFY2(doc.problems().empty(),
             doc.problems().empty() ? "" : doc.problems()[0].toString().c_str());
    QCOMPARE(doc.analysis().outputShape, (netsmith::Shape{5}));

    trainFor(window, 2);
    auto* evaluation = window.pages()->evaluationPage();
    QTRY_VERIFY_WITH_TIMEOUT(!evaluation->summaryText().isEmpty(), 60000);
    // No test split: the evaluation reads the validation split, a quarter of the 40 images.
    QVERIFY2(evaluation->summaryText().startsWith(QStringLiteral("validation accuracy")) &&
                 evaluation->summaryText().contains(QStringLiteral(" on 10 images")),
             qPrintable(evaluation->summaryText()));
    exportOnnx(window);
  }

  // A YOLO set without a names file: the detector proposed, its classes named class 0 and
  // class 1 until the user types names, trained, evaluated and exported.
  void aYoloSetToAnExportedDetector() {
    QTemporaryDir tmp;
    const QString data = tmp.filePath(QStringLiteral("boxes"));
    writeYoloSet(data, 24, 48);
    MainWindow window(m_registries);
    window.resize(1280, 720);
    window.show();
    action(window, "actionTheme_dark")->trigger();  // this one in the dark theme
    auto* dialog = openWithData(window, data);
    QVERIFY(dialog);
    QVERIFY2(dialog->hasProposal(), qPrintable(dialog->statusLabel()->text()));
    QVERIFY(dialog->statusLabel()->text().contains(QStringLiteral("yolo")));
    QCOMPARE(dialog->channelsBox()->value(), 1);
    QCOMPARE(dialog->classList()->count(), 2);
    QCOMPARE(dialog->classList()->item(0)->text(), QStringLiteral("class 0"));
    // Renaming a class: double-click its name, type, Enter.
    auto* list = dialog->classList();
    const QRect first = list->visualItemRect(list->item(0));
    QTest::mouseClick(list->viewport(), Qt::LeftButton, {}, first.center());
    QTest::mouseDClick(list->viewport(), Qt::LeftButton, {}, first.center());
    QLineEdit* editor = nullptr;
    QTRY_VERIFY((editor = list->findChild<QLineEdit*>()) != nullptr);
    QTest::keyClick(editor, Qt::Key_A, Qt::ControlModifier);
    QTest::keyClicks(editor, QStringLiteral("small square"));
    QTest::keyClick(editor, Qt::Key_Return);
    settle();
    QCOMPARE(list->item(0)->text(), QStringLiteral("small square"));
    shoot(dialog, QStringLiteral("new-from-data-yolo.png"));
    QVERIFY(dialog->createButton()->isEnabled());
    QTest::mouseClick(dialog->createButton(), Qt::LeftButton);
    QTRY_VERIFY(!window.findChild<NewFromDataDialog*>());

    const auto& doc = *window.document();
    QCOMPARE(doc.project().task, std::string("detection"));
    QCOMPARE(doc.project().data["classes"][0].get<std::string>(), std::string("small square"));
    QVERIFY2(doc.problems().empty(),
             doc.problems().empty() ? "" : doc.problems()[0].toString().c_str());
    trainFor(window, 1);
    auto* evaluation = window.pages()->evaluationPage();
    QTRY_VERIFY_WITH_TIMEOUT(!evaluation->summaryText().isEmpty(), 60000);
    QVERIFY2(evaluation->summaryText().contains(QStringLiteral("map")),
             qPrintable(evaluation->summaryText()));
    exportOnnx(window);
    shoot(&window, QStringLiteral("new-from-data-yolo-trained.png"));
    action(window, "actionTheme_light")->trigger();

    // What this detector project left on the pages: a task view, a mAP column, box sizes on
    // the Data page, a quick-run limit, the way to its evaluation.
    auto* pages = window.pages();
    auto* epochs = window.dashboard()->findChild<QTreeWidget*>(QStringLiteral("epochTable"));
    QVERIFY(epochs && epochs->topLevelItemCount() == 1);
    QVERIFY2(epochs->headerItem()->text(4) != QStringLiteral("Val acc"),
             qPrintable(epochs->headerItem()->text(4)));
    QVERIFY(evaluation->taskView());
    pages->showPage(netsmith::ui::ProjectPages::DataPage);
    auto* dataPage = pages->dataPage();
    auto* dataTabs = dataPage->findChild<QTabWidget*>(QStringLiteral("dataTabs"));
    QSignalSpy dataScanned(dataPage, &netsmith::ui::DataPage::scanned);
    QTest::mouseClick(dataPage->findChild<QPushButton*>(QStringLiteral("dataScan")),
                      Qt::LeftButton);
    QVERIFY(dataScanned.wait(60000));
    QVERIFY(dataTabs->isTabVisible(dataTabs->indexOf(dataPage->cooccurrence())));
    pages->showPage(netsmith::ui::ProjectPages::TrainingPage);
    auto* quickTrain = pages->trainingPage()->findChild<QSpinBox*>(QStringLiteral("quickRunTrain"));
    QVERIFY(quickTrain && quickTrain->isVisible());
    window.activateWindow();  // the export's report had the keyboard
    QVERIFY(QTest::qWaitForWindowActive(&window));
    typeInto(quickTrain, QStringLiteral("12"));
    QCOMPARE(quickTrain->value(), 12);
    auto* showEvaluation = window.findChild<QToolButton*>(QStringLiteral("showEvaluation"));
    QVERIFY(showEvaluation && showEvaluation->isVisible());

    // The doctor on this project (Data > Doctor: two folds of one epoch, Run doctor), so that
    // its report is there to leak.
    pages->showPage(netsmith::ui::ProjectPages::DataPage);
    const int doctorTab = dataTabs->indexOf(dataPage->doctor());
    QTest::mouseClick(dataTabs->tabBar(), Qt::LeftButton, {},
                      dataTabs->tabBar()->tabRect(doctorTab).center());
    QTRY_VERIFY(dataPage->doctor()->isVisible());
    auto* doctor = dataPage->doctor();
    // Label checks are for one class per sample: off, and said so, for a detector.
    QVERIFY(!doctor->checkLabels()->isEnabled() && !doctor->checkLabels()->isChecked());
    typeInto(doctor->findChild<QSpinBox*>(QStringLiteral("doctorFolds")), QStringLiteral("2"));
    typeInto(doctor->findChild<QSpinBox*>(QStringLiteral("doctorEpochs")), QStringLiteral("1"));
    auto* runDoctor = doctor->findChild<QPushButton*>(QStringLiteral("runDoctor"));
    QTest::mouseClick(runDoctor, Qt::LeftButton);
    auto* doctorLine = doctor->findChild<QLabel*>(QStringLiteral("doctorStatus"));
    QTRY_VERIFY_WITH_TIMEOUT(runDoctor->isEnabled(), 120000);
    QVERIFY2(doctorLine->text().startsWith(QStringLiteral("Report:")),
             qPrintable(doctorLine->text()));
    const QString doctorSummary =
        doctor->findChild<QLabel*>(QStringLiteral("doctorSummary"))->text();
    QVERIFY(!doctorSummary.isEmpty());

    // A sweep of one trial over the learning rate (what the field's "Sweep this" menu item
    // does), run from the Experiments page: its trial and Apply best are there to leak.
    pages->trainingPage()->form(QStringLiteral("optimizer"))->requestSweep(QStringLiteral("lr"));
    pages->showPage(netsmith::ui::ProjectPages::ExperimentsPage);
    auto* experiments = pages->experimentsPage();
    experiments->setCliProgram(QStringLiteral(NETSMITH_CLI));
    typeInto(experiments->findChild<QSpinBox*>(QStringLiteral("sweepTrials")), QStringLiteral("1"));
    QSignalSpy sweepEnded(experiments, &netsmith::ui::ExperimentsPage::sweepEnded);
    auto* runSweep = experiments->findChild<QPushButton*>(QStringLiteral("sweepRun"));
    QVERIFY2(runSweep->isEnabled(),
             qPrintable(experiments->findChild<QLabel*>(QStringLiteral("sweepProblems"))->text()));
    QTest::mouseClick(runSweep, Qt::LeftButton);
    QVERIFY(sweepEnded.wait(120000));
    QVERIFY2(sweepEnded[0][0].toBool(),
             qPrintable(experiments->findChild<QLabel*>(QStringLiteral("sweepStatus"))->text()));
    auto* trialsTable = experiments->findChild<QTableWidget*>(QStringLiteral("sweepTrialsTable"));
    QCOMPARE(trialsTable->rowCount(), 1);
    QVERIFY(window.findChild<QPushButton*>(QStringLiteral("sweepApplyBest"))->isEnabled());

    window.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&window));
    QTest::keyClick(&window, Qt::Key_S, Qt::ControlModifier);  // the typed epochs kept
    QVERIFY(!window.document()->isModified());
    // Another project, made from other data through the same dialog: nothing of the first.
    const QString other = tmp.filePath(QStringLiteral("shapes"));
    writeClassFolders(other, {QStringLiteral("a"), QStringLiteral("b")}, 6, 32);
    dialog = openWithData(window, other);
    QVERIFY(dialog && dialog->hasProposal());
    QTest::mouseClick(dialog->createButton(), Qt::LeftButton);
    QTRY_VERIFY(!window.findChild<NewFromDataDialog*>());
    QCOMPARE(window.document()->project().task, std::string("classification"));
    QCOMPARE(epochs->topLevelItemCount(), 0);
    QCOMPARE(epochs->headerItem()->text(2), QStringLiteral("Train acc"));
    QCOMPARE(epochs->headerItem()->text(4), QStringLiteral("Val acc"));
    QVERIFY(!evaluation->taskView());
    QVERIFY(evaluation->summaryText().isEmpty());
    QVERIFY(!dataTabs->isTabVisible(dataTabs->indexOf(dataPage->cooccurrence())));
    QCOMPARE(dataTabs->tabText(dataTabs->indexOf(dataPage->histogram())),
             QStringLiteral("Class histogram"));
    QCOMPARE(quickTrain->value(), 0);
    QVERIFY(!showEvaluation->isVisible());
    QVERIFY(!window.findChild<QPushButton*>(QStringLiteral("sweepApplyBest"))->isEnabled());
    QCOMPARE(trialsTable->rowCount(), 0);
    QVERIFY(doctor->findChild<QLabel*>(QStringLiteral("doctorSummary"))->text().isEmpty());
    QVERIFY(doctor->checkLabels()->isEnabled() && doctor->checkLabels()->isChecked());
    const QString doctorStatus =
        dataPage->doctor()->findChild<QLabel*>(QStringLiteral("doctorStatus"))->text();
    QVERIFY2(doctorStatus.startsWith(QStringLiteral("Finds likely label errors")) &&
                 doctorStatus.contains(QStringLiteral("shapes")),
             qPrintable(doctorStatus));

    // File > Close project (Ctrl+W): the start page, and no project on any page.
    window.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&window));
    QTest::keyClick(&window, Qt::Key_W, Qt::ControlModifier);
    QTRY_VERIFY(window.startPage()->isVisible());
    QVERIFY(window.document()->filePath().isEmpty());
    QVERIFY(!pages->isVisible());
    QVERIFY(!action(window, "actionCloseProject")->isEnabled());
    QCOMPARE(window.windowTitle(), QStringLiteral("Netsmith"));
  }

  // Ten classes at 1280x720: the confusion matrix shows whole cells (all ten columns, or a
  // scroll bar and the line that says so), and another run laid over the dashboard leaves its
  // plots their room.
  void tenClassesFitA1280x720Window() {
    QTemporaryDir tmp;
    const QString data = tmp.filePath(QStringLiteral("garments"));
    writeClassFolders(data,
                      {QStringLiteral("tshirt_top"), QStringLiteral("trouser"),
                       QStringLiteral("pullover"), QStringLiteral("dress"), QStringLiteral("coat"),
                       QStringLiteral("sandal"), QStringLiteral("shirt"), QStringLiteral("sneaker"),
                       QStringLiteral("bag"), QStringLiteral("ankle_boot")},
                      4, 24);
    MainWindow window(m_registries);
    window.resize(1280, 720);
    window.show();
    auto* dialog = openWithData(window, data);
    QVERIFY(dialog && dialog->hasProposal());
    QTest::mouseClick(dialog->createButton(), Qt::LeftButton);
    QTRY_VERIFY(!window.findChild<NewFromDataDialog*>());
    auto* evaluation = window.pages()->evaluationPage();
    trainFor(window, 1);
    QTRY_VERIFY_WITH_TIMEOUT(!evaluation->summaryText().isEmpty(), 60000);
    QSignalSpy evaluated(evaluation, &netsmith::ui::EvaluationPage::evaluated);
    trainFor(window, 2);  // a second run, to lay the first over
    QVERIFY(evaluated.wait(60000));

    window.pages()->showPage(netsmith::ui::ProjectPages::EvalPage);
    QTest::qWait(100);  // the queued fits
    auto* view = qobject_cast<netsmith::ui::ClassificationView*>(evaluation->taskView());
    QVERIFY(view);
    auto* matrix = view->confusion();
    QCOMPARE(matrix->columnCount(), 10);
    const bool scrolls = matrix->horizontalScrollBar()->maximum() > 0;
    QCOMPARE(evaluation->findChild<QLabel*>(QStringLiteral("confusionScrollHint"))->isVisible(),
             scrolls);
    const int cell = QFontMetrics(matrix->font()).horizontalAdvance(QStringLiteral("100.0%"));
    for (int c = 0; c < 10; ++c)
      QVERIFY2(matrix->columnWidth(c) >= cell,
               qPrintable(QStringLiteral("column %1: %2 px for %3 px of text")
                              .arg(c)
                              .arg(matrix->columnWidth(c))
                              .arg(cell)));
    QVERIFY2(matrix->viewport()->width() >= 5 * cell,
             qPrintable(QStringLiteral("%1 px").arg(matrix->viewport()->width())));
    QVERIFY(netsmith::uitest::shootThemes(window, &window, QStringLiteral("evaluation-confusion")));

    auto* pages = window.pages();
    pages->showPage(netsmith::ui::ProjectPages::RunsPage);
    QTRY_COMPARE(pages->runs().size(), 2);
    pages->selectRun(1);
    pages->overlaySelectedRun();
    pages->showPage(netsmith::ui::ProjectPages::DashboardPage);
    QTest::qWait(100);
    auto* loss = window.dashboard()->chart(QStringLiteral("loss"));
    loss->replot();
    QVERIFY(loss->graphCount() >= 2);
    // The plot keeps the chart's width, its legend below it or folded.
    QVERIFY2(loss->axisRect()->width() * 3 > loss->width() * 2,
             qPrintable(QStringLiteral("plot %1 of %2 px wide")
                            .arg(loss->axisRect()->width())
                            .arg(loss->width())));
    QVERIFY2(loss->axisRect()->height() * 2 > loss->height(),
             qPrintable(QStringLiteral("plot %1 of %2 px")
                            .arg(loss->axisRect()->height())
                            .arg(loss->height())));
    QVERIFY(netsmith::uitest::shootThemes(window, &window, QStringLiteral("dashboard-overlay")));
  }

  // The start page's Example data: rotations, 20 training images typed in, made with a
  // progress bar into a new folder; New from data then opens on it and proposes a regression.
  void exampleDataFromTheStartPage() {
    QTemporaryDir tmp;
    MainWindow window(m_registries);
    window.resize(1280, 720);
    window.show();
    QVERIFY(QTest::qWaitForWindowActive(&window));
    auto* box = window.startPage()->exampleData();
    QTRY_VERIFY(box->isVisible());
    auto* sets = box->findChild<QComboBox*>(QStringLiteral("exampleDataSet"));
    QStringList names;
    for (int i = 0; i < sets->count(); ++i)
      names << sets->itemText(i);
    QVERIFY2(names.contains(QStringLiteral("mosaics")) && names.contains(QStringLiteral("scenes")),
             qPrintable(names.join(QLatin1Char(' '))));
    sets->setFocus();
    QTest::keyClicks(sets, QStringLiteral("rotations"));  // typing picks the item
    QCOMPARE(sets->currentText(), QStringLiteral("rotations"));
    typeInto(box->trainingImages(), QStringLiteral("20"));
    QCOMPARE(box->trainingImages()->value(), 20);
    auto* progress = box->findChild<QProgressBar*>(QStringLiteral("exampleDataProgress"));
    QSignalSpy moved(progress, &QProgressBar::valueChanged);
    QSignalSpy made(box, &netsmith::ui::ExampleDataBox::made);
    const QString folder = tmp.filePath(QStringLiteral("rotations"));
    box->make(QStringLiteral("rotations"), folder);  // what Make... does once a folder is chosen
    QVERIFY(progress->isVisible());
    QVERIFY(made.wait(60000));
    QCOMPARE(made[0][0].toString(), folder);
    QVERIFY(moved.count() >= 1);
    QCOMPARE(progress->value(), progress->maximum());
    QFile train(QDir(folder).filePath(QStringLiteral("train.csv")));
    QVERIFY(train.open(QIODevice::ReadOnly));
    QCOMPARE(train.readAll().count('\n'), 21);  // a header and 20 images
    QVERIFY(!progress->isVisible());
    QVERIFY(box->findChild<QLabel*>(QStringLiteral("exampleDataStatus"))
                ->text()
                .startsWith(QStringLiteral("Written to")));
    NewFromDataDialog* dialog = nullptr;
    QTRY_VERIFY((dialog = window.findChild<NewFromDataDialog*>()) && dialog->isVisible());
    QTRY_VERIFY_WITH_TIMEOUT(dialog->hasProposal(), 30000);
    QVERIFY2(dialog->statusLabel()->text().contains(QStringLiteral("regression")),
             qPrintable(dialog->statusLabel()->text()));
    dialog->reject();
  }

  // What cannot be used says why and creates nothing.
  void dataThatCannotBeUsedSaysWhy() {
    QTemporaryDir tmp;
    QVERIFY(QDir(tmp.path()).mkpath(QStringLiteral("empty")));
    MainWindow window(m_registries);
    window.show();
    auto* dialog = openWithData(window, tmp.filePath(QStringLiteral("empty")));
    QVERIFY(dialog);
    QVERIFY(!dialog->hasProposal());
    QVERIFY2(
        dialog->statusLabel()->text().contains(QStringLiteral("no data this program recognises")),
        qPrintable(dialog->statusLabel()->text()));
    QVERIFY(!dialog->createButton()->isEnabled());
    QTest::keyClick(dialog, Qt::Key_Escape);
    QTRY_VERIFY(!window.findChild<NewFromDataDialog*>());
    QVERIFY(QDir(tmp.path()).entryList(QDir::Files).isEmpty());
  }

 private:
  const netsmith::RegistriesPtr m_registries = netsmith::Registries::builtins();
  const netsmith::ops::OpRegistry& m_ops = m_registries->ops;
};

QTEST_MAIN(NewFromDataTest)
#include "new_from_data_test.moc"
