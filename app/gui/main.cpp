// netsmith: the studio. Thin: create the application and the main window, open PROJECT if given.
#include <QApplication>
#include <QCommandLineParser>

#include "env/env_report.h"
#include "main_window.h"
#include "netsmith/version.h"
#include "ops/op_registry.h"

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
  parser.process(app);

  netsmith::env::configureThreads();
  const auto registry = netsmith::ops::OpRegistry::withBuiltins();
  netsmith::ui::MainWindow window(registry);
  if (!parser.positionalArguments().isEmpty())
    window.openProject(parser.positionalArguments().first());
  window.show();
  return app.exec();
}
