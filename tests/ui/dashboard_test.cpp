// The dashboard with synthetic metrics: axis modes, smoothing, log scale, follow, tooltips,
// PNG/CSV export, the epoch table and run overlays; and reading a run folder back.
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTreeWidget>
#include <QtTest>

#include <qcustomplot.h>
#include <sys/stat.h>

#include <cmath>

#include "monitor/dashboard.h"
#include "monitor/run_history.h"
#include "util/chart_fit.h"

using netsmith::Json;
using netsmith::run::BatchMetrics;
using netsmith::run::EpochMetrics;
using netsmith::ui::Dashboard;
using netsmith::ui::XAxisMode;

namespace {

QVector<BatchMetrics> makeBatches(int epoch, int perEpoch, double loss0) {
  QVector<BatchMetrics> out;
  for (int b = 0; b < perEpoch; ++b) {
    BatchMetrics m;
    m.epoch = epoch;
    m.batch = b;
    m.batchesPerEpoch = perEpoch;
    m.step = std::int64_t(epoch) * perEpoch + b + 1;
    m.totalSteps = 3 * perEpoch;
    m.loss = loss0 - 0.01 * b + ((b % 2) ? 0.2 : -0.2);  // noisy
    m.lr = 0.1 / m.step;
    m.gradNorm = std::pow(10.0, (b % 5) - 2);  // 0.01 .. 100
    m.imagesPerSecond = 1000 + b;
    m.seconds = 0.5 * double(m.step);
    m.memory.bytes = (100 + b) * 1024 * 1024;
    out.push_back(m);
  }
  return out;
}

EpochMetrics makeEpoch(int epoch, double valLoss, double valAcc) {
  EpochMetrics e;
  e.epoch = epoch;
  e.epochs = 3;
  e.trainLoss = valLoss + 0.1;
  e.trainAccuracy = valAcc - 0.05;
  e.hasValidation = true;
  e.validation.loss = valLoss;
  e.validation.accuracy = valAcc;
  e.lr = 0.01;
  e.seconds = 4.2;
  return e;
}

/// A run's metrics.csv as the run writer lays it out: two steps and the first epoch.
constexpr const char* kFirstEpoch =
    "kind,epoch,batch,step,loss,accuracy,lr,grad_norm,images_per_second,memory_kind,"
    "memory_bytes,val_loss,val_accuracy,seconds\n"
    "step,0,0,1,1.5,0.2,0.01,1.0,900,process_rss,100,,,0.1\n"
    "step,0,1,2,1.3,0.3,0.01,1.0,900,process_rss,100,,,0.2\n"
    "epoch,0,,,1.4,0.25,0.01,,,,,1.2,0.4,0.3\n";

/// Writes `text` as the metrics.csv of the run folder `run`; whether it was written.
bool writeMetrics(const QString& run, const QByteArray& text) {
  QFile csv(run + QStringLiteral("/metrics.csv"));
  return csv.open(QIODevice::WriteOnly) && csv.write(text) == text.size();
}

}  // namespace

class DashboardTest : public QObject {
  Q_OBJECT

 private slots:
  // "Best" follows any figure of the task, as the run reads it (train::metricOf): a lower
  // validation MAE here; the figure comes from the epoch's named figures.
  void theBestEpochFollowsATasksFigure() {
    Dashboard d;
    d.setMonitor(QStringLiteral("val_mae"), false);
    const double maes[4] = {0.30, 0.12, 0.18, 0.15};
    for (int e = 0; e < 4; ++e) {
      auto epoch = makeEpoch(e, 1.0 - 0.1 * e, std::nan(""));
      epoch.validation.figures = {{"mae", maes[e]}, {"rmse", 2 * maes[e]}};
      d.addEpoch(epoch);
    }
    QCOMPARE(d.bestEpoch(), 1);
    QVERIFY(d.epochTable()->topLevelItem(1)->text(0).endsWith(QStringLiteral("\u2605")));
    // Higher is better for another figure: the marker moves with the run's choice.
    Dashboard up;
    up.setMonitor(QStringLiteral("val_rmse"), true);
    for (int e = 0; e < 4; ++e) {
      auto epoch = makeEpoch(e, 1.0, std::nan(""));
      epoch.validation.figures = {{"mae", maes[e]}, {"rmse", 2 * maes[e]}};
      up.addEpoch(epoch);
    }
    QCOMPARE(up.bestEpoch(), 0);
  }

  void pointsEpochTableAndBestEpoch() {
    Dashboard d;
    d.configure(5.0);
    d.setMonitor(QStringLiteral("val_loss"), false);
    d.addBatches(makeBatches(0, 10, 2.0));
    d.addEpoch(makeEpoch(0, 1.0, 0.6));
    d.addBatches(makeBatches(1, 10, 1.5));
    d.addEpoch(makeEpoch(1, 0.7, 0.8));
    d.addBatches(makeBatches(2, 10, 1.2));
    d.addEpoch(makeEpoch(2, 0.9, 0.85));  // worse val loss: epoch 2 stays best
    QCOMPARE(d.pointCount(QStringLiteral("train_loss")), 30);
    QCOMPARE(d.pointCount(QStringLiteral("grad_norm")), 30);
    QCOMPARE(d.pointCount(QStringLiteral("val_loss")), 3);
    QCOMPARE(d.bestEpoch(), 1);
    auto* table = d.epochTable();
    QCOMPARE(table->topLevelItemCount(), 3);
    QCOMPARE(table->topLevelItem(1)->text(0), QStringLiteral("2 \u2605"));
    QCOMPARE(table->topLevelItem(1)->text(3), QStringLiteral("0.7000"));
    QCOMPARE(table->topLevelItem(2)->text(4), QStringLiteral("85.00%"));
    QVERIFY(!table->topLevelItem(2)->font(0).bold());
    QCOMPARE(table->headerItem()->text(1), QStringLiteral("Train loss"));
    // A train loss with label smoothing says so (validation's has none): the row and the header.
    auto smoothed = makeEpoch(3, 0.95, 0.86);
    smoothed.trainLabelSmoothing = 0.1;
    d.addEpoch(smoothed);
    QVERIFY(table->topLevelItem(3)->text(1).endsWith(QStringLiteral(" *")));
    QCOMPARE(table->headerItem()->text(1), QStringLiteral("Train loss *"));
    QVERIFY(table->headerItem()->toolTip(1).contains(QStringLiteral("label smoothing 0.1")));
    // Validation points sit at the step where their epoch ended.
    QCOMPARE(d.series(QStringLiteral("val_loss"))->data()->at(1)->key, 20.0);
    // Following: the x axis spans every step; the y axis of the gradient norm includes the
    // clip line.
    QVERIFY(d.chart(QStringLiteral("loss"))->xAxis->range().upper >= 30);
    QVERIFY(d.chart(QStringLiteral("grad_norm"))->yAxis->range().contains(5.0));
    // In a laptop-wide window the table shows every column whole: no header is cut.
    d.resize(1160, 600);
    d.show();
    QVERIFY(QTest::qWaitForWindowExposed(&d));
    QTRY_VERIFY2(table->header()->length() <= table->viewport()->width(),
                 qPrintable(QStringLiteral("columns %1 px in %2 px")
                                .arg(table->header()->length())
                                .arg(table->viewport()->width())));
  }

  // Accuracy is drawn on a 0..1 axis from the start; with figures its top stays at 1 (100%)
  // and its bottom follows the lowest accuracy.
  void accuracyAxisIsZeroToOne() {
    Dashboard d;
    const auto* axis = d.chart(QStringLiteral("accuracy"))->yAxis;
    QCOMPARE(axis->range().lower, 0.0);
    QCOMPARE(axis->range().upper, 1.0);
    d.addBatches(makeBatches(0, 10, 2.0));
    d.addEpoch(makeEpoch(0, 1.0, 0.6));
    d.addEpoch(makeEpoch(1, 0.7, 0.8));
    QTRY_COMPARE(axis->range().upper, 1.0);
    QVERIFY(axis->range().contains(0.6 - 0.05 + 1e-9));  // the lowest figure, train 0.55
    QVERIFY(axis->range().lower >= 0.0);
  }

  // An empty chart says "Press F5 to train" instead of bare axes; the first figures clear it,
  // and Clear (a new run or project) brings it back.
  void emptyChartsSayHowToFillThem() {
    Dashboard d;
    auto hintShown = [&d](const char* id) {
      QCustomPlot* plot = d.chart(QLatin1String(id));
      for (int i = 0; i < plot->itemCount(); ++i)
        if (auto* text = qobject_cast<QCPItemText*>(plot->item(i));
            text && text->text() == QStringLiteral("Press F5 to train"))
          return text->visible() && !plot->xAxis->tickLabels();
      return false;
    };
    const QStringList ids = Dashboard::chartIds();
    QCOMPARE(ids.size(), 6);
    for (const auto& id : ids)
      QVERIFY2(hintShown(qPrintable(id)), qPrintable(id));
    d.addBatches(makeBatches(0, 10, 2.0));
    d.addEpoch(makeEpoch(0, 1.0, 0.6));
    for (const auto& id : ids)
      QVERIFY2(!hintShown(qPrintable(id)), qPrintable(id));
    d.clear();
    QVERIFY(hintShown("loss"));
  }

  // Two runs' settings: what differs, by its path in the project, missing keys as "(unset)";
  // what changes results first (the optimizer before the epochs), the sweep's record last,
  // numbers to 4 significant digits.
  void settingDifferencesListWhatChanged() {
    const Json a = Json::parse(
        R"({"name": "a", "sweep": {"trials": 4}, "train": {"epochs": 5, "optimizer": {"type": "adam", "lr": 0.001}}})");
    const Json b = Json::parse(
        R"({"name": "b", "sweep": {"trials": 8}, "train": {"optimizer": {"type": "adam", "lr": 0.0123456789}}})");
    QCOMPARE(netsmith::ui::settingDifferences(a, b),
             QStringList({QStringLiteral("train.optimizer.lr: 0.001 -> 0.01235"),
                          QStringLiteral("train.epochs: 5 -> (unset)"),
                          QStringLiteral("sweep.trials: 4 -> 8")}));
    QVERIFY(netsmith::ui::settingDifferences(a, a).isEmpty());
  }

  void axisModesRekeyEverySeries() {
    Dashboard d;
    d.addBatches(makeBatches(0, 4, 2.0));
    d.addEpoch(makeEpoch(0, 1.0, 0.5));
    d.addBatches(makeBatches(1, 4, 1.0));
    auto loss = d.series(QStringLiteral("train_loss"))->data();
    QCOMPARE(loss->at(5)->key, 6.0);  // step
    d.setXAxisMode(XAxisMode::Epoch);
    QCOMPARE(loss->at(5)->key, 1.5);  // epoch 1, batch 2 of 4
    QCOMPARE(d.series(QStringLiteral("val_accuracy"))->data()->at(0)->key, 1.0);
    QCOMPARE(d.chart(QStringLiteral("lr"))->xAxis->label(), QStringLiteral("epoch"));
    d.setXAxisMode(XAxisMode::Time);
    QCOMPARE(loss->at(5)->key, 3.0);  // 0.5 s per step
    QCOMPARE(d.findChild<QComboBox*>(QStringLiteral("xAxisMode"))->currentIndex(), 2);
    d.setXAxisMode(XAxisMode::Step);
    QCOMPARE(loss->at(5)->key, 6.0);
    // The shared x axis: zooming one chart moves the others.
    d.chart(QStringLiteral("loss"))->xAxis->setRange(2, 4);
    QCOMPARE(d.chart(QStringLiteral("throughput"))->xAxis->range().lower, 2.0);
  }

  void smoothingIsAnEmaOfTheRawLoss() {
    Dashboard d;
    d.setSmoothing(0.0);
    d.addBatches(makeBatches(0, 20, 2.0));
    auto raw = d.series(QStringLiteral("train_loss"))->data();
    auto ema = d.series(QStringLiteral("train_loss_ema"))->data();
    for (int i = 0; i < 20; ++i)
      QCOMPARE(ema->at(i)->value, raw->at(i)->value);  // no smoothing
    d.setSmoothing(0.9);
    // Debiased EMA: the first value equals the first raw value; later ones are smoother.
    QCOMPARE(ema->at(0)->value, raw->at(0)->value);
    double rawVar = 0, emaVar = 0;
    for (int i = 11; i < 20; ++i) {
      rawVar += std::fabs(raw->at(i)->value - raw->at(i - 1)->value);
      emaVar += std::fabs(ema->at(i)->value - ema->at(i - 1)->value);
    }
    QVERIFY(emaVar < rawVar / 4);
    double e = 0;
    for (int i = 0; i < 20; ++i)
      e = 0.9 * e + 0.1 * raw->at(i)->value;
    QVERIFY(std::fabs(ema->at(19)->value - e / (1 - std::pow(0.9, 20))) < 1e-9);
  }

  void logScaleFollowAndTooltips() {
    Dashboard d;
    d.addBatches(makeBatches(0, 10, 2.0));
    d.setGradNormLogScale(true);
    auto* grad = d.chart(QStringLiteral("grad_norm"));
    QCOMPARE(grad->yAxis->scaleType(), QCPAxis::stLogarithmic);
    QVERIFY(grad->yAxis->range().lower > 0 && grad->yAxis->range().lower <= 0.01);
    QVERIFY(grad->yAxis->range().upper >= 100);
    d.setGradNormLogScale(false);
    QCOMPARE(grad->yAxis->scaleType(), QCPAxis::stLinear);
    // Zooming stops following: new points no longer move the axes.
    QVERIFY(d.follows());
    d.chart(QStringLiteral("loss"))->xAxis->setRange(1, 3);
    d.setFollow(false);
    QVERIFY(!d.findChild<QCheckBox*>(QStringLiteral("follow"))->isChecked());
    d.addBatches(makeBatches(1, 10, 1.0));
    QCOMPARE(d.chart(QStringLiteral("loss"))->xAxis->range().upper, 3.0);
    d.setFollow(true);
    QVERIFY(d.chart(QStringLiteral("loss"))->xAxis->range().upper >= 20);
    // The tooltip names the nearest point of each series.
    const QString tip = d.tooltipAt(QStringLiteral("lr"), 4.2);
    QVERIFY2(tip.contains(QStringLiteral("learning rate: 0.025 (at 4)")), qPrintable(tip));
  }

  void exportsPngAndCsv() {
    QTemporaryDir dir;
    Dashboard d;
    d.resize(900, 700);
    d.addBatches(makeBatches(0, 5, 2.0));
    d.addEpoch(makeEpoch(0, 1.0, 0.5));
    const QString png = dir.filePath(QStringLiteral("loss.png"));
    QVERIFY(d.saveChartPng(QStringLiteral("loss"), png));
    QImage image(png);
    QVERIFY(!image.isNull() && image.width() >= 640);
    const QString csv = dir.filePath(QStringLiteral("loss.csv"));
    QVERIFY(d.saveChartCsv(QStringLiteral("loss"), csv));
    QFile f(csv);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QStringList lines = QString::fromUtf8(f.readAll()).trimmed().split('\n');
    QCOMPARE(lines[0], QStringLiteral("series,step,value"));
    QCOMPARE(lines.size(), 1 + 5 + 5 + 1);  // raw, smoothed, one validation point
    QVERIFY(lines[1].startsWith(QStringLiteral("train (step),1,")));
    QString error;
    QVERIFY(!d.saveChartCsv(QStringLiteral("loss"), dir.filePath(QStringLiteral("no/such/x.csv")),
                            &error));
    QVERIFY2(error.contains(QStringLiteral("cannot write")), qPrintable(error));
  }

  // Six runs overlaid on a laptop-sized dashboard: the legend that would bury the loss curve
  // folds away, the plot keeps most of the chart, and the context menu's choice shows it again.
  void aLegendTallerThanAThirdOfItsChartFolds() {
    QTemporaryDir dir;
    const QString run = dir.filePath(QStringLiteral("runs/blobs-1"));
    QVERIFY(QDir().mkpath(run));
    QVERIFY(writeMetrics(run, kFirstEpoch));
    netsmith::ui::RunHistory r;
    QString error;
    QVERIFY2(netsmith::ui::RunHistory::read(run, r, &error), qPrintable(error));
    Dashboard d;
    d.resize(1100, 560);
    d.show();
    QVERIFY(QTest::qWaitForWindowExposed(&d));
    d.addBatches(makeBatches(0, 20, 2.0));
    auto* loss = d.chart(QStringLiteral("loss"));
    loss->replot();
    QVERIFY(netsmith::ui::legendShown(loss) || loss->graphCount() < 2);
    for (int k = 0; k < 6; ++k) {
      r.name = QStringLiteral("fashion_mnist-20261205-10%1000").arg(k);
      d.addOverlay(r);
    }
    QApplication::processEvents();
    loss->replot();
    QVERIFY2(!netsmith::ui::legendShown(loss),
             qPrintable(QStringLiteral("chart %1 px high").arg(loss->height())));
    QVERIFY2(loss->axisRect()->height() * 2 > loss->height(),
             qPrintable(QStringLiteral("plot %1 of %2 px")
                            .arg(loss->axisRect()->height())
                            .arg(loss->height())));
    // Folded, the legend leaves the plot the chart's width too.
    QVERIFY2(loss->axisRect()->width() * 3 > loss->width() * 2,
             qPrintable(QStringLiteral("plot %1 of %2 px wide")
                            .arg(loss->axisRect()->width())
                            .arg(loss->width())));
    const int folded = loss->axisRect()->height();
    netsmith::ui::setLegendMode(loss, netsmith::ui::LegendMode::Shown);
    loss->replot();
    QVERIFY(netsmith::ui::legendShown(loss));
    QVERIFY(loss->axisRect()->height() < folded);  // the legend takes its room below the plot
    netsmith::ui::setLegendMode(loss, netsmith::ui::LegendMode::Auto);
    d.clearOverlays();
    loss->replot();
    QVERIFY(netsmith::ui::legendShown(loss) || loss->graphCount() < 2);
  }

  void readsARunFolderAndOverlaysIt() {
    QTemporaryDir dir;
    QDir(dir.path()).mkpath(QStringLiteral("runs/blobs-1/checkpoints"));
    const QString run = dir.filePath(QStringLiteral("runs/blobs-1"));
    QVERIFY(writeMetrics(run, QByteArray(kFirstEpoch) +
                                  "step,1,0,3,1.1,0.5,0.01,1.0,900,process_rss,100,,,0.4\n"
                                  "step,1,1,4,0.9,0.6,0.01,1.0,900,process_rss,100,,,0.5\n"
                                  "epoch,1,,,1.0,0.55,0.01,,,,,0.8,0.7,0.3\n"));
    QFile project(run + QStringLiteral("/project.json"));
    QVERIFY(project.open(QIODevice::WriteOnly));
    project.write(R"({"name": "blobs"})");
    project.close();
    // The run's own events: the device line first, the finished event with its test figure.
    QFile events(run + QStringLiteral("/events.jsonl"));
    QVERIFY(events.open(QIODevice::WriteOnly));
    events.write(
        R"({"event":"log","time":0.01,"level":"info","message":"device cpu, 2 compute threads, 1 loader thread"})"
        "\n"
        R"({"event":"finished","time":75.5,"state":"completed","test":{"accuracy":0.625,"samples":64}})"
        "\n");
    events.close();
    QFile ckpt(run + QStringLiteral("/checkpoints/best.safetensors"));
    QVERIFY(ckpt.open(QIODevice::WriteOnly));
    ckpt.close();

    const auto runs =
        netsmith::ui::listRuns(dir.filePath(QStringLiteral("runs")), QStringLiteral("blobs"));
    QCOMPARE(runs.size(), 1);
    const auto& r = runs[0];
    QCOMPARE(r.epochs(), 2);
    QCOMPARE(r.stepLoss.size(), 4);
    QCOMPARE(r.stepEpoch[1], 1.0);  // epoch 0, batch 2 of 2
    QCOMPARE(r.epochStep[1], 4.0);
    QCOMPARE(r.bestValFigure(true), 0.7);
    QVERIFY(r.bestCheckpoint().endsWith(QStringLiteral("checkpoints/best.safetensors")));
    QCOMPARE(r.device, QStringLiteral("cpu, 2 compute threads, 1 loader thread"));
    QCOMPARE(r.durationSeconds, 75.5);
    QCOMPARE(r.testFigure, 0.625);
    QCOMPARE(r.testSamples, 64);
    QCOMPARE(r.stepMemoryMiB.size(), 4);
    QCOMPARE(r.stepImagesPerSecond[0], 900.0);
    QCOMPARE(netsmith::ui::listRuns(dir.filePath(QStringLiteral("runs")), QStringLiteral("other"))
                 .size(),
             0);

    Dashboard d;
    d.addOverlay(r);
    QCOMPARE(d.overlayNames(), QStringList{QStringLiteral("blobs-1")});
    auto* loss = d.chart(QStringLiteral("loss"));
    QCOMPARE(loss->graphCount(), 3 + 2);  // own 3 + overlay train and validation
    QCOMPARE(loss->graph(4)->dataCount(), 2);
    // On every chart, in the run's colour (the Runs table's swatch).
    for (const auto& id : Dashboard::chartIds()) {
      QCustomPlot* plot = d.chart(id);
      QCPGraph* last = plot->graph(plot->graphCount() - 1);
      QVERIFY2(last->name().startsWith(QStringLiteral("blobs-1")), qPrintable(id));
      QCOMPARE(last->pen().color(), netsmith::ui::runColor(QStringLiteral("blobs-1")));
      QVERIFY2(last->dataCount() > 0, qPrintable(id));
    }
    d.clearOverlays();
    QCOMPARE(loss->graphCount(), 3);

    // A damaged metrics file is named with its line.
    QFile csv(run + QStringLiteral("/metrics.csv"));
    QVERIFY(csv.open(QIODevice::Append));
    csv.write("step,2,0\n");
    csv.close();
    netsmith::ui::RunHistory bad;
    QString error;
    QVERIFY(!netsmith::ui::RunHistory::read(run, bad, &error));
    QVERIFY2(error.contains(QStringLiteral("metrics.csv:8: expected 14 fields, found 3")),
             qPrintable(error));

    // A run folder from someone else with a FIFO, or a link to /dev/zero, where the records
    // are: refused at once by name (reading them blocked the studio, or filled its memory).
    for (const char* planted : {"fifo", "zero"}) {
      const QString other = dir.filePath(QStringLiteral("runs/planted-") + QLatin1String(planted));
      QVERIFY(QDir().mkpath(other));
      const QString metrics = QDir(other).filePath(QStringLiteral("metrics.csv"));
      if (QLatin1String(planted) == QLatin1String("fifo"))
        QCOMPARE(::mkfifo(metrics.toLocal8Bit().constData(), 0644), 0);
      else
        QVERIFY(QFile::link(QStringLiteral("/dev/zero"), metrics));
      QVERIFY(QFile::link(QStringLiteral("/dev/zero"),
                          QDir(other).filePath(QStringLiteral("events.jsonl"))));
      QElapsedTimer timer;
      timer.start();
      netsmith::ui::RunHistory planted2;
      QString why;
      QVERIFY(!netsmith::ui::RunHistory::read(other, planted2, &why));
      QVERIFY2(why.contains(QStringLiteral("metrics.csv: is ")), qPrintable(why));
      QVERIFY(timer.elapsed() < 5000);
    }
  }
};

QTEST_MAIN(DashboardTest)
#include "dashboard_test.moc"
