#pragma once

// Helpers shared by the studio's window tests.
#include <QAction>
#include <QSize>
#include <QString>
#include <QTest>
#include <QWidget>
#include <QtGlobal>

#include "shell/main_window.h"

namespace netsmith::uitest {

/// The window's action named `name` (a warning when there is none).
inline QAction* action(const ui::MainWindow& w, const char* name) {
  auto* a = w.findChild<QAction*>(QLatin1String(name));
  if (!a) qWarning("no action %s", name);
  return a;
}

/// Shows `widget` at `size` (a laptop's screen by default); whether the window system exposed it.
inline bool showAt(QWidget& widget, QSize size = QSize(1280, 720)) {
  widget.resize(size);
  widget.show();
  return QTest::qWaitForWindowExposed(&widget);
}

/// The default project.
inline QString example() {
  return QStringLiteral(NETSMITH_SOURCE_DIR "/resources/examples/fashion_mnist.netsmith.json");
}

/// With NETSMITH_SCREENSHOT_DIR set: `what` grabbed in the dark and then the light theme (the
/// window's View > Theme), as STEM-dark.png and STEM-light.png; the light theme stays.
inline bool shootThemes(const ui::MainWindow& window, QWidget* what, const QString& stem) {
  const QString shots = qEnvironmentVariable("NETSMITH_SCREENSHOT_DIR");
  if (shots.isEmpty()) return true;
  for (const char* theme : {"dark", "light"}) {
    action(window, (QByteArray("actionTheme_") + theme).constData())->trigger();
    QTest::qWait(150);  // the queued replots and layouts
    if (!what->grab().save(shots + QLatin1Char('/') + stem + QLatin1Char('-') +
                           QLatin1String(theme) + QStringLiteral(".png")))
      return false;
  }
  return true;
}

}  // namespace netsmith::uitest
