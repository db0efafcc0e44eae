#pragma once

// Helpers shared by the studio's window tests.
#include <QAction>
#include <QString>
#include <QtGlobal>

#include "shell/main_window.h"

namespace netsmith::uitest {

/// The window's action named `name` (a warning when there is none).
inline QAction* action(const ui::MainWindow& w, const char* name) {
  auto* a = w.findChild<QAction*>(QLatin1String(name));
  if (!a) qWarning("no action %s", name);
  return a;
}

/// The default project.
inline QString example() {
  return QStringLiteral(NETSMITH_SOURCE_DIR "/resources/examples/fashion_mnist.netsmith.json");
}

}  // namespace netsmith::uitest
