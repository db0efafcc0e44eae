// The Evaluation page of each task without the class view, as a user gets there: a project of
// small generated data opened in the studio, trained with the Start action, evaluated by the
// page on its test split. What the views show is checked against the run's figures and against
// the predictions `netsmith-cli eval --predictions` writes (an independent path: the task's
// prediction writer, read back here from its files).
#include <QAbstractSlider>
#include <QComboBox>
#include <QDialog>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QLabel>
#include <QListWidget>
#include <QMimeData>
#include <QProcess>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSlider>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTreeWidget>
#include <QUndoStack>
#include <QUrl>
#include <QtTest>

#include <qcustomplot.h>
#include <opencv2/imgcodecs.hpp>

#include <array>
#include <cmath>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "common/json.h"
#include "evaluation/detection_view.h"
#include "evaluation/evaluation_page.h"
#include "evaluation/multilabel_view.h"
#include "evaluation/predict_page.h"
#include "evaluation/regression_view.h"
#include "evaluation/sample_dialog.h"
#include "evaluation/segmentation_view.h"
#include "forms/augment_page.h"
#include "forms/data_page.h"
#include "monitor/dashboard.h"
#include "registries/registries.h"
#include "session/project_document.h"
#include "session/trainer_session.h"
#include "shell/export_controller.h"
#include "shell/main_window.h"
#include "shell/project_pages.h"
#include "ui_test_support.h"

using netsmith::Json;
using netsmith::ui::ExportController;
using netsmith::ui::MainWindow;

namespace {

/// 16x16 grey images: a bright 5x5 square at (x, y) on a dark noisy background.
cv::Mat square(std::mt19937& rng, int x, int y, int level = 230) {
  cv::Mat img(16, 16, CV_8UC1);
  std::uniform_int_distribution<int> noise(0, 40);
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 16; ++c)
      img.at<uchar>(r, c) = uchar(noise(rng));
  img(cv::Rect(x, y, 5, 5)).setTo(level);
  return img;
}

Json node(const std::string& id, const std::string& op, Json params, const std::string& input) {
  return Json{{"id", id},
              {"op", op},
              {"params", std::move(params)},
              {"inputs", input.empty() ? Json::array() : Json::array({input})}};
}

/// A small CNN ending in `outputs` numbers (or, `dense`, in `outputs` maps at the input size).
Json model(int outputs, bool dense) {
  Json nodes = Json::array(
      {node("input", "Input", Json::object(), ""),
       node("conv1", "Conv2d", {{"out_channels", 8}, {"kernel_size", 3}, {"padding", 1}}, "input"),
       node("relu1", "ReLU", Json::object(), "conv1")});
  if (dense) {
    nodes.push_back(
        node("out", "Conv2d", {{"out_channels", outputs}, {"kernel_size", 1}}, "relu1"));
  } else {
    nodes.push_back(node("pool", "MaxPool2d", {{"kernel_size", 4}}, "relu1"));
    nodes.push_back(node("flat", "Flatten", Json::object(), "pool"));
    nodes.push_back(node("out", "Linear", {{"out_features", outputs}}, "flat"));
  }
  return Json{{"input", {{"channels", 1}, {"height", 16}, {"width", 16}}}, {"nodes", nodes}};
}

std::string writeProject(const QTemporaryDir& dir, const std::string& task, Json data,
                         const Json& net, const std::string& loss) {
  data["on_error"] = "fail";
  // No validation split: the Data page's training counts are then the files' own, counted here.
  data["validation"] = Json{{"fraction", 0.0}};
  const Json project{{"format", "netsmith-project"},
                     {"version", 1},
                     {"name", task + "_views"},
                     {"task", task},
                     {"data", data},
                     {"augment", Json::array()},
                     {"train",
                      {{"epochs", 3},
                       {"batch_size", 16},
                       {"seed", 1},
                       {"threads", 1},
                       {"workers", 1},
                       {"device", "cpu"},
                       {"optimizer", {{"type", "adam"}, {"lr", 0.01}}},
                       {"loss", loss}}},
                     {"model", net}};
  const std::string path =
      dir.filePath(QString::fromStdString(task + ".netsmith.json")).toStdString();
  std::ofstream(path) << project.dump(2);
  return path;
}

/// The rows of a CSV file of plain cells (what the prediction writers write), header first.
std::vector<std::vector<std::string>> readCsv(const QString& path) {
  std::ifstream in(path.toStdString());
  std::vector<std::vector<std::string>> rows;
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream s(line);
    std::string cell;
    while (std::getline(s, cell, ','))
      cells.push_back(cell);
    rows.push_back(cells);
  }
  return rows;
}

/// `netsmith-cli eval CHECKPOINT --predictions OUT`; fails the test when it fails.
bool writePredictions(const QString& checkpoint, const QString& out) {
  QProcess cli;
  cli.start(QStringLiteral(NETSMITH_CLI),
            {QStringLiteral("eval"), checkpoint, QStringLiteral("--predictions"), out});
  if (!cli.waitForFinished(120000) || cli.exitCode() != 0) {
    qWarning("%s", cli.readAllStandardError().constData());
    return false;
  }
  return true;
}

/// `netsmith-cli export CHECKPOINT --onnx OUT --nms` (its decoder and NonMaxSuppression too, as
/// a user ships a detector); fails the test when it fails.
bool exportOnnxWithCli(const QString& checkpoint, const QString& out,
                       const QStringList& more = {}) {
  QProcess cli;
  cli.start(
      QStringLiteral(NETSMITH_CLI),
      QStringList{QStringLiteral("export"), checkpoint, QStringLiteral("--onnx"), out} + more);
  if (!cli.waitForFinished(300000) || cli.exitCode() != 0) {
    qWarning("%s%s", cli.readAllStandardOutput().constData(),
             cli.readAllStandardError().constData());
    return false;
  }
  return true;
}

}  // namespace

class EvaluationViewsTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("NetsmithTests"));
    QCoreApplication::setApplicationName(QStringLiteral("netsmith_ui_evaluation_views_tests"));
    QSettings().clear();
  }

  // Two labels, "top" (a square in the top half) and "bottom" (one in the bottom half), any
  // subset of them per image.
  void multiLabelTableCurveAndThreshold() {
    QTemporaryDir dir;
    std::mt19937 rng(5);
    std::int64_t tops = 0, bottoms = 0, both = 0, none = 0;
    for (const char* split : {"train", "test"}) {
      std::ofstream csv(dir.filePath(QStringLiteral("%1.csv").arg(split)).toStdString());
      csv << "path,labels\n";
      const int n = std::string(split) == "train" ? 96 : 32;
      for (int i = 0; i < n; ++i) {
        const bool top = i % 4 == 1 || i % 4 == 3, bottom = i % 4 >= 2;
        cv::Mat img = square(rng, 10, 10, 40);  // a faint square: the empty case
        if (top) img(cv::Rect(2, 1, 5, 5)).setTo(230);
        if (bottom) img(cv::Rect(9, 10, 5, 5)).setTo(230);
        const std::string name = std::string(split) + "_" + std::to_string(i) + ".png";
        cv::imwrite(dir.filePath(QString::fromStdString(name)).toStdString(), img);
        csv << name << "," << (top ? "top" : "") << (top && bottom ? ";" : "")
            << (bottom ? "bottom" : "") << "\n";
        if (std::string(split) == "train") {
          tops += top, bottoms += bottom, both += top && bottom, none += !top && !bottom;
        }
      }
    }
    const auto project =
        writeProject(dir, "multilabel",
                     Json{{"train", {{"format", "multilabel_csv"}, {"manifest", "train.csv"}}},
                          {"test", {{"format", "multilabel_csv"}, {"manifest", "test.csv"}}},
                          {"classes", {"top", "bottom"}}},
                     model(2, false), "bce");
    MainWindow window(m_registries);
    window.resize(1280, 720);
    window.show();
    // The Data page: images per label and the co-occurrence, as the manifest has them.
    auto* data = openAndScan(window, project);
    QVERIFY(data);
    QVERIFY(data->result().targets);
    const Json& t = data->result().targets->json;
    QCOMPARE(t["train_positives"]["top"].get<std::int64_t>(), std::int64_t(tops));
    QCOMPARE(t["train_positives"]["bottom"].get<std::int64_t>(), std::int64_t(bottoms));
    QCOMPARE(t["labels_per_image"].get<std::vector<std::int64_t>>(),
             (std::vector<std::int64_t>{none, tops + bottoms - 2 * both, both}));
    QCOMPARE(data->cooccurrence()->rowCount(), 2);
    QCOMPARE(data->cooccurrence()->item(0, 1)->text(), QString::number(both));
    QCOMPARE(data->cooccurrence()->item(1, 1)->text(), QString::number(bottoms));
    auto* bars = qobject_cast<QCPBars*>(data->histogram()->plottable(0));
    QVERIFY(bars && bars->data()->size() == 2);
    QCOMPARE(bars->data()->at(1)->value, double(bottoms));
    QCOMPARE(data->sampleGrid()->count(), 32);
    QCOMPARE(data->sampleGrid()->item(3)->text(), QStringLiteral("top, bottom"));
    screenshot(window, "data_multilabel.png");
    // A quarter held out for validation, typed into the Data page: the run tunes each label's
    // threshold on it.
    auto* fraction = data->findChild<QDoubleSpinBox*>(QStringLiteral("validationFraction"));
    QVERIFY(fraction);
    fraction->setFocus();
    fraction->selectAll();
    QTest::keyClicks(fraction, QStringLiteral("0.25"));
    QTest::keyClick(fraction, Qt::Key_Return);
    QTRY_COMPARE(window.document()->project().data["validation"]["fraction"].get<double>(), 0.25);
    auto* page = trainAndEvaluate(window);
    QVERIFY(page);
    auto* view = qobject_cast<netsmith::ui::MultiLabelView*>(page->taskView());
    QVERIFY(view && view->isVisible());
    const auto& e = page->result();
    QCOMPARE(int(e.samples.size()), 32);
    QVERIFY2(page->summaryText().startsWith(QStringLiteral("test f1_macro ")),
             qPrintable(page->summaryText()));
    // The table says what the run's figures say.
    QCOMPARE(view->table()->rowCount(), 2);
    QCOMPARE(view->table()->item(1, 0)->text(), QStringLiteral("bottom"));
    for (int k = 0; k < 2; ++k) {
      QCOMPARE(view->table()->item(k, 1)->text(),
               QString::number(e.metrics.perClass.at("ap")[std::size_t(k)], 'f', 4));
      QCOMPARE(view->table()->item(k, 3)->text(),
               QString::number(e.metrics.perClass.at("threshold")[std::size_t(k)], 'f', 3));
    }

    // The predictions file the CLI writes, read back: each label's counts at any threshold.
    const QString predictions = dir.filePath(QStringLiteral("predictions.csv"));
    QVERIFY(writePredictions(QString::fromStdString(e.checkpoint), predictions));
    const auto rows = readCsv(predictions);
    QCOMPARE(int(rows.size()), 33);
    QCOMPARE(rows[0], (std::vector<std::string>{"path", "true:top", "true:bottom", "prob:top",
                                                "prob:bottom"}));
    const auto countsAt = [&rows](int label, double threshold) {
      netsmith::ui::MultiLabelView::Counts c;
      for (std::size_t r = 1; r < rows.size(); ++r) {
        const bool positive = rows[r][std::size_t(1 + label)] == "1";
        const bool predicted = std::stof(rows[r][std::size_t(3 + label)]) >= float(threshold);
        c.tp += predicted && positive;
        c.fp += predicted && !positive;
        c.fn += !predicted && positive;
      }
      return c;
    };
    // The user picks "bottom" in the table and drags the threshold with the keyboard.
    QTest::mouseClick(view->table()->viewport(), Qt::LeftButton, {},
                      view->table()->visualItemRect(view->table()->item(1, 0)).center());
    QCOMPARE(view->currentLabel(), 1);
    // The run's tuned threshold, exactly (a score, not a slider step), and at it the counts
    // give the run's F1 for the label.
    const double tuned = e.metrics.perClass.at("threshold")[1];
    QVERIFY2(tuned != 0.5, "the threshold was not tuned");
    QCOMPARE(view->threshold(), tuned);
    QVERIFY(view->countsLabel()->text().contains(QStringLiteral("the run's threshold")));
    auto c = view->counts();
    auto expected = countsAt(1, tuned);
    QCOMPARE(c.tp, expected.tp);
    QCOMPARE(c.fp, expected.fp);
    QCOMPARE(c.fn, expected.fn);
    QVERIFY(c.tp > 0);
    QVERIFY(std::abs(2.0 * double(c.tp) / double(2 * c.tp + c.fp + c.fn) -
                     e.metrics.perClass.at("f1")[1]) < 1e-9);
    // The curve: a (recall, precision) point after each distinct score, highest first, worked
    // out here from the file.
    {
      std::vector<std::pair<float, bool>> scored;
      for (std::size_t r = 1; r < rows.size(); ++r)
        scored.emplace_back(std::stof(rows[r][4]), rows[r][2] == "1");
      std::sort(scored.begin(), scored.end(),
                [](const auto& a, const auto& b) { return a.first > b.first; });
      double tp = 0, fp = 0, positives = 0;
      for (const auto& s : scored)
        positives += s.second;
      std::vector<std::pair<double, double>> points;
      for (std::size_t i = 0; i < scored.size(); ++i) {
        (scored[i].second ? tp : fp) += 1;
        if (i + 1 < scored.size() && scored[i + 1].first == scored[i].first) continue;
        points.emplace_back(tp / positives, tp / (tp + fp));
      }
      auto* curve = view->curve()->graph(0);
      QCOMPARE(curve->dataCount(), int(points.size()));
      for (int i = 0; i < curve->dataCount(); ++i) {
        QVERIFY(std::abs(curve->data()->at(i)->key - points[std::size_t(i)].first) < 1e-12);
        QVERIFY(std::abs(curve->data()->at(i)->value - points[std::size_t(i)].second) < 1e-12);
      }
    }
    view->slider()->setFocus();
    view->setThreshold(0.5);
    for (int i = 0; i < 10; ++i)
      QTest::keyClick(view->slider(), Qt::Key_PageUp);  // 50 steps each: to 1.0
    QCOMPARE(view->threshold(), 1.0);
    view->setThreshold(0.3);
    QTest::keyClick(view->slider(), Qt::Key_Right);  // one step of 5: 0.305
    QCOMPARE(view->threshold(), 0.305);
    c = view->counts();
    expected = countsAt(1, 0.305);
    QCOMPARE(c.tp, expected.tp);
    QCOMPARE(c.fp, expected.fp);
    QCOMPARE(c.fn, expected.fn);
    QVERIFY(view->countsLabel()->text().contains(QStringLiteral("TP %1,").arg(c.tp)));
    // The PR curve has a point per distinct score, the operating point drawn on it.
    QVERIFY(view->curve()->graphCount() == 2 && view->curve()->graph(0)->dataCount() >= 2);
    QCOMPARE(view->curve()->graph(1)->dataCount(), c.tp + c.fp > 0 ? 1 : 0);
    // The dashboard drew the monitored figure (val_map, the task's headline) for each epoch,
    // its chart and the epoch table's column named after it, the values the run's own.
    QCOMPARE(window.dashboard()->pointCount(QStringLiteral("val_accuracy")), 3);
    auto* figureChart = window.findChild<QCustomPlot*>(QStringLiteral("accuracyChart"));
    QVERIFY(figureChart);
    auto* title = qobject_cast<QCPTextElement*>(figureChart->plotLayout()->element(0, 0));
    QVERIFY(title);
    QCOMPARE(title->text(), QStringLiteral("map"));
    auto* epochs = window.findChild<QTreeWidget*>(QStringLiteral("epochTable"));
    QVERIFY(epochs);
    QCOMPARE(epochs->headerItem()->text(4), QStringLiteral("Val map"));
    // The gallery: highest loss first; a click opens the sample with its labels' maps.
    QCOMPARE(view->gallery()->count(), 32);
    double previous = 1e9;
    for (int i = 0; i < view->gallery()->count(); ++i) {
      const qint64 position = view->gallery()->item(i)->data(Qt::UserRole).toLongLong();
      const auto& s = e.samples.at(std::size_t(position));
      QCOMPARE(s.position, position);
      QVERIFY(s.loss <= previous);
      previous = s.loss;
    }
    auto* dialog = qobject_cast<netsmith::ui::SampleDialog*>(openFirst(window, view->gallery()));
    QVERIFY(dialog);
    QVERIFY2(dialog->errorText().isEmpty(), qPrintable(dialog->errorText()));
    auto* labels = dialog->findChild<QComboBox*>(QStringLiteral("gradCamLabel"));
    QVERIFY(labels && labels->count() == 2);
    const int other = labels->itemData(1).toInt();
    dialog->mapOfLabel(other);
    QCOMPARE(dialog->predictedMap().targetClass, std::int64_t(other));
    QVERIFY(!dialog->overlay().isNull());
    dialog->close();
    shootAndExport(window, "evaluation_multilabel.png");
  }

  // One target, "level": the square's brightness / 255.
  void regressionScatterResidualsAndWorst() {
    QTemporaryDir dir;
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> level(60, 250), place(0, 11);
    std::vector<float> trainLevels;
    for (const char* split : {"train", "test"}) {
      std::ofstream csv(dir.filePath(QStringLiteral("%1.csv").arg(split)).toStdString());
      csv << "path,level\n";
      const int n = std::string(split) == "train" ? 96 : 24;
      for (int i = 0; i < n; ++i) {
        const int l = level(rng);
        const std::string name = std::string(split) + "_" + std::to_string(i) + ".png";
        cv::imwrite(dir.filePath(QString::fromStdString(name)).toStdString(),
                    square(rng, place(rng), place(rng), l));
        csv << name << "," << double(l) / 255.0 << "\n";
        if (std::string(split) == "train") trainLevels.push_back(float(double(l) / 255.0));
      }
    }
    const auto project =
        writeProject(dir, "regression",
                     Json{{"train", {{"format", "regression_csv"}, {"manifest", "train.csv"}}},
                          {"test", {{"format", "regression_csv"}, {"manifest", "test.csv"}}},
                          {"targets", {"level"}}},
                     model(1, false), "mse");
    MainWindow window(m_registries);
    window.resize(1280, 720);
    window.show();
    // The Data page: the target's values and their histogram, every training image counted.
    auto* data = openAndScan(window, project);
    QVERIFY(data);
    // The range and mean of the training targets, as written here.
    QVERIFY(data->result().targets);
    const Json& summary = data->result().targets->json["level"];
    std::sort(trainLevels.begin(), trainLevels.end());
    double sum = 0;
    for (const float v : trainLevels)
      sum += v;
    QVERIFY(std::abs(summary["min"].get<double>() - trainLevels.front()) < 1e-6);
    QVERIFY(std::abs(summary["max"].get<double>() - trainLevels.back()) < 1e-6);
    QVERIFY(std::abs(summary["mean"].get<double>() - sum / double(trainLevels.size())) < 1e-5);
    QCOMPARE(data->histogram()->graphCount(), 1);
    double counted = 0;
    for (int i = 0; i < data->histogram()->graph(0)->dataCount(); ++i)
      counted += data->histogram()->graph(0)->data()->at(i)->value;
    QCOMPARE(counted, double(trainLevels.size()));
    QVERIFY(data->sampleGrid()->item(0)->text().startsWith(QStringLiteral("level ")));
    screenshot(window, "data_regression.png");
    // The head rule as the user edits: a second target the model has no output for is a
    // problem naming the output node; taking it back clears it.
    QVERIFY(window.document()->problems().empty());
    Json twoTargets = window.document()->project().data;
    twoTargets["targets"] = {"level", "other"};
    window.document()->editSection(QStringLiteral("data"), twoTargets,
                                   QStringLiteral("Set targets"));
    bool named = false;
    for (const auto& problem : window.document()->problems())
      named = named || (problem.message.find("2 targets") != std::string::npos ||
                        problem.message.find("2 outputs") != std::string::npos);
    QVERIFY2(named, window.document()->problems().empty()
                        ? "no problem"
                        : window.document()->problems().front().message.c_str());
    window.document()->undoStack()->undo();  // Edit > Undo
    QTRY_VERIFY(window.document()->problems().empty());
    auto* page = trainAndEvaluate(window);
    QVERIFY(page);
    auto* view = qobject_cast<netsmith::ui::RegressionView*>(page->taskView());
    QVERIFY(view && view->isVisible());
    const auto& e = page->result();
    QCOMPARE(view->table()->item(0, 0)->text(), QStringLiteral("level"));
    QCOMPARE(view->table()->item(0, 1)->text(),
             QString::number(e.metrics.perClass.at("mae")[0], 'g', 5));
    QCOMPARE(view->table()->item(0, 3)->text(),
             QString::number(e.metrics.perClass.at("r2")[0], 'g', 5));
    const QString predictions = dir.filePath(QStringLiteral("predictions.csv"));
    QVERIFY(writePredictions(QString::fromStdString(e.checkpoint), predictions));
    const auto rows = readCsv(predictions);
    QCOMPARE(int(rows.size()), 25);
    QCOMPARE(rows[0], (std::vector<std::string>{"path", "true:level", "pred:level"}));
    // The scatter holds every sample's (true, predicted) as the predictions file has them.
    auto* points = view->scatter()->graph(1);
    QCOMPARE(points->dataCount(), 24);
    std::vector<std::pair<double, double>> drawn, written;
    for (int i = 0; i < points->dataCount(); ++i)
      drawn.emplace_back(points->data()->at(i)->key, points->data()->at(i)->value);
    std::vector<double> residuals;
    for (std::size_t r = 1; r < rows.size(); ++r) {
      written.emplace_back(std::stof(rows[r][1]), std::stof(rows[r][2]));
      residuals.push_back(double(std::stof(rows[r][2])) - double(std::stof(rows[r][1])));
    }
    std::sort(drawn.begin(), drawn.end());
    std::sort(written.begin(), written.end());
    for (std::size_t i = 0; i < drawn.size(); ++i) {
      QVERIFY(std::abs(drawn[i].first - written[i].first) < 1e-6);
      QVERIFY(std::abs(drawn[i].second - written[i].second) < 1e-5);
    }
    // The histogram's bins count the residuals (bins of the view's edges, counted here).
    std::vector<double> counts(netsmith::ui::RegressionView::kBins, 0.0);
    for (double r : residuals) {
      const int b = std::clamp(int((r - view->residualBinStart()) / view->residualBinWidth()), 0,
                               netsmith::ui::RegressionView::kBins - 1);
      counts[std::size_t(b)] += 1;
    }
    QCOMPARE(std::vector<double>(view->residualCounts().begin(), view->residualCounts().end()),
             counts);
    // Largest error first; the first's caption holds its values.
    QCOMPARE(view->worst()->count(), 24);
    double largest = 0;
    for (double r : residuals)
      largest = std::max(largest, std::abs(r));
    const auto& worst =
        e.samples.at(std::size_t(view->worst()->item(0)->data(Qt::UserRole).toLongLong()));
    QVERIFY(std::abs(worst.loss - largest) < 1e-5);
    const QString caption = firstCaption(window, view->worst());
    QVERIFY2(caption.contains(QStringLiteral("level: true")), qPrintable(caption));
    shootAndExport(window, "evaluation_regression.png");
  }

  // Three classes: background 0, "bright" squares 1, "dim" squares 2; a ring of 255 (ignored)
  // around some squares.
  void segmentationTableBarsAndGallery() {
    QTemporaryDir dir;
    std::mt19937 rng(9);
    std::uniform_int_distribution<int> place(0, 11);
    std::vector<std::int64_t> pixels(3, 0);
    std::int64_t ignored = 0;
    for (const char* split : {"train", "test"}) {
      QDir(dir.path()).mkpath(QStringLiteral("%1/images").arg(split));
      QDir(dir.path()).mkpath(QStringLiteral("%1/masks").arg(split));
      const int n = std::string(split) == "train" ? 64 : 16;
      for (int i = 0; i < n; ++i) {
        const int x = place(rng), y = place(rng);
        const bool bright = i % 2 == 0;
        cv::Mat mask(16, 16, CV_8UC1, cv::Scalar(0));
        if (i % 3 == 0)
          mask(cv::Rect(std::max(0, x - 1), std::max(0, y - 1), 7, 7) & cv::Rect(0, 0, 16, 16))
              .setTo(255);
        mask(cv::Rect(x, y, 5, 5)).setTo(bright ? 1 : 2);
        const QString name = QStringLiteral("%1/%2/%3.png").arg(split);
        cv::imwrite(dir.filePath(name.arg(QStringLiteral("images")).arg(i)).toStdString(),
                    square(rng, x, y, bright ? 240 : 130));
        cv::imwrite(dir.filePath(name.arg(QStringLiteral("masks")).arg(i)).toStdString(), mask);
        for (int j = 0; std::string(split) == "train" && j < 256; ++j)
          (mask.data[j] == 255 ? ignored : pixels[mask.data[j]]) += 1;
      }
    }
    const auto project = writeProject(
        dir, "segmentation",
        Json{{"train",
              {{"format", "mask_folders"}, {"images", "train/images"}, {"masks", "train/masks"}}},
             {"test",
              {{"format", "mask_folders"}, {"images", "test/images"}, {"masks", "test/masks"}}},
             {"classes", {"background", "bright", "dim"}},
             {"colors", {"#000000", "#ff0000", "#0000ff"}}},
        model(3, true), "cross_entropy");
    MainWindow window(m_registries);
    window.resize(1280, 720);
    window.show();
    // The Data page: each class's pixels in the training masks, counted here as written.
    auto* data = openAndScan(window, project);
    QVERIFY(data);
    QVERIFY(data->result().targets);
    const Json& counted = data->result().targets->json;
    QCOMPARE(counted["train"]["background"].get<std::int64_t>(), std::int64_t(pixels[0]));
    QCOMPARE(counted["train"]["bright"].get<std::int64_t>(), std::int64_t(pixels[1]));
    QCOMPARE(counted["train"]["dim"].get<std::int64_t>(), std::int64_t(pixels[2]));
    QCOMPARE(counted["ignored"].get<std::int64_t>(), std::int64_t(ignored));
    auto* shares = qobject_cast<QCPBars*>(data->histogram()->plottable(0));
    QVERIFY(shares && shares->data()->size() == 3);
    // Shares of the pixels not ignored, as the figures' pixel_share counts them.
    QVERIFY(std::abs(shares->data()->at(2)->value -
                     100.0 * double(pixels[2]) / double(pixels[0] + pixels[1] + pixels[2])) < 1e-9);
    QCOMPARE(data->sampleGrid()->count(), 32);
    screenshot(window, "data_segmentation.png");
    auto* tabs = data->findChild<QTabWidget*>();
    QVERIFY(tabs);
    tabs->setCurrentIndex(1);  // Samples: images with their masks over them
    screenshot(window, "data_segmentation_samples.png");
    tabs->setCurrentIndex(0);
    auto* page = trainAndEvaluate(window);
    QVERIFY(page);
    auto* view = qobject_cast<netsmith::ui::SegmentationView*>(page->taskView());
    QVERIFY(view && view->isVisible());
    const auto& e = page->result();
    QCOMPARE(view->table()->rowCount(), 3);
    for (int c = 0; c < 3; ++c) {
      const double iou = e.metrics.perClass.at("iou")[std::size_t(c)];
      QCOMPARE(view->table()->item(c, 1)->text(),
               std::isfinite(iou) ? QString::number(100 * iou, 'f', 2) + QLatin1Char('%')
                                  : QStringLiteral("-"));
    }
    // Each sample's IoU, worked out here from the mask files the CLI writes.
    const QString out = dir.filePath(QStringLiteral("predicted"));
    QVERIFY(writePredictions(QString::fromStdString(e.checkpoint), out));
    const auto rows = readCsv(out + QStringLiteral("/predictions.csv"));
    QCOMPARE(int(rows.size()), 17);
    std::vector<double> ious;
    for (std::size_t r = 1; r < rows.size(); ++r) {
      const cv::Mat p =
          cv::imread((out + QLatin1Char('/') + QString::fromStdString(rows[r][1])).toStdString(),
                     cv::IMREAD_UNCHANGED);
      const cv::Mat t =
          cv::imread((out + QLatin1Char('/') + QString::fromStdString(rows[r][2])).toStdString(),
                     cv::IMREAD_UNCHANGED);
      double sum = 0;
      int present = 0;
      for (int c = 0; c < 3; ++c) {
        double inter = 0, uni = 0;
        for (int i = 0; i < 256; ++i) {
          const int tv = t.data[i], pv = p.data[i];
          if (tv == 255) continue;
          inter += tv == c && pv == c;
          uni += tv == c || pv == c;
        }
        if (uni > 0) sum += inter / uni, ++present;
      }
      ious.push_back(present ? sum / present : std::nan(""));
    }
    QCOMPARE(view->gallery()->count(), 16);
    double previous = -1;
    for (int i = 0; i < view->gallery()->count(); ++i) {
      const auto position = view->gallery()->item(i)->data(Qt::UserRole).toLongLong();
      const double iou = ious.at(std::size_t(position));
      QVERIFY2(std::abs(e.samples.at(std::size_t(position)).loss - iou) < 1e-9,
               qPrintable(QStringLiteral("sample %1: %2 vs %3")
                              .arg(position)
                              .arg(e.samples.at(std::size_t(position)).loss)
                              .arg(iou)));
      QVERIFY(iou >= previous);  // lowest IoU first
      previous = iou;
      QVERIFY(view->gallery()->item(i)->text().contains(QString::number(iou, 'f', 3)));
    }
    // The other order, chosen by the user.
    view->order()->setFocus();
    QTest::keyClick(view->order(), Qt::Key_Down);
    const auto top = view->gallery()->item(0)->data(Qt::UserRole).toLongLong();
    QCOMPARE(ious.at(std::size_t(top)), *std::max_element(ious.begin(), ious.end()));
    // A tile: image, truth and prediction side by side, the truth's colours the project's.
    const auto& sample = e.samples.at(std::size_t(top));
    const QImage tile = netsmith::ui::SegmentationView::tile(sample, e.colors, 16).toImage();
    QCOMPARE(tile.width(), 3 * 16 + 8);
    int red = 0;
    for (int y = 0; y < 16; ++y)
      for (int x = 20; x < 36; ++x)
        red += qRed(tile.pixel(x, y)) > qBlue(tile.pixel(x, y)) + 60;
    int brightPixels = 0;
    for (auto v : sample.view.trueMask)
      brightPixels += v == 1;
    QCOMPARE(red > 0, brightPixels > 0);
    const QString caption = firstCaption(window, view->gallery());
    QVERIFY2(caption.contains(QStringLiteral("IoU")), qPrintable(caption));
    shootAndExport(window, "evaluation_segmentation.png");

    // The Predict page: each dropped test image's mask is the one eval wrote for it (the
    // images are at the model's size), drawn over it at the opacity slider's strength.
    auto* predict = openPredictPage(window, QString::fromStdString(e.checkpoint));
    QVERIFY(predict);
    QVERIFY(dropAndPredict(predict, {dir.filePath(QStringLiteral("test/images"))}));
    QCOMPARE(predict->imageCount(), 16);
    std::map<QString, QString> maskOf;
    for (std::size_t r = 1; r < rows.size(); ++r)
      maskOf[QFileInfo(QString::fromStdString(rows[r][0])).canonicalFilePath()] =
          out + QLatin1Char('/') + QString::fromStdString(rows[r][1]);
    for (const auto& p : predict->predictions()) {
      const cv::Mat want = cv::imread(
          maskOf.at(QFileInfo(QString::fromStdString(p.path)).canonicalFilePath()).toStdString(),
          cv::IMREAD_UNCHANGED);
      QCOMPARE(p.view.height, want.rows);
      QVERIFY(std::equal(p.view.predictedMask.begin(), p.view.predictedMask.end(),
                         want.begin<std::uint8_t>(), want.end<std::uint8_t>()));
    }
    auto* opacity = predict->findChild<QSlider*>(QStringLiteral("predictOpacity"));
    QVERIFY(opacity && opacity->isVisible());
    const QImage strong = predict->shownPicture().toImage();
    opacity->setFocus();
    for (int i = 0; i < 6; ++i)
      QTest::keyClick(opacity, Qt::Key_PageDown);  // 55% -> 0%: the image alone
    QCOMPARE(opacity->value(), 0);
    const QImage none = predict->shownPicture().toImage();
    const auto& shown = predict->predictions()[std::size_t(
        predict->findChild<QListWidget*>(QStringLiteral("predictImages"))->currentRow())];
    bool masked = false;
    for (auto v : shown.view.predictedMask)
      masked = masked || v != 0;
    QCOMPARE(strong != none, masked);
    for (int i = 0; i < 6; ++i)
      QTest::keyClick(opacity, Qt::Key_PageUp);
    screenshot(window, "predict_segmentation.png");
  }

  // Detection: 32x32 images with one or two squares, "bright" or "dim", their boxes as YOLO
  // labels; a small detector with its head at stride 4.
  void detectionDataAugmentAndEvaluation() {
    QTemporaryDir dir;
    std::mt19937 rng(5);
    std::uniform_int_distribution<int> place(0, 22);
    std::vector<std::int64_t> boxesPerClass(2, 0), imagesByBoxes(3, 0);
    for (const char* split : {"train", "test"}) {
      QDir(dir.path()).mkpath(QStringLiteral("%1/images").arg(split));
      QDir(dir.path()).mkpath(QStringLiteral("%1/labels").arg(split));
      const int n = std::string(split) == "train" ? 64 : 16;
      for (int i = 0; i < n; ++i) {
        cv::Mat img(32, 32, CV_8UC1);
        std::uniform_int_distribution<int> noise(0, 40);
        for (int p = 0; p < 32 * 32; ++p)
          img.data[p] = uchar(noise(rng));
        std::ofstream labels(
            dir.filePath(QStringLiteral("%1/labels/%2.txt").arg(split).arg(i)).toStdString());
        const int objects = 1 + i % 2;
        for (int o = 0; o < objects; ++o) {
          const int cls = (i + o) % 2, x = place(rng), y = place(rng);
          img(cv::Rect(x, y, 9, 9)).setTo(cls == 0 ? 240 : 130);
          // class cx cy w h, normalised
          labels << cls << ' ' << (x + 4.5) / 32 << ' ' << (y + 4.5) / 32 << ' ' << 9.0 / 32 << ' '
                 << 9.0 / 32 << '\n';
          if (std::string(split) == "train") ++boxesPerClass[std::size_t(cls)];
        }
        if (std::string(split) == "train") ++imagesByBoxes[std::size_t(objects)];
        cv::imwrite(
            dir.filePath(QStringLiteral("%1/images/%2.png").arg(split).arg(i)).toStdString(), img);
      }
    }
    Json nodes =
        Json::array({node("input", "Input", Json::object(), ""),
                     node("conv1", "Conv2d",
                          {{"out_channels", 8}, {"kernel_size", 3}, {"padding", 1}}, "input"),
                     node("relu1", "ReLU", Json::object(), "conv1"),
                     node("pool1", "MaxPool2d", {{"kernel_size", 2}}, "relu1"),
                     node("conv2", "Conv2d",
                          {{"out_channels", 16}, {"kernel_size", 3}, {"padding", 1}}, "pool1"),
                     node("relu2", "ReLU", Json::object(), "conv2"),
                     node("pool2", "MaxPool2d", {{"kernel_size", 2}}, "relu2"),
                     node("conv3", "Conv2d",
                          {{"out_channels", 16}, {"kernel_size", 3}, {"padding", 1}}, "pool2"),
                     node("relu3", "ReLU", Json::object(), "conv3"),
                     node("head", "Conv2d", {{"out_channels", 7}, {"kernel_size", 1}}, "relu3")});
    const Json net{{"input", {{"channels", 1}, {"height", 32}, {"width", 32}}}, {"nodes", nodes}};
    auto path = writeProject(
        dir, "detection",
        Json{
            {"train", {{"format", "yolo"}, {"images", "train/images"}, {"labels", "train/labels"}}},
            {"test", {{"format", "yolo"}, {"images", "test/images"}, {"labels", "test/labels"}}},
            {"classes", {"bright", "dim"}},
            {"colors", {"#ff0000", "#0000ff"}}},
        net, "fcos");
    {
      // Flips and resized crops in the augment list: the preview draws the moved boxes.
      auto project = Json::parse(std::ifstream(path));
      project["augment"] = Json::parse(
          R"([{"transform": "HorizontalFlip", "p": 0.5},
              {"transform": "RandomResizedCrop", "size": 32, "scale": [0.6, 1.0]}])");
      project["train"]["epochs"] = 6;
      project["train"]["optimizer"]["lr"] = 0.005;
      std::ofstream(path) << project.dump(2);
    }
    MainWindow window(m_registries);
    window.resize(1280, 720);
    window.show();
    // The Data page: boxes per class and images by their number of boxes, as written here.
    auto* data = openAndScan(window, path);
    QVERIFY(data);
    QVERIFY(data->result().targets);
    const Json& boxes = data->result().targets->json;
    QCOMPARE(boxes["train"].size(), boxesPerClass.size());
    for (std::size_t c = 0; c < boxesPerClass.size(); ++c)
      QCOMPARE(boxes["train"].at(c == 0 ? "bright" : "dim")["boxes"].get<std::int64_t>(),
               std::int64_t(boxesPerClass[c]));
    QCOMPARE(boxes["boxes_per_image"].get<std::vector<std::int64_t>>(),
             (std::vector<std::int64_t>(imagesByBoxes.begin(), imagesByBoxes.end())));
    auto* bars = qobject_cast<QCPBars*>(data->histogram()->plottable(0));
    QVERIFY(bars && bars->data()->size() == 2);
    QCOMPARE(bars->data()->at(1)->value, double(boxesPerClass[1]));
    auto* sizes = data->cooccurrence();
    QCOMPARE(sizes->rowCount(), 3);
    QCOMPARE(sizes->item(0, 1)->text(), QString::number(boxesPerClass[0]));
    // Every box is 9x9: min, median and max alike.
    QCOMPARE(sizes->item(0, 2)->text(), QStringLiteral("9 / 9 / 9"));
    QVERIFY(sizes->item(2, 0)->text().contains(QStringLiteral("32 with 1, 32 with 2")));
    auto* tabs = data->findChild<QTabWidget*>();
    QVERIFY(tabs);
    QCOMPARE(tabs->tabText(tabs->indexOf(sizes)), QStringLiteral("Box sizes"));
    screenshot(window, "data_detection.png");
    tabs->setCurrentIndex(1);  // Samples: images with their boxes
    QCOMPARE(data->sampleGrid()->count(), 32);
    QVERIFY(data->sampleGrid()->item(0)->text().contains(QStringLiteral("bright")) ||
            data->sampleGrid()->item(0)->text().contains(QStringLiteral("dim")));
    screenshot(window, "data_detection_samples.png");
    tabs->setCurrentIndex(0);
    // The Augment page's preview: the boxes' outlines in the classes' colours (the images are
    // grey, so any red or blue pixel is a box).
    auto* augment = window.pages()->augmentPage();
    window.pages()->showPage(netsmith::ui::ProjectPages::AugmentPage);
    QVERIFY(QTest::qWaitFor([augment] { return augment->previewCount() > 0; }, 30000));
    QVERIFY2(augment->previewError().isEmpty(), qPrintable(augment->previewError()));
    const QImage preview = augment->previewImage().convertToFormat(QImage::Format_RGB32);
    int red = 0, blue = 0;
    for (int y = 0; y < preview.height(); ++y)
      for (int x = 0; x < preview.width(); ++x) {
        const QRgb px = preview.pixel(x, y);
        red += qRed(px) > 200 && qGreen(px) < 60 && qBlue(px) < 60;
        blue += qBlue(px) > 200 && qRed(px) < 60 && qGreen(px) < 60;
      }
    QVERIFY2(red > 20 && blue > 20,
             qPrintable(QStringLiteral("%1 red, %2 blue").arg(red).arg(blue)));
    screenshot(window, "augment_detection.png");

    auto* page = trainAndEvaluate(window);
    QVERIFY(page);
    auto* view = qobject_cast<netsmith::ui::DetectionView*>(page->taskView());
    QVERIFY(view && view->isVisible());
    const auto& e = page->result();
    QCOMPARE(view->table()->rowCount(), 2);
    for (int c = 0; c < 2; ++c)
      QCOMPARE(view->table()->item(c, 2)->text(),
               QString::number(e.metrics.perClass.at("ap50")[std::size_t(c)], 'f', 4));
    // The counts at a score, worked out here from the COCO files `eval --predictions` writes:
    // each class's detections from the score, best first per image, take the unmatched true box
    // of their class with the highest IoU >= 0.5.
    const QString out = dir.filePath(QStringLiteral("detections.json"));
    QVERIFY(writePredictions(QString::fromStdString(e.checkpoint), out));
    const Json results = Json::parse(std::ifstream(out.toStdString()));
    const Json truth = Json::parse(
        std::ifstream(dir.filePath(QStringLiteral("detections.truth.json")).toStdString()));
    QCOMPARE(int(truth["images"].size()), 16);
    const auto countsAt = [&](int cls, double threshold) {
      netsmith::ui::DetectionView::Counts c;
      for (const auto& image : truth["images"]) {
        const auto id = image["id"].get<std::int64_t>();
        std::vector<std::array<double, 4>> boxes;
        for (const auto& a : truth["annotations"])
          if (a["image_id"] == id && a["category_id"] == cls + 1)
            boxes.push_back({a["bbox"][0].get<double>(), a["bbox"][1].get<double>(),
                             a["bbox"][2].get<double>(), a["bbox"][3].get<double>()});
        std::vector<std::pair<double, std::array<double, 4>>> found;
        for (const auto& r : results)
          if (r["image_id"] == id && r["category_id"] == cls + 1 &&
              r["score"].get<double>() >= threshold)
            found.push_back({r["score"].get<double>(),
                             {r["bbox"][0].get<double>(), r["bbox"][1].get<double>(),
                              r["bbox"][2].get<double>(), r["bbox"][3].get<double>()}});
        std::stable_sort(found.begin(), found.end(),
                         [](const auto& a, const auto& b) { return a.first > b.first; });
        std::vector<bool> taken(boxes.size(), false);
        for (const auto& [score, d] : found) {
          double best = 0.5;
          int match = -1;
          for (std::size_t t = 0; t < boxes.size(); ++t) {
            const auto& g = boxes[t];
            const double iw =
                std::max(0.0, std::min(d[0] + d[2], g[0] + g[2]) - std::max(d[0], g[0]));
            const double ih =
                std::max(0.0, std::min(d[1] + d[3], g[1] + g[3]) - std::max(d[1], g[1]));
            const double iou = iw * ih / (d[2] * d[3] + g[2] * g[3] - iw * ih);
            if (!taken[t] && iou >= best) best = iou, match = int(t);
          }
          if (match >= 0) {
            taken[std::size_t(match)] = true;
            ++c.tp;
          } else {
            ++c.fp;
          }
        }
        c.fn += std::int64_t(std::count(taken.begin(), taken.end(), false));
      }
      return c;
    };
    view->selectClass(0);
    auto want = countsAt(0, view->threshold());
    QCOMPARE(view->counts().tp, want.tp);
    QCOMPARE(view->counts().fp, want.fp);
    QCOMPARE(view->counts().fn, want.fn);
    // The slider by keyboard: a page down lowers the score by 0.05 (from 0.2, where a model
    // this young has detections both right and wrong).
    view->setThreshold(0.2);
    view->slider()->setFocus();
    QTest::keyClick(view->slider(), Qt::Key_PageDown);
    QVERIFY(std::abs(view->threshold() - 0.15) < 1e-9);
    view->selectClass(1);
    want = countsAt(1, view->threshold());
    QVERIFY(want.tp > 0 && want.fp + want.fn > 0);
    QCOMPARE(view->counts().tp, want.tp);
    QCOMPARE(view->counts().fp, want.fp);
    QCOMPARE(view->counts().fn, want.fn);
    QVERIFY(view->countsLabel()->text().contains(QStringLiteral("TP %1").arg(want.tp)));
    // The curve: its last point is the recall of every detection of the class.
    auto lowest = countsAt(1, 0.0);
    const auto* curve = view->curve()->graph(0);
    QVERIFY(curve->data()->size() > 0);
    QVERIFY(std::abs(curve->data()->at(curve->data()->size() - 1)->key -
                     double(lowest.tp) / double(lowest.tp + lowest.fn)) < 1e-9);
    // The gallery, most errors first at the slider's score.
    QCOMPARE(view->gallery()->count(), 16);
    for (int i = 1; i < view->gallery()->count(); ++i)
      QVERIFY(view->gallery()->item(i - 1)->data(Qt::UserRole + 1).toInt() >=
              view->gallery()->item(i)->data(Qt::UserRole + 1).toInt());
    auto* dialog = openFirst(window, view->gallery());
    QVERIFY(dialog);
    // The caption names the sample's true boxes as the truth file lists them.
    const auto opened = view->gallery()->item(0)->data(Qt::UserRole).toLongLong();
    const QString caption = dialog->findChild<QLabel*>(QStringLiteral("sampleCaption"))->text();
    int named = 0;
    for (const auto& a : truth["annotations"])
      if (a["image_id"] == opened + 1) {
        QVERIFY2(
            caption.contains(QString::fromStdString(
                truth["categories"][a["category_id"].get<int>() - 1]["name"].get<std::string>())),
            qPrintable(caption));
        ++named;
      }
    QVERIFY(named > 0);
    dialog->close();
    // A detector's evaluation has no test-time augmentation to offer: the choice is not shown.
    auto* tta = window.findChild<QComboBox*>(QStringLiteral("evaluationTta"));
    QVERIFY(tta && !tta->isVisible());
    shootAndExport(window, "evaluation_detection.png");

    // The Predict page (Ctrl+9) tries the run's checkpoint on the test images dropped on it:
    // an image's boxes from the confidence slider's score are eval's detections of it from
    // that score, in the image's pixels.
    auto* predict = openPredictPage(window, QString::fromStdString(e.checkpoint));
    QVERIFY(predict);
    QVERIFY(dropAndPredict(predict, {dir.filePath(QStringLiteral("test/images"))}));
    QCOMPARE(predict->imageCount(), 16);
    std::map<std::int64_t, std::string> fileOf;
    for (const auto& image : truth["images"])
      fileOf[image["id"].get<std::int64_t>()] = image["file_name"].get<std::string>();
    auto* list = predict->findChild<QListWidget*>(QStringLiteral("predictImages"));
    auto* confidence = predict->findChild<QSlider*>(QStringLiteral("predictConfidence"));
    QVERIFY(list && confidence);
    const auto checkBoxes = [&](int row) {
      const auto& p = predict->predictions()[std::size_t(row)];
      const std::string file = QFileInfo(QString::fromStdString(p.path)).fileName().toStdString();
      const double from = confidence->value() / 100.0;
      std::vector<std::array<double, 5>> want, got;
      for (const auto& d : results)
        if (fileOf[d["image_id"].get<std::int64_t>()] == file && d["score"].get<double>() >= from)
          want.push_back({d["bbox"][0].get<double>(), d["bbox"][1].get<double>(),
                          d["bbox"][0].get<double>() + d["bbox"][2].get<double>(),
                          d["bbox"][1].get<double>() + d["bbox"][3].get<double>(),
                          d["score"].get<double>()});
      const auto& v = p.view;
      for (std::size_t i = 0; i < v.predictedBoxes.size(); ++i)
        if (v.predictedScores[i] >= from)
          got.push_back({v.predictedBoxes[i].x0, v.predictedBoxes[i].y0, v.predictedBoxes[i].x1,
                         v.predictedBoxes[i].y1, v.predictedScores[i]});
      if (want.size() != got.size()) return false;
      for (std::size_t i = 0; i < want.size(); ++i)
        for (std::size_t k = 0; k < 5; ++k)
          if (std::abs(want[i][k] - got[i][k]) > 1e-3) return false;
      return true;
    };
    for (int row : {0, 5}) {
      QTest::mouseClick(list->viewport(), Qt::LeftButton, {},
                        list->visualItemRect(list->item(row)).center());
      QCOMPARE(list->currentRow(), row);
      QVERIFY(confidence->isVisible());
      QVERIFY(checkBoxes(row));
      // The slider by keyboard: each page up raises the score by 0.10.
      confidence->setFocus();
      QTest::keyClick(confidence, Qt::Key_PageUp);
      QCOMPARE(confidence->value(), 35);
      QVERIFY(checkBoxes(row));
      QVERIFY(!predict->shownCaption().isEmpty());
      QTest::keyClick(confidence, Qt::Key_PageDown);
    }
    QCOMPARE(predict->shownPicture().width(), 400);  // 32 px images shown at 400
    screenshot(window, "predict_detection.png");

    // The same images through the exported file (with its decoder and NonMaxSuppression, as
    // shipped), run in ONNX Runtime: the same boxes as eval's, from the slider's score.
    const QString onnx = dir.filePath(QStringLiteral("detector.onnx"));
    QVERIFY(
        exportOnnxWithCli(QString::fromStdString(e.checkpoint), onnx, {QStringLiteral("--nms")}));
    QSignalSpy again(predict, &netsmith::ui::PredictPage::predicted);
    predict->setModel(onnx);
    QVERIFY(again.wait(120000));
    QVERIFY2(predict->findChild<QLabel*>(QStringLiteral("predictModel"))
                 ->text()
                 .contains(QStringLiteral("ONNX Runtime")),
             qPrintable(predict->findChild<QLabel*>(QStringLiteral("predictModel"))->text()));
    QVERIFY(!predict->findChild<QPushButton*>(QStringLiteral("predictGradCam"))->isVisible());
    for (int row : {0, 5, 11}) {
      QTest::mouseClick(list->viewport(), Qt::LeftButton, {},
                        list->visualItemRect(list->item(row)).center());
      QVERIFY(checkBoxes(row));
    }
    screenshot(window, "predict_detection_onnx.png");
  }

  // A classifier on the Predict page: the test images dropped on it get eval's probabilities
  // (the bars), a broken file is named, and the Grad-CAM button lays the map over the image.
  void predictPageTriesAClassifier() {
    QTemporaryDir dir;
    std::mt19937 rng(3);
    const std::vector<std::pair<int, int>> corners{{1, 1}, {10, 1}, {1, 10}, {10, 10}};
    const QStringList names{QStringLiteral("top_left"), QStringLiteral("top_right"),
                            QStringLiteral("bottom_left"), QStringLiteral("bottom_right")};
    for (const char* split : {"train", "test"})
      for (int c = 0; c < 4; ++c) {
        QDir(dir.path()).mkpath(QStringLiteral("%1/%2").arg(split, names[c]));
        for (int i = 0; i < (std::string(split) == "train" ? 24 : 6); ++i)
          cv::imwrite(dir.filePath(QStringLiteral("%1/%2/%3.png").arg(split, names[c]).arg(i))
                          .toStdString(),
                      square(rng, corners[std::size_t(c)].first, corners[std::size_t(c)].second));
      }
    const auto path = writeProject(dir, "classification",
                                   Json{{"train", {{"format", "image_folder"}, {"root", "train"}}},
                                        {"test", {{"format", "image_folder"}, {"root", "test"}}}},
                                   model(4, false), "cross_entropy");
    MainWindow window(m_registries);
    window.resize(1280, 720);
    window.show();
    QVERIFY(window.openProject(QString::fromStdString(path), /*quiet=*/true));
    auto* evaluation = trainAndEvaluate(window);
    QVERIFY(evaluation);
    const QString checkpoint = QString::fromStdString(evaluation->result().checkpoint);
    const QString csv = dir.filePath(QStringLiteral("eval.csv"));
    QVERIFY(writePredictions(checkpoint, csv));
    const auto rows = readCsv(csv);
    QCOMPARE(rows.size(), std::size_t(25));
    QDir(dir.path()).mkpath(QStringLiteral("more"));
    std::ofstream(dir.filePath(QStringLiteral("more/broken.png")).toStdString()) << "not a png";

    auto* predict = openPredictPage(window, checkpoint);
    QVERIFY(predict);
    QVERIFY(dropAndPredict(predict, {dir.filePath(QStringLiteral("test")),
                                     dir.filePath(QStringLiteral("more/broken.png"))}));
    QCOMPARE(predict->imageCount(), 25);
    auto* list = predict->findChild<QListWidget*>(QStringLiteral("predictImages"));
    QVERIFY(list->item(24)->text().contains(QStringLiteral("not read")));
    // Each image's bars are eval's probabilities of it, highest first, as percentages.
    std::map<std::string, std::vector<std::string>> evaluated;
    for (std::size_t r = 1; r < rows.size(); ++r)
      evaluated[QFileInfo(QString::fromStdString(rows[r][0])).canonicalFilePath().toStdString()] =
          rows[r];
    for (int row : {0, 7, 23}) {
      QTest::mouseClick(list->viewport(), Qt::LeftButton, {},
                        list->visualItemRect(list->item(row)).center());
      const auto& p = predict->predictions()[std::size_t(row)];
      const auto& want =
          evaluated.at(QFileInfo(QString::fromStdString(p.path)).canonicalFilePath().toStdString());
      // path, label, prediction, probability, prob:<class> x 4
      QCOMPARE(want.size(), std::size_t(8));
      std::vector<std::pair<double, QString>> probs;
      for (std::size_t c = 4; c < 8; ++c)  // "prob:<class>", the classes in their order
        probs.push_back({std::stod(want[c]), QString::fromStdString(rows[0][c].substr(5))});
      std::stable_sort(probs.begin(), probs.end(),
                       [](const auto& a, const auto& b) { return a.first > b.first; });
      QStringList lines;
      for (const auto& [prob, name] : probs)
        lines << QStringLiteral("%1 %2%").arg(name).arg(100.0 * prob, 0, 'f', 1);
      QCOMPARE(predict->shownBars(), lines);
      QVERIFY(predict->shownCaption().contains(QString::fromStdString(want[2])));
    }
    // Grad-CAM on demand: the map over the image, as `eval --gradcam` draws it.
    auto* gradCam = predict->findChild<QPushButton*>(QStringLiteral("predictGradCam"));
    QVERIFY(gradCam && gradCam->isVisible());
    const QImage plain = predict->shownPicture().toImage();
    QTest::mouseClick(gradCam, Qt::LeftButton);
    QVERIFY(gradCam->isChecked());
    const QImage map = predict->shownPicture().toImage();
    QCOMPARE(map.size(), QSize(400, 400));
    QVERIFY(map.convertToFormat(QImage::Format_RGB888) !=
            plain.convertToFormat(QImage::Format_RGB888));
    screenshot(window, "predict_classification_gradcam.png");
    // Another project: the images tried with this one's model go.
    QVERIFY(window.openProject(QString::fromStdString(path), /*quiet=*/true));
    QCOMPARE(predict->imageCount(), 0);
  }

 private:
  /// The Predict page by its shortcut, its model the run's checkpoint `checkpoint`.
  static netsmith::ui::PredictPage* openPredictPage(MainWindow& window, const QString& checkpoint) {
    window.activateWindow();  // a dialog closed a moment ago may have had the focus
    if (!QTest::qWaitForWindowActive(&window)) return nullptr;
    QTest::keyClick(&window, Qt::Key_9, Qt::ControlModifier);
    auto* page = window.pages()->predictPage();
    if (!QTest::qWaitFor([page] { return page->isVisible(); }, 5000)) {
      qWarning("the Predict page is not shown after Ctrl+9");
      return nullptr;
    }
    if (page->model() != checkpoint)
      qWarning("the Predict page's model is %s, not %s", qPrintable(page->model()),
               qPrintable(checkpoint));
    return page->model() == checkpoint ? page : nullptr;
  }

  /// Drops `paths` (files and folders) on the page as a file manager would, and waits for
  /// their predictions.
  static bool dropAndPredict(netsmith::ui::PredictPage* page, const QStringList& paths) {
    QSignalSpy predicted(page, &netsmith::ui::PredictPage::predicted);
    QMimeData mime;
    QList<QUrl> urls;
    for (const auto& p : paths)
      urls << QUrl::fromLocalFile(p);
    mime.setUrls(urls);
    const QPoint at = page->rect().center();
    QDragEnterEvent enter(at, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(page, &enter);
    if (!enter.isAccepted()) return false;
    QDropEvent drop(QPointF(at), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(page, &drop);
    return predicted.wait(60000);
  }

  /// Opens `project` and scans its data with the Data page's button.
  netsmith::ui::DataPage* openAndScan(MainWindow& window, const std::string& project) {
    if (!window.openProject(QString::fromStdString(project), /*quiet=*/true)) return nullptr;
    window.pages()->showPage(netsmith::ui::ProjectPages::DataPage);
    auto* page = window.pages()->dataPage();
    QSignalSpy scanned(page, &netsmith::ui::DataPage::scanned);
    auto* button = page->findChild<QPushButton*>(QStringLiteral("dataScan"));
    if (!button) return nullptr;
    QTest::mouseClick(button, Qt::LeftButton);
    if (!scanned.wait(60000) || !page->result().ok) return nullptr;
    return page;
  }

  /// Trains the open project with the Start action and waits for the Evaluation page's own
  /// evaluation of the test split.
  netsmith::ui::EvaluationPage* trainAndEvaluate(MainWindow& window) {
    QSignalSpy finished(window.session(), &netsmith::ui::TrainerSession::finished);
    netsmith::uitest::action(window, "actionTrainStart")->trigger();
    if (!finished.wait(120000)) return nullptr;
    auto* page = window.pages()->evaluationPage();
    if (!QTest::qWaitFor([page] { return !page->summaryText().isEmpty() && !page->isRunning(); },
                         120000))
      return nullptr;
    window.pages()->showPage(netsmith::ui::ProjectPages::EvalPage);
    QTest::qWait(50);
    return page;
  }

  /// Export > ONNX from the menu, as after any run: the file is written and passes its check
  /// in OpenCV DNN against LibTorch (the report's "max abs diff"). Returns the report.
  static QString exportOnnx(MainWindow& window) {
    QSignalSpy exported(window.exports(), &ExportController::exportFinished);
    netsmith::uitest::action(window, "actionExport_onnx")->trigger();
    if (!exported.wait(120000)) return QStringLiteral("no export");
    const QString report = exported[0][1].toString();
    if (!exported[0][0].toBool()) return QStringLiteral("failed: ") + report;
    for (auto* dialog : window.findChildren<QDialog*>(QStringLiteral("exportReport")))
      dialog->close();
    return report;
  }

  /// A click on the first sample of `list` (a gallery): the sample dialog it shows, or nullptr
  /// when none shows within 5 seconds.
  static QDialog* openFirst(MainWindow& window, QListWidget* list) {
    QTest::mouseClick(list->viewport(), Qt::LeftButton, {},
                      list->visualItemRect(list->item(0)).center());
    auto* dialog = window.findChild<QDialog*>(QStringLiteral("sampleDialog"));
    return dialog && QTest::qWaitFor([dialog] { return dialog->isVisible(); }, 5000) ? dialog
                                                                                     : nullptr;
  }

  /// The caption of the first sample of `list` in the sample dialog a click opens (closed
  /// again); "(no dialog)" when none shows.
  static QString firstCaption(MainWindow& window, QListWidget* list) {
    auto* dialog = openFirst(window, list);
    if (!dialog) return QStringLiteral("(no dialog)");
    auto* caption = dialog->findChild<QLabel*>(QStringLiteral("sampleCaption"));
    const QString text = caption ? caption->text() : QStringLiteral("(no caption)");
    dialog->close();
    return text;
  }

  /// The evaluated window's screenshot as `shot`, then Export > ONNX from the menu, as every task
  /// exports: the file must pass its check.
  static void shootAndExport(MainWindow& window, const char* shot) {
    screenshot(window, shot);
    const QString report = exportOnnx(window);
    QVERIFY2(report.contains(QStringLiteral("max abs diff")) &&
                 !report.startsWith(QStringLiteral("failed")),
             qPrintable(report));
  }

  /// NETSMITH_SCREENSHOT_DIR: the window as it is now.
  static void screenshot(MainWindow& window, const char* name) {
    const QString shots = qEnvironmentVariable("NETSMITH_SCREENSHOT_DIR");
    if (shots.isEmpty()) return;
    QTest::qWait(100);
    window.grab().save(shots + QLatin1Char('/') + QLatin1String(name));
  }

  const netsmith::RegistriesPtr m_registries = netsmith::Registries::builtins();
  const netsmith::ops::OpRegistry& m_registry = m_registries->ops;
};

QTEST_MAIN(EvaluationViewsTest)
#include "evaluation_views_test.moc"
