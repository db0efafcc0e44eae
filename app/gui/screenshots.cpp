#include "screenshots.h"

#include <QAction>
#include <QDir>
#include <QElapsedTimer>
#include <QGroupBox>
#include <QScrollArea>
#include <QTableWidget>
#include <QTimer>
#include <memory>

#include "editor/graph_canvas.h"
#include "editor/model_page.h"
#include "evaluation/classification_view.h"
#include "evaluation/evaluation_page.h"
#include "evaluation/sample_dialog.h"
#include "forms/augment_page.h"
#include "forms/data_page.h"
#include "forms/training_page.h"
#include "monitor/dashboard.h"
#include "monitor/experiments_page.h"
#include "session/project_document.h"
#include "session/trainer_session.h"
#include "shell/main_window.h"
#include "shell/project_pages.h"

using netsmith::ui::MainWindow;
using netsmith::ui::ProjectPages;

namespace {

/// Runs `then` once, at the first emission of `signal` or after `timeoutMs`, whichever is first.
template <class Sender, class Signal>
void onceOr(Sender* sender, Signal signal, int timeoutMs, std::function<void()> then) {
  auto fired = std::make_shared<bool>(false);
  auto run = [fired, then] {
    if (*fired) return;
    *fired = true;
    then();
  };
  auto connection = std::make_shared<QMetaObject::Connection>();
  *connection = QObject::connect(sender, signal, sender, [run, connection] {
    QObject::disconnect(*connection);
    QTimer::singleShot(400, run);  // let the page draw
  });
  QTimer::singleShot(timeoutMs, run);
}

/// One grab of the tour: a page at a window size in a theme.
struct TourShot {
  QSize size;
  QString theme;  ///< "light" or "dark"
  ProjectPages::Page page;
  QString name;
};

/// Every page at 1280x720 and 1920x1080, light and dark: DIR/<w>x<h>-<theme>/<page>.png. The
/// user's theme is put back afterwards; then `done`.
void takeTour(MainWindow& window, const QString& dir, std::function<void()> done) {
  const QList<QPair<ProjectPages::Page, QString>> pages = {
      {ProjectPages::ModelPage, QStringLiteral("model")},
      {ProjectPages::DataPage, QStringLiteral("data")},
      {ProjectPages::AugmentPage, QStringLiteral("augment")},
      {ProjectPages::TrainingPage, QStringLiteral("training")},
      {ProjectPages::DashboardPage, QStringLiteral("dashboard")},
      {ProjectPages::RunsPage, QStringLiteral("runs")},
      {ProjectPages::EvalPage, QStringLiteral("evaluation")},
      {ProjectPages::ExperimentsPage, QStringLiteral("experiments")}};
  auto shots = std::make_shared<QList<TourShot>>();
  for (const QSize size : {QSize(1280, 720), QSize(1920, 1080)})
    for (const QString& theme : {QStringLiteral("light"), QStringLiteral("dark")})
      for (const auto& [page, name] : pages)
        shots->append({size, theme, page, name});
  QString userTheme = QStringLiteral("system");
  for (auto* a : window.findChildren<QAction*>())
    if (a->objectName().startsWith(QStringLiteral("actionTheme_")) && a->isChecked())
      userTheme = a->objectName().mid(12);
  auto setTheme = [&window](const QString& theme) {
    if (auto* a = window.findChild<QAction*>(QStringLiteral("actionTheme_") + theme)) a->trigger();
  };
  auto next = std::make_shared<std::function<void(int)>>();
  *next = [&window, dir, shots, next, setTheme, userTheme, done](int i) {
    if (i >= shots->size()) {
      setTheme(userTheme);
      done();
      return;
    }
    const TourShot& shot = (*shots)[i];
    if (i == 0 || (*shots)[i - 1].theme != shot.theme) setTheme(shot.theme);
    window.resize(shot.size);
    window.pages()->showPage(shot.page);
    if (shot.page == ProjectPages::AugmentPage) window.pages()->augmentPage()->updatePreview();
    QTimer::singleShot(700, &window, [&window, dir, shot, next, i] {
      const QString folder = QStringLiteral("%1/%2x%3-%4")
                                 .arg(dir)
                                 .arg(shot.size.width())
                                 .arg(shot.size.height())
                                 .arg(shot.theme);
      QDir().mkpath(folder);
      window.grab().save(folder + QStringLiteral("/") + shot.name + QStringLiteral(".png"));
      (*next)(i + 1);
    });
  };
  (*next)(0);
}

}  // namespace

void scheduleScreenshots(MainWindow& window, const QString& dir, bool train) {
  QDir().mkpath(dir);
  auto grab = [&window, dir](const QString& name) {
    window.grab().save(QDir(dir).filePath(name + QStringLiteral(".png")));
  };
  auto* pages = window.pages();
  if (!train) {
    pages->showPage(ProjectPages::ModelPage);
    const auto& nodes = window.document()->project().model.nodes;
    if (nodes.size() > 1)  // the inspector shows the first layer's form
      pages->modelPage()->canvas()->selectNodes({QString::fromStdString(nodes[1].id)});
    QTimer::singleShot(500, &window, [&window, pages, grab] {
      const QString name = QString::fromStdString(window.document()->project().name);
      auto* canvas = pages->modelPage()->canvas();
      canvas->fitToView();
      grab(QStringLiteral("editor-") + name);
      if (!canvas->groups().isEmpty()) {  // an imported network: its stages as blocks
        canvas->setAllGroupsCollapsed(true);
        canvas->fitToView();
        grab(QStringLiteral("editor-") + name + QStringLiteral("-collapsed"));
        canvas->setAllGroupsCollapsed(false);
      }
      pages->showPage(ProjectPages::DataPage);  // starts the scan
      onceOr(pages->dataPage(), &netsmith::ui::DataPage::scanned, 120000, [&window, pages, grab] {
        grab(QStringLiteral("data"));
        pages->showPage(ProjectPages::AugmentPage);
        pages->augmentPage()->updatePreview();
        onceOr(pages->augmentPage(), &netsmith::ui::AugmentPage::previewUpdated, 60000,
               [&window, pages, grab] {
                 grab(QStringLiteral("augment"));
                 pages->showPage(ProjectPages::TrainingPage);
                 QTimer::singleShot(1500, &window, [&window, pages, grab] {
                   grab(QStringLiteral("training-options"));
                   // The device, local processes and torch.distributed groups.
                   auto* page = pages->trainingPage();
                   for (auto* box : page->findChildren<QGroupBox*>()) {
                     if (!box->title().startsWith(QStringLiteral("Processes"))) continue;
                     if (auto* scroll = page->findChild<QScrollArea*>())
                       scroll->ensureWidgetVisible(box, 0, 0);
                   }
                   QTimer::singleShot(300, &window, [&window, grab] {
                     grab(QStringLiteral("training-processes"));
                     window.close();
                   });
                 });
               });
      });
    });
    return;
  }
  // During training: after the second epoch (the charts have curves, the run goes on).
  QObject::connect(window.session(), &netsmith::ui::TrainerSession::epochEnded, &window,
                   [grab](const netsmith::run::EpochMetrics& e) {
                     if (e.epoch == 1)
                       QTimer::singleShot(300, [grab] { grab(QStringLiteral("training")); });
                   });
  QObject::connect(
      window.session(), &netsmith::ui::TrainerSession::finished, &window,
      [&window, pages, grab, dir] {
        QTimer::singleShot(300, &window, [&window, pages, grab, dir] {
          grab(QStringLiteral("finished"));
          pages->showPage(ProjectPages::RunsPage);
          QTimer::singleShot(300, &window, [&window, pages, grab, dir] {
            grab(QStringLiteral("runs"));
            pages->showPage(ProjectPages::EvalPage);
            auto* eval = pages->evaluationPage();
            eval->evaluate();
            onceOr(eval, &netsmith::ui::EvaluationPage::evaluated, 120000,
                   [&window, eval, grab, dir] {
                     // The most confused pair of classes, opened.
                     const auto& cm = eval->result().metrics.confusion;
                     int br = 0, bc = 1;
                     for (int r = 0; r < int(cm.size()); ++r)
                       for (int c = 0; c < int(cm.size()); ++c)
                         if (r != c && cm[std::size_t(r)][std::size_t(c)] >
                                           cm[std::size_t(br)][std::size_t(bc)]) {
                           br = r;
                           bc = c;
                         }
                     if (auto* view =
                             qobject_cast<netsmith::ui::ClassificationView*>(eval->taskView());
                         view && !cm.empty())
                       view->showCell(br, bc);
                     QTimer::singleShot(400, &window, [&window, eval, grab, dir, br, bc] {
                       grab(QStringLiteral("evaluation"));
                       // Its worst sample, large, with the Grad-CAM map.
                       const auto cell = eval->result().cell(br, bc);
                       if (!cell.empty()) {
                         if (auto* d = eval->openSample(cell.front()->position)) {
                           d->grab().save(QDir(dir).filePath("gradcam.png"));
                           d->close();
                         }
                       }
                       takeTour(window, dir, [&window] { window.close(); });
                     });
                   });
          });
        });
      });
  QTimer::singleShot(0, &window, [&window] {
    window.findChild<QAction*>(QStringLiteral("actionTrainStart"))->trigger();
  });
}

void scheduleSweepScreenshots(MainWindow& window, const QString& dir) {
  QDir().mkpath(dir);
  auto* pages = window.pages();
  auto* experiments = pages->experimentsPage();
  QTimer::singleShot(500, &window, [&window, pages, experiments, dir] {
    pages->showPage(ProjectPages::ExperimentsPage);
    if (!experiments->runSweep()) {
      window.close();
      return;
    }
    // Every 2 s: once a running trial has 8 or more steps drawn, the grabs (10 minutes at most).
    auto* poll = new QTimer(&window);
    auto started = std::make_shared<QElapsedTimer>();
    started->start();
    QObject::connect(
        poll, &QTimer::timeout, &window, [&window, pages, experiments, dir, poll, started] {
          auto* dash = window.dashboard();
          int points = 0;
          for (const auto& name : dash->overlayNames())
            points = std::max(points, dash->overlayPointCount(name));
          if (points < 8 && started->elapsed() < 600000) return;
          poll->stop();
          window.grab().save(QDir(dir).filePath(QStringLiteral("experiments-running.png")));
          pages->showPage(ProjectPages::DashboardPage);
          QTimer::singleShot(800, &window, [&window, experiments, dir] {
            window.grab().save(QDir(dir).filePath(QStringLiteral("dashboard-sweep.png")));
            QObject::connect(experiments, &netsmith::ui::ExperimentsPage::sweepEnded, &window,
                             [&window] { window.close(); });
            experiments->stopSweep();
          });
        });
    poll->start(2000);
  });
}
