// netsmith: the studio. Thin: create the application and the main window, open PROJECT if given.
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QTimer>

#include "dashboard.h"
#include "env/env_report.h"
#include "graph_canvas.h"
#include "main_window.h"
#include "model_page.h"
#include "netsmith/version.h"
#include "ops/op_registry.h"
#include "project_document.h"
#include "project_pages.h"
#include "trainer_session.h"

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setApplicationName(QStringLiteral("Netsmith"));
  QApplication::setOrganizationName(QStringLiteral("Netsmith"));
  QApplication::setApplicationVersion(QStringLiteral(NETSMITH_VERSION));

  QCommandLineParser parser;
  parser.setApplicationDescription(QStringLiteral("A desktop studio for convolutional networks"));
  parser.addHelpOption();
  parser.addVersionOption();
  parser.addPositionalArgument(QStringLiteral("project"),
                               QStringLiteral("a *.netsmith.json file to open"));
  const QCommandLineOption train(QStringLiteral("train"),
                                 QStringLiteral("start training the project once it is open"));
  const QCommandLineOption limitTrain(QStringLiteral("limit-train"),
                                      QStringLiteral("train on at most N samples"),
                                      QStringLiteral("N"));
  const QCommandLineOption limitVal(QStringLiteral("limit-val"),
                                    QStringLiteral("validate on at most N samples"),
                                    QStringLiteral("N"));
  const QCommandLineOption shots(
      QStringLiteral("screenshots"),
      QStringLiteral("save window grabs into DIR, then quit: with --train, during and after "
                     "the run; without, the Model page"),
      QStringLiteral("DIR"));
  parser.addOptions({train, limitTrain, limitVal, shots});
  parser.process(app);

  netsmith::env::configureThreads();
  const auto registry = netsmith::ops::OpRegistry::withBuiltins();
  netsmith::ui::MainWindow window(registry);
  window.setSampleLimits(parser.value(limitTrain).toLongLong(),
                         parser.value(limitVal).toLongLong());
  bool opened = false;
  if (!parser.positionalArguments().isEmpty())
    opened = window.openProject(parser.positionalArguments().first());
  window.show();

  if (opened && !parser.isSet(train) && parser.isSet(shots)) {
    // The Model page of the project, grabbed as editor-<project>.png.
    const QString dir = parser.value(shots);
    QDir().mkpath(dir);
    window.pages()->showPage(netsmith::ui::ProjectPages::ModelPage);
    const auto& nodes = window.document()->project().model.nodes;
    if (nodes.size() > 1)  // the inspector shows the first layer's form
      window.pages()->modelPage()->canvas()->selectNodes({QString::fromStdString(nodes[1].id)});
    QTimer::singleShot(500, &window, [&window, dir] {
      const QString name = QString::fromStdString(window.document()->project().name);
      window.grab().save(QDir(dir).filePath(QStringLiteral("editor-%1.png").arg(name)));
      window.close();
    });
  }
  if (opened && parser.isSet(train)) {
    const QString dir = parser.value(shots);
    if (!dir.isEmpty()) {
      QDir().mkpath(dir);
      auto grab = [&window, dir](const QString& name) {
        window.grab().save(QDir(dir).filePath(name + QStringLiteral(".png")));
      };
      // During training: after the second epoch (the charts have curves, the run goes on).
      QObject::connect(window.session(), &netsmith::ui::TrainerSession::epochEnded, &window,
                       [grab](const netsmith::train::EpochMetrics& e) {
                         if (e.epoch == 1)
                           QTimer::singleShot(300, [grab] { grab(QStringLiteral("training")); });
                       });
      QObject::connect(window.session(), &netsmith::ui::TrainerSession::finished, &window,
                       [&window, grab] {
                         QTimer::singleShot(300, [&window, grab] {
                           grab(QStringLiteral("finished"));
                           window.pages()->showPage(netsmith::ui::ProjectPages::ModelPage);
                           QTimer::singleShot(200, [&window, grab] {
                             grab(QStringLiteral("model"));
                             window.close();
                           });
                         });
                       });
    }
    QTimer::singleShot(0, &window, [&window] {
      window.findChild<QAction*>(QStringLiteral("actionTrainStart"))->trigger();
    });
  }
  return app.exec();
}
