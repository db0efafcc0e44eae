// netsmith: the studio. Thin: create the application and the main window, open PROJECT if given.
#include <QAction>
#include <QApplication>
#include <QCommandLineParser>
#include <QFileInfo>
#include <QIcon>
#include <QTimer>

#include <QDir>
#include "env/env_report.h"
#include "evaluation/task_view.h"
#include "monitor/experiments_page.h"
#include "netsmith/version.h"
#include "registries/registries.h"
#include "screenshots.h"
#include "shell/dialogs.h"
#include "shell/main_window.h"
#include "shell/project_pages.h"
#include "shell/run_controller.h"

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setApplicationName(QStringLiteral("Netsmith"));
  QApplication::setOrganizationName(QStringLiteral("Netsmith"));
  QApplication::setApplicationVersion(QStringLiteral(NETSMITH_VERSION));
  // The icon: the installed theme's, else the one next to the program or in the source tree.
  const QString appDir = QCoreApplication::applicationDirPath();
  QIcon icon;
  for (const QString& path :
       {appDir + QStringLiteral("/../share/icons/hicolor/256x256/apps/netsmith.png"),
        QStringLiteral(NETSMITH_RESOURCE_DIR "/icons/hicolor/256x256/netsmith.png")})
    if (icon.isNull() && QFileInfo::exists(path)) icon = QIcon(path);
  QApplication::setWindowIcon(QIcon::fromTheme(QStringLiteral("netsmith"), icon));

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
      QStringLiteral("save grabs of the pages into DIR, then quit: with --train, during and "
                     "after the run (dashboard, runs, evaluation); without, the Model, Data, "
                     "Augment and Training pages"),
      QStringLiteral("DIR"));
  const QCommandLineOption sweep(
      QStringLiteral("sweep"),
      QStringLiteral("show the sweep in DIR (a sweeps/NAME-TIME folder) on the Experiments page; "
                     "with --screenshots, save it as experiments.png, then quit"),
      QStringLiteral("DIR"));
  const QCommandLineOption theme(QStringLiteral("theme"),
                                 QStringLiteral("light, dark or system for this start (the "
                                                "preference is kept)"),
                                 QStringLiteral("NAME"));
  const QCommandLineOption runSweep(
      QStringLiteral("run-sweep"),
      QStringLiteral("with --screenshots: run the project's sweep from the Experiments page, "
                     "grab the page and the dashboard with the running trials overlaid "
                     "(experiments-running.png, dashboard-sweep.png), stop it, then quit"));
  parser.addOptions({train, limitTrain, limitVal, shots, sweep, theme, runSweep});
  parser.process(app);

  netsmith::env::configureThreads();
  // Every registry the studio knows, built here once and passed down.
  netsmith::ui::MainWindow window(netsmith::Registries::builtins(),
                                  netsmith::ui::TaskViewRegistry::builtins());
  bool opened = false;
  if (!parser.positionalArguments().isEmpty())
    opened = window.openProject(parser.positionalArguments().first());
  // After opening: a quick run's limits belong to the project they are set for (opening one
  // clears them).
  window.runs()->setSampleLimits(parser.value(limitTrain).toLongLong(),
                                 parser.value(limitVal).toLongLong());
  if (parser.isSet(theme)) netsmith::ui::applyTheme(parser.value(theme));
  window.show();

  if (opened && parser.isSet(sweep)) {
    window.pages()->showPage(netsmith::ui::ProjectPages::ExperimentsPage);
    window.pages()->experimentsPage()->openSweep(parser.value(sweep));
    if (parser.isSet(shots)) {
      QTimer::singleShot(1000, &window, [&window, dir = parser.value(shots)] {
        QDir().mkpath(dir);
        window.grab().save(QDir(dir).filePath(QStringLiteral("experiments.png")));
        window.close();
      });
    }
  } else if (!opened && parser.isSet(shots)) {
    // No project: the start page, light and dark.
    QTimer::singleShot(700, &window, [&window, dir = parser.value(shots)] {
      QDir().mkpath(dir);
      for (const char* theme : {"light", "dark"}) {
        netsmith::ui::applyTheme(QString::fromLatin1(theme));
        QApplication::processEvents();
        window.grab().save(
            QDir(dir).filePath(QStringLiteral("start-%1.png").arg(QLatin1String(theme))));
      }
      window.close();
    });
  } else if (opened && parser.isSet(shots) && parser.isSet(runSweep)) {
    scheduleSweepScreenshots(window, parser.value(shots));
  } else if (opened && parser.isSet(shots)) {
    scheduleScreenshots(window, parser.value(shots), parser.isSet(train));
  } else if (opened && parser.isSet(train)) {
    QTimer::singleShot(0, &window, [&window] {
      window.findChild<QAction*>(QStringLiteral("actionTrainStart"))->trigger();
    });
  }
  return app.exec();
}
