// ui_bench: drives the dashboard with 1,000,000 synthetic points per series, then feeds it at a
// high event rate while a 5 ms probe timer measures how late the event loop runs it, and each
// chart reports its replot time. Prints the figures; never a test.
//   ui_bench [--points N] [--rate BATCHES_PER_SECOND] [--seconds S]
#include <qcustomplot.h>
#include <QApplication>
#include <QElapsedTimer>
#include <QTimer>

#include <unistd.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "monitor/dashboard.h"

namespace {

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const auto i =
      static_cast<std::size_t>(std::clamp(p * double(v.size() - 1), 0.0, double(v.size() - 1)));
  return v[i];
}

double rssMiB() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return double(resident) * double(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

struct Feed {
  std::mt19937 rng{7};
  std::normal_distribution<double> noise{0, 0.05};
  std::int64_t step = 0;
  std::int64_t perEpoch = 1000;
  QVector<netsmith::run::BatchMetrics> next(int n) {
    QVector<netsmith::run::BatchMetrics> out;
    out.reserve(n);
    for (int i = 0; i < n; ++i) {
      netsmith::run::BatchMetrics b;
      ++step;
      b.step = step;
      b.epoch = (step - 1) / perEpoch;
      b.batch = (step - 1) % perEpoch;
      b.batchesPerEpoch = perEpoch;
      b.totalSteps = 10'000'000;
      b.loss = 2.0 * std::exp(-double(step) / 200000.0) + 0.2 + noise(rng);
      b.lr = 1e-3 * 0.5 * (1 + std::cos(double(step) / 1e6));
      b.gradNorm = std::exp(noise(rng) * 10);
      b.imagesPerSecond = 1000 + 100 * noise(rng);
      b.seconds = double(step) * 0.01;
      b.memory.bytes = 400LL * 1024 * 1024 + (step % 1000) * 1024;
      out.push_back(b);
    }
    return out;
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
    qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  long points = 1'000'000;
  int rate = 2000;  // batches per second
  double seconds = 10;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--points")) points = std::atol(argv[i + 1]);
    if (!std::strcmp(argv[i], "--rate")) rate = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--seconds")) seconds = std::atof(argv[i + 1]);
  }

  netsmith::ui::Dashboard dash;
  dash.resize(1600, 1000);
  dash.show();
  Feed feed;
  std::vector<double> replotMs;
  for (const auto& id : netsmith::ui::Dashboard::chartIds()) {
    QCustomPlot* plot = dash.chart(id);
    QObject::connect(plot, &QCustomPlot::afterReplot,
                     [plot, &replotMs] { replotMs.push_back(plot->replotTime()); });
  }

  // Phase 1: a million points per series, appended in chunks of 10,000.
  QElapsedTimer clock;
  clock.start();
  const double rss0 = rssMiB();
  for (long done = 0; done < points;) {
    const int n = int(std::min<long>(10000, points - done));
    dash.addBatches(feed.next(n));
    done += n;
  }
  const double fillMs = double(clock.nsecsElapsed()) / 1e6;
  app.processEvents();
  replotMs.clear();
  clock.restart();
  for (const auto& id : netsmith::ui::Dashboard::chartIds())
    dash.chart(id)->replot();
  const double fullReplotMs = double(clock.nsecsElapsed()) / 1e6;
  std::printf("filled %ld points per series (%d series) in %.0f ms; RSS +%.0f MiB\n", points, 9,
              fillMs, rssMiB() - rss0);
  std::printf("replot of all 6 charts at %ld points: %.1f ms\n", points, fullReplotMs);
  replotMs.clear();

  // Phase 2: live feed at `rate` batches/s in 40 ms drains (as TrainerSession delivers),
  // an epoch every 1000 steps, while a 5 ms probe measures event-loop latency.
  std::vector<double> lateness;
  QElapsedTimer probeClock;
  probeClock.start();
  qint64 expected = 5'000'000;
  QTimer probe;
  probe.setTimerType(Qt::PreciseTimer);
  probe.setInterval(5);
  QObject::connect(&probe, &QTimer::timeout, [&] {
    const qint64 now = probeClock.nsecsElapsed();
    lateness.push_back(double(std::max<qint64>(0, now - expected)) / 1e6);
    expected = now + 5'000'000;
  });
  QTimer drain;
  drain.setInterval(40);
  const int perDrain = std::max(1, rate * 40 / 1000);
  std::int64_t epochs = feed.step / feed.perEpoch;
  QObject::connect(&drain, &QTimer::timeout, [&] {
    dash.addBatches(feed.next(perDrain));
    if (feed.step / feed.perEpoch > epochs) {
      netsmith::run::EpochMetrics e;
      e.epoch = epochs++;
      e.hasValidation = true;
      e.validation.loss = 0.3;
      e.validation.accuracy = 0.9;
      e.trainLoss = 0.35;
      e.trainAccuracy = 0.88;
      dash.addEpoch(e);
    }
  });
  probe.start();
  drain.start();
  QTimer::singleShot(int(seconds * 1000), &app, &QApplication::quit);
  app.exec();

  std::printf(
      "live: %d batches/s for %.0f s (%d points per 40 ms drain), %lld points per series "
      "at the end\n",
      rate, seconds, perDrain, (long long)feed.step);
  std::printf(
      "event-loop latency (5 ms probe, %zu samples): p50 %.2f ms, p99 %.2f ms, max %.2f "
      "ms (target p99 < 50 ms)\n",
      lateness.size(), percentile(lateness, 0.5), percentile(lateness, 0.99),
      percentile(lateness, 1.0));
  std::printf("chart replot time (%zu replots): p50 %.2f ms, p99 %.2f ms, max %.2f ms\n",
              replotMs.size(), percentile(replotMs, 0.5), percentile(replotMs, 0.99),
              percentile(replotMs, 1.0));
  std::printf("process RSS %.0f MiB\n", rssMiB());
  return 0;
}
