// The Experiments page on the offscreen platform, with the real netsmith-cli: "Sweep this
// setting" on form fields, a sweep run from the page, stopped and resumed, its table and charts
// checked against the sweep's own record (sweep.json), and "Apply best" undone.
#include <qcustomplot.h>
#include <QComboBox>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QtTest>
#include <cmath>
#include <fstream>
#include <random>

#include "forms/training_page.h"
#include "monitor/cost_plot.h"
#include "monitor/dashboard.h"
#include "monitor/experiments_page.h"
#include "ops/op_registry.h"
#include "registries/registries.h"
#include "session/project_document.h"
#include "util/schema_form.h"

using netsmith::Json;
using namespace netsmith::ui;

namespace {

/// 4 classes of 28x28 images (a brighter square in a class's quadrant), as IDX files.
void writeData(const QString& dir, int n) {
  std::mt19937 rng(7);
  std::string images, labels;
  const auto be32 = [](std::string& s, std::uint32_t v) {
    for (int sh = 24; sh >= 0; sh -= 8)
      s += char((v >> sh) & 0xFF);
  };
  be32(images, 0x803);
  be32(images, std::uint32_t(n));
  be32(images, 28);
  be32(images, 28);
  be32(labels, 0x801);
  be32(labels, std::uint32_t(n));
  for (int i = 0; i < n; ++i) {
    const int c = i % 4;
    std::string img(28 * 28, 0);
    for (auto& px : img)
      px = char(rng() % 160);
    const int y0 = (c / 2) * 14 + int(rng() % 5), x0 = (c % 2) * 14 + int(rng() % 5);
    for (int y = y0; y < y0 + 8; ++y)
      for (int x = x0; x < x0 + 8; ++x)
        img[std::size_t(y * 28 + x)] =
            char(std::min(255, int((unsigned char)img[std::size_t(y * 28 + x)]) + int(rng() % 70)));
    images += img;
    labels += char(c);
  }
  std::ofstream(QDir(dir).filePath("images.idx").toStdString(), std::ios::binary) << images;
  std::ofstream(QDir(dir).filePath("labels.idx").toStdString(), std::ios::binary) << labels;
}

Json project(const Json& sweep, int epochs) {
  const auto node = [](const char* id, const char* op, Json params, Json inputs) {
    return Json{{"id", id}, {"op", op}, {"params", params}, {"inputs", inputs}};
  };
  Json p{{"format", "netsmith-project"},
         {"version", 1},
         {"name", "experiments"},
         {"model",
          {{"input", {{"channels", 1}, {"height", 28}, {"width", 28}}},
           {"nodes",
            {node("input", "Input", Json::object(), Json::array()),
             node("conv1", "Conv2d", {{"out_channels", 6}, {"kernel_size", 3}, {"padding", 1}},
                  {"input"}),
             node("relu1", "ReLU", Json::object(), {"conv1"}),
             node("pool1", "MaxPool2d", {{"kernel_size", 4}}, {"relu1"}),
             node("flatten", "Flatten", Json::object(), {"pool1"}),
             node("fc", "Linear", {{"out_features", 4}}, {"flatten"})}}}},
         {"data",
          {{"train", {{"format", "idx"}, {"images", "images.idx"}, {"labels", "labels.idx"}}},
           {"validation", {{"fraction", 0.25}, {"seed", 0}, {"stratified", true}}},
           {"normalize", {{"mean", {0.3}}, {"std", {0.3}}}}}},
         {"train",
          {{"epochs", epochs},
           {"batch_size", 16},
           {"seed", 0},
           {"optimizer", {{"type", "sgd"}, {"lr", 0.01}, {"momentum", 0.9}}},
           {"schedule", {{"type", "cosine"}}}}}};
  if (!sweep.is_null()) p["sweep"] = sweep;
  return p;
}

QString writeProject(const QString& dir, const Json& sweep, int epochs = 3) {
  const QString path = QDir(dir).filePath("experiments.netsmith.json");
  std::ofstream(path.toStdString()) << project(sweep, epochs).dump(2);
  return path;
}

Json readRecord(const QString& dir) {
  QFile f(QDir(dir).filePath("sweep.json"));
  if (!f.open(QIODevice::ReadOnly)) return Json();
  return Json::parse(f.readAll().toStdString());
}

}  // namespace

class ExperimentsTest : public QObject {
  Q_OBJECT

 private slots:
  void sweepThisAddsARangeAroundTheValue() {
    QTemporaryDir dir;
    writeData(dir.path(), 64);
    const auto registries = netsmith::Registries::builtins();
    ProjectDocument doc(registries);
    TrainingPage page(&doc);
    QVERIFY(doc.load(writeProject(dir.path(), Json())));
    page.form(QStringLiteral("optimizer"))->requestSweep(QStringLiteral("lr"));
    const Json& extra = doc.project().extra;
    QVERIFY(extra.contains("sweep"));
    const Json lr = extra["sweep"]["params"][0];
    QCOMPARE(QString::fromStdString(lr["path"].get<std::string>()),
             QStringLiteral("train.optimizer.lr"));
    QVERIFY(std::abs(lr["log_uniform"][0].get<double>() - 0.001) < 1e-12);  // 0.01 / 10
    QVERIFY(std::abs(lr["log_uniform"][1].get<double>() - 0.1) < 1e-12);    // 0.01 x 10
    page.form(QStringLiteral("basics"))->requestSweep(QStringLiteral("batch_size"));
    QCOMPARE(extra["sweep"]["params"][1],
             (Json{{"path", "train.batch_size"}, {"choice", {8, 16, 32}}}));
    // The sweep section is checked like every other: the page shows no problem.
    ExperimentsPage experiments(&doc, nullptr);
    QVERIFY(experiments.findChild<QLabel*>(QStringLiteral("sweepProblems"))->text().isEmpty());
    QCOMPARE(experiments.findChild<QTableWidget*>(QStringLiteral("sweepParams"))->rowCount(), 2);
    doc.undoStack()->undo();
    doc.undoStack()->undo();
    QVERIFY(!doc.project().extra.contains("sweep"));
  }

  // Run sweep with unsaved edits: the sweep runs them (from a snapshot), the project file is
  // not written, the edits stay unsaved, and the snapshot is gone once the sweep ends.
  void aSweepLeavesUnsavedEditsUnsaved() {
    QTemporaryDir dir;
    writeData(dir.path(), 64);
    const Json sweep{{"name", "snap"},
                     {"method", "random"},
                     {"seed", 1},
                     {"trials", 1},
                     {"parallel", 1},
                     {"objective", "val_accuracy"},
                     {"params", {{{"path", "train.optimizer.lr"}, {"choice", {0.01, 0.02}}}}}};
    const auto registries = netsmith::Registries::builtins();
    ProjectDocument doc(registries);
    const QString path = writeProject(dir.path(), sweep, 1);
    QVERIFY(doc.load(path));
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray onDisk = file.readAll();
    file.close();
    Json train = doc.project().train;
    train["batch_size"] = 8;
    doc.editSection(QStringLiteral("train"), train, QStringLiteral("Batch size"));
    QVERIFY(doc.isModified());
    Dashboard dashboard;
    ExperimentsPage page(&doc, &dashboard);
    page.setCliProgram(QStringLiteral(NETSMITH_CLI));
    page.resize(1000, 700);
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    QSignalSpy ended(&page, &ExperimentsPage::sweepEnded);
    auto* run = page.findChild<QPushButton*>(QStringLiteral("sweepRun"));
    QVERIFY(run && run->isEnabled());
    QTest::mouseClick(run, Qt::LeftButton);
    QVERIFY(ended.wait(120000));
    QCOMPARE(ended.takeFirst().at(0).toBool(), true);
    QVERIFY(doc.isModified());
    QVERIFY(file.open(QIODevice::ReadOnly));
    QCOMPARE(file.readAll(), onDisk);
    // The sweep ran the edit: its base project has the unsaved batch size.
    QFile base(QDir(page.sweepDir()).filePath(QStringLiteral("base.netsmith.json")));
    QVERIFY(base.open(QIODevice::ReadOnly));
    QCOMPARE(Json::parse(base.readAll().toStdString())["train"]["batch_size"].get<int>(), 8);
    QCOMPARE(QDir(dir.path())
                 .entryList({QStringLiteral("*snapshot*")}, QDir::Files | QDir::Hidden)
                 .size(),
             0);
  }

  void aSweepRunsStopsResumesAndItsBestIsApplied() {
    QTemporaryDir dir;
    writeData(dir.path(), 9600);
    const Json sweep{{"name", "ui"},
                     {"method", "random"},
                     {"seed", 1},
                     {"trials", 4},
                     {"parallel", 2},
                     {"objective", "val_accuracy"},
                     {"asha", {{"min_epochs", 1}, {"reduction", 2}}},
                     {"params", {{{"path", "train.optimizer.lr"}, {"log_uniform", {1e-3, 0.3}}}}}};
    const auto registries = netsmith::Registries::builtins();
    ProjectDocument doc(registries);
    // 16 epochs, rungs at 1, 2, 4 and 8: the first trial goes on at every rung (nothing to
    // compare it with) and runs epochs 9-16 in one segment, long enough to be stopped in.
    QVERIFY(doc.load(writeProject(dir.path(), sweep, 16)));
    Dashboard dashboard;
    ExperimentsPage page(&doc, &dashboard);
    page.setCliProgram(QStringLiteral(NETSMITH_CLI));
    QSignalSpy ended(&page, &ExperimentsPage::sweepEnded);
    QVERIFY(page.runSweep());
    // Stop in the middle of a segment: a trial with an epoch of its last segment done and
    // several to go (the page learns of epochs about once a second, a few epochs late at most).
    const auto inLastSegment = [&page] {
      for (const auto& t : page.state().trials)
        if (t.status == netsmith::experiment::TrialStatus::Running && t.epochsDone >= 9 &&
            t.epochsDone <= 11 && !t.runDir.empty())
          return true;
      return false;
    };
    QTRY_VERIFY_WITH_TIMEOUT(inLastSegment(), 120000);
    // The Time column counts the segment under way: its ended segments and the time since the
    // record says this one started (read here from the record, against the clock).
    {
      const Json live = readRecord(page.sweepDir());
      QTableWidget* table = page.trialsTable();
      int counted = 0;
      for (int row = 0; row < table->rowCount(); ++row) {
        const Json& t = live["trials"][std::size_t(table->item(row, 0)->text().toInt())];
        if (t["status"] != "running" || t["segment_started"].get<double>() <= 0) continue;
        QCOMPARE(table->item(row, 1)->text(), QStringLiteral("running"));
        const double now = double(QDateTime::currentMSecsSinceEpoch()) / 1000.0;
        const double expected =
            t["seconds"].get<double>() + now - t["segment_started"].get<double>();
        const double shown = table->item(row, 4)->text().chopped(2).toDouble();
        // A trial that has run a while shows it (not 0 s); one just started may show 0 s.
        QVERIFY2((expected < 1.5 || shown >= 1) && std::abs(shown - expected) <= 2.5,
                 qPrintable(QStringLiteral("trial %1: %2 s shown, %3 s from the record")
                                .arg(t["id"].get<int>())
                                .arg(shown)
                                .arg(expected)));
        ++counted;
      }
      QVERIFY(counted > 0);
    }
    page.stopSweep();
    QVERIFY(ended.wait(60000));
    QCOMPARE(ended.takeFirst().at(0).toBool(), false);
    const QString sweepDir = page.sweepDir();
    const Json stopped = readRecord(sweepDir);
    QVERIFY(!stopped["finished"].get<bool>());
    // Nothing runs the sweep now: the trials its record keeps running (to resume) read
    // "interrupted", and their time stands still at the record's.
    {
      QTableWidget* table = page.trialsTable();
      int interrupted = 0;
      int paused = 0;
      for (int row = 0; row < table->rowCount(); ++row) {
        const Json& t = stopped["trials"][std::size_t(table->item(row, 0)->text().toInt())];
        QCOMPARE(t["segment_started"].get<double>(), 0.0);
        QCOMPARE(table->item(row, 4)->text(),
                 QStringLiteral("%1 s").arg(std::llround(t["seconds"].get<double>())));
        if (t["status"] == "paused") ++paused;  // waits at a rung: shown as paused
        if (t["status"] != "running") {
          QCOMPARE(table->item(row, 1)->text().toStdString(), t["status"].get<std::string>());
          continue;
        }
        QCOMPARE(table->item(row, 1)->text(), QStringLiteral("interrupted"));
        ++interrupted;
      }
      QVERIFY(interrupted > 0);
      QVERIFY2(
          page.findChild<QLabel*>(QStringLiteral("sweepStatus"))
              ->text()
              .contains(QStringLiteral("%1 interrupted, %2 paused").arg(interrupted).arg(paused)),
          qPrintable(page.findChild<QLabel*>(QStringLiteral("sweepStatus"))->text()));
    }
    // The trials left running (to resume) are the ones overlaid on the dashboard.
    QStringList running;
    for (const auto& t : stopped["trials"])
      if (t["status"] == "running" && t.contains("run_dir"))
        running << QStringLiteral("trial %1").arg(t["id"].get<int>());
    QVERIFY(!running.isEmpty());
    QStringList overlays = dashboard.overlayNames();
    overlays.sort();
    running.sort();
    QCOMPARE(overlays, running);
    QVERIFY(page.resumeSweep(sweepDir));
    QVERIFY(ended.wait(180000));
    QCOMPARE(ended.takeFirst().at(0).toBool(), true);
    QVERIFY(dashboard.overlayNames().isEmpty());  // no trial runs any more

    // The table against the record.
    const Json record = readRecord(sweepDir);
    QVERIFY(record["finished"].get<bool>());
    const auto& trials = record["trials"];
    QCOMPARE(trials.size(), std::size_t(4));
    QTableWidget* table = page.trialsTable();
    QCOMPARE(table->rowCount(), 4);
    table->sortByColumn(0, Qt::AscendingOrder);
    for (int row = 0; row < 4; ++row) {
      const Json& t = trials[std::size_t(row)];
      QCOMPARE(table->item(row, 0)->text().toInt(), t["id"].get<int>());
      QCOMPARE(table->item(row, 1)->text().toStdString(), t["status"].get<std::string>());
      QCOMPARE(table->item(row, 2)->text(),
               QStringLiteral("%1/16").arg(t["epochs_done"].get<int>()));
      // val_accuracy in percent, as everywhere in the studio, from the record's fraction.
      QCOMPARE(table->item(row, 3)->text(),
               QString::number(100 * t["objective"].get<double>(), 'f', 2) + QLatin1Char('%'));
    }
    // One line per trial in the parallel coordinates; one point per scored trial in the scatter.
    QCOMPARE(page.parallelPlot()->plottableCount(), 4);
    int points = 0;
    for (int g = 0; g < page.scatterPlot()->graphCount(); ++g)
      points += page.scatterPlot()->graph(g)->dataCount();
    QCOMPARE(points, 4);
    // Its x axis spans the range sampled (log_uniform 1e-3 to 0.3), with a small margin.
    const QCPRange x = page.scatterPlot()->xAxis->range();
    QVERIFY2(x.lower <= 1e-3 && x.lower > 0.5e-3 && x.upper >= 0.3 && x.upper < 0.6,
             qPrintable(QStringLiteral("%1 to %2").arg(x.lower).arg(x.upper)));
    // The best completed trial, found here from the record, is what Apply best sets.
    double bestScore = -1, bestLr = 0;
    for (const auto& t : trials)
      if (t["status"] == "completed" && t["objective"].get<double>() > bestScore) {
        bestScore = t["objective"].get<double>();
        bestLr = t["params"]["train.optimizer.lr"].get<double>();
      }
    QVERIFY(bestScore >= 0);
    QVERIFY(page.applyBest());
    QCOMPARE(doc.project().train["optimizer"]["lr"].get<double>(), bestLr);
    QCOMPARE(doc.project().train["optimizer"]["type"], Json("sgd"));
    doc.undoStack()->undo();
    QCOMPARE(doc.project().train["optimizer"]["lr"].get<double>(), 0.01);
    // The project opened again (a new studio) shows this sweep and its trials.
    ProjectDocument again(registries);
    Dashboard dashboard2;
    ExperimentsPage page2(&again, &dashboard2);
    QVERIFY(again.load(doc.filePath()));
    QCOMPARE(QFileInfo(page2.sweepDir()).canonicalFilePath(),
             QFileInfo(sweepDir).canonicalFilePath());
    QCOMPARE(page2.trialsTable()->rowCount(), 4);
  }

  // A sweep over the model's width that measures each trial deployed (sweep.max_latency_ms):
  // the record carries each trial's latency and size from its run's deploy.json, the best
  // trial is the best within the limit, and the page plots the objective against latency with
  // the Pareto front, which is the one counted here pair by pair from the record.
  void aSweepMeasuredDeployedShowsItsParetoFront() {
    QTemporaryDir dir;
    writeData(dir.path(), 1200);
    const Json sweep{
        {"name", "widths"},
        {"method", "grid"},
        {"trials", 3},
        {"parallel", 1},
        {"objective", "val_accuracy"},
        {"max_latency_ms", 50.0},
        {"params", {{{"path", "model.nodes[conv1].out_channels"}, {"choice", {2, 8, 32}}}}}};
    const auto registries = netsmith::Registries::builtins();
    ProjectDocument doc(registries);
    QVERIFY(doc.load(writeProject(dir.path(), sweep, 1)));
    Dashboard dashboard;
    ExperimentsPage page(&doc, &dashboard);
    page.resize(1280, 720);
    page.setCliProgram(QStringLiteral(NETSMITH_CLI));
    QSignalSpy ended(&page, &ExperimentsPage::sweepEnded);
    QVERIFY(page.runSweep());
    QVERIFY(ended.wait(300000));
    QCOMPARE(ended.takeFirst().at(0).toBool(), true);
    const Json record = readRecord(page.sweepDir());
    QCOMPARE(record["trials"].size(), std::size_t(3));
    struct Measured {
      QString name;
      double latency, objective;
    };
    std::vector<Measured> measured;
    for (const auto& t : record["trials"]) {
      QCOMPARE(t["status"], Json("completed"));
      // The record's figures are the run's own deploy.json's.
      QFile f(
          QDir(page.sweepDir())
              .filePath(QString::fromStdString(t["run_dir"].get<std::string>()) + "/deploy.json"));
      QVERIFY(f.open(QIODevice::ReadOnly));
      const Json deploy = Json::parse(f.readAll().toStdString());
      QCOMPARE(t["latency_ms"].get<double>(), deploy["runtimes"][0]["batch1_p50_ms"].get<double>());
      QCOMPARE(t["file_bytes"].get<std::int64_t>(), deploy["file_bytes"].get<std::int64_t>());
      measured.push_back({QStringLiteral("trial %1").arg(t["id"].get<int>()),
                          t["latency_ms"].get<double>(), t["objective"].get<double>()});
    }
    // Wider models are bigger files.
    QVERIFY(record["trials"][0]["file_bytes"] < record["trials"][2]["file_bytes"]);
    // The front by its definition: no other trial at least as fast and as accurate, and
    // better in one.
    QStringList want;
    std::vector<Measured> byLatency = measured;
    std::sort(byLatency.begin(), byLatency.end(),
              [](const auto& a, const auto& b) { return a.latency < b.latency; });
    for (const auto& m : byLatency) {
      bool beaten = false;
      for (const auto& o : measured)
        beaten =
            beaten || (o.name != m.name && o.latency <= m.latency && o.objective >= m.objective &&
                       (o.latency < m.latency || o.objective > m.objective));
      if (!beaten) want << m.name;
    }
    auto* costs = page.findChild<CostPlot*>(QStringLiteral("sweepCosts"));
    QVERIFY(costs && costs->isVisibleTo(&page));
    QCOMPARE(costs->frontNames(), want);
    QCOMPARE(costs->plot()->graph(0)->dataCount(), 3);
    // By file size instead, from the combo box as a user picks it.
    auto* axis = costs->findChild<QComboBox*>(QStringLiteral("costPlotAxis"));
    axis->setFocus();
    QTest::keyClick(axis, Qt::Key_Down);
    QCOMPARE(costs->costAxis(), QStringLiteral("size"));
    QCOMPARE(costs->plot()->xAxis->label(), QStringLiteral("file size, MiB"));
    QTest::keyClick(axis, Qt::Key_Up);
    QCOMPARE(costs->costAxis(), QStringLiteral("latency"));
    const QString shots = qEnvironmentVariable("NETSMITH_SCREENSHOT_DIR");
    if (!shots.isEmpty()) {
      page.show();
      QTest::qWait(200);
      QVERIFY(page.grab().save(shots + QStringLiteral("/sweep-pareto.png")));
    }
  }
};

QTEST_MAIN(ExperimentsTest)
#include "experiments_test.moc"
