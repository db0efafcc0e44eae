// embedding_bench: the Evaluation page's embedding explorer on a real checkpoint, as a user
// drives it: evaluates the test split (its penultimate features kept), lays the samples out
// with t-SNE (a 5 ms probe timer measures how late the event loop runs meanwhile: the layout
// is off the UI thread), then zooms with the wheel and pans with drags, timing each replot,
// and lassoes a region. Prints the figures; never a test.
//   embedding_bench PROJECT CHECKPOINT [--limit N] [--screenshot FILE]
// (--limit N: evaluate a stratified N of the test split; the screenshot at 1280x720.)
#include <qcustomplot.h>
#include <QApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QMouseEvent>
#include <QSplitter>
#include <QTabWidget>
#include <QTimer>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "evaluation/classification_view.h"
#include "evaluation/embedding_panel.h"
#include "evaluation/evaluation_page.h"
#include "ops/op_registry.h"
#include "registries/registries.h"
#include "shell/main_window.h"
#include "shell/project_pages.h"

namespace {

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::size_t(std::clamp(p * double(v.size() - 1), 0.0, double(v.size() - 1)))];
}

/// Waits for `signal` of `object` while the event loop runs.
template <typename Object, typename Signal>
bool waitFor(Object* object, Signal signal, int ms) {
  QEventLoop loop;
  bool fired = false;
  QObject::connect(object, signal, &loop, [&] {
    fired = true;
    loop.quit();
  });
  QTimer::singleShot(ms, &loop, &QEventLoop::quit);
  loop.exec();
  return fired;
}

void send(QWidget* target, QEvent* event) {
  QApplication::sendEvent(target, event);
  QApplication::processEvents();
}

}  // namespace

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  if (argc < 3) {
    std::fprintf(stderr, "usage: embedding_bench PROJECT CHECKPOINT [--screenshot FILE]\n");
    return 2;
  }
  QString screenshot;
  for (int i = 3; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--screenshot") == 0) screenshot = QString::fromLocal8Bit(argv[i + 1]);
  const auto registries = netsmith::Registries::builtins();
  netsmith::ui::MainWindow window(registries);
  if (!window.openProject(QString::fromLocal8Bit(argv[1]), true)) return 1;
  window.resize(1280, 720);
  window.show();
  window.pages()->showPage(netsmith::ui::ProjectPages::EvalPage);
  auto* page = window.pages()->evaluationPage();
  page->setCheckpoint(QString::fromLocal8Bit(argv[2]));

  QElapsedTimer clock;
  clock.start();
  page->evaluate();
  if (!waitFor(page, &netsmith::ui::EvaluationPage::evaluated, 600000) ||
      !page->errorText().isEmpty()) {
    std::fprintf(stderr, "evaluation failed: %s\n", qPrintable(page->errorText()));
    return 1;
  }
  const double evaluateSeconds = double(clock.elapsed()) / 1000;
  std::printf("evaluation: %zu samples, %lld features each, %.1f s\n",
              page->result().samples.size(), (long long)page->result().featureWidth,
              evaluateSeconds);

  auto* view = qobject_cast<netsmith::ui::ClassificationView*>(page->taskView());
  if (!view) {
    std::fprintf(stderr, "the evaluation shows no classification view\n");
    return 1;
  }
  auto* panel = view->embedding();
  auto* details = page->findChild<QTabWidget*>(QStringLiteral("evaluationDetails"));
  details->setCurrentWidget(panel);
  // The matrix narrow, the explorer wide.
  if (auto* split = qobject_cast<QSplitter*>(details->parentWidget())) split->setSizes({330, 950});
  // The event loop's lateness while t-SNE runs.
  std::vector<double> lateness;
  QElapsedTimer tick;
  QTimer probe;
  probe.setInterval(5);
  QObject::connect(&probe, &QTimer::timeout, [&] {
    if (tick.isValid()) lateness.push_back(std::max(0.0, double(tick.nsecsElapsed()) / 1e6 - 5));
    tick.restart();
  });
  probe.start();
  clock.restart();
  panel->layOut();
  if (!waitFor(panel, &netsmith::ui::EmbeddingPanel::laidOut, 900000)) return 1;
  probe.stop();
  std::printf(
      "t-SNE layout: %zu points in %.1f s; event loop late by median %.2f ms, p99 %.2f "
      "ms, max %.2f ms while it ran\n",
      panel->points().size(), double(clock.elapsed()) / 1000, percentile(lateness, 0.5),
      percentile(lateness, 0.99), percentile(lateness, 1.0));

  // Zoom in with the wheel at the centre, then pan with drags: each followed by its replot.
  auto* chart = panel->chart();
  QApplication::processEvents();
  const QPointF centre = chart->axisRect()->center();
  std::vector<double> replots;
  for (int i = 0; i < 20; ++i) {
    QWheelEvent wheel(centre, chart->mapToGlobal(centre), QPoint(), QPoint(0, i < 10 ? 120 : -120),
                      Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
    send(chart, &wheel);  // the chart replots as the wheel asks
    replots.push_back(chart->replotTime());
  }
  QMouseEvent press(QEvent::MouseButtonPress, centre, chart->mapToGlobal(centre), Qt::LeftButton,
                    Qt::LeftButton, Qt::NoModifier);
  send(chart, &press);
  for (int i = 1; i <= 30; ++i) {
    const QPointF at = centre + QPointF(4 * i, 2 * i);
    QMouseEvent move(QEvent::MouseMove, at, chart->mapToGlobal(at), Qt::NoButton, Qt::LeftButton,
                     Qt::NoModifier);
    send(chart, &move);
    replots.push_back(chart->replotTime());
  }
  const QPointF end = centre + QPointF(120, 60);
  QMouseEvent release(QEvent::MouseButtonRelease, end, chart->mapToGlobal(end), Qt::LeftButton,
                      Qt::NoButton, Qt::NoModifier);
  send(chart, &release);
  std::printf(
      "zoom and pan: %zu steps, the replot each made: median %.1f ms, p95 %.1f ms, max "
      "%.1f ms (%.0f frames a second at the median)\n",
      replots.size(), percentile(replots, 0.5), percentile(replots, 0.95), percentile(replots, 1.0),
      1000.0 / std::max(0.1, percentile(replots, 0.5)));

  // Back to the whole layout, then a lasso around a quarter of it and a hovered point.
  chart->rescaleAxes();
  chart->replot();
  QApplication::processEvents();
  const QRect area = chart->axisRect()->rect();
  QPolygonF loop;
  for (int k = 0; k < 24; ++k) {
    const double a = 2 * M_PI * k / 24;
    loop << QPointF(area.left() + area.width() * (0.3 + 0.12 * std::cos(a)),
                    area.top() + area.height() * (0.35 + 0.15 * std::sin(a)));
  }
  clock.restart();
  panel->selectInside(loop);
  std::printf("lasso: %zu selected in %.1f ms: %s\n", panel->selection().size(),
              double(clock.nsecsElapsed()) / 1e6,
              qPrintable(panel->selectionText()->text().replace(QStringLiteral("<br>"),
                                                                QStringLiteral("; "))));
  if (!panel->points().empty()) {
    const QPointF at = panel->pixelOf(int(panel->points().size() / 2));
    QMouseEvent hover(QEvent::MouseMove, at, chart->mapToGlobal(at), Qt::NoButton, Qt::NoButton,
                      Qt::NoModifier);
    send(chart, &hover);
  }
  if (!screenshot.isEmpty()) {
    QApplication::processEvents();
    window.grab().save(screenshot);
    std::printf("screenshot: %s\n", qPrintable(screenshot));
  }
  return 0;
}
