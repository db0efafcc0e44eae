#pragma once

// A menu action named for the tests and the tool bar that find it, with its shortcut.
#include <QAction>
#include <QKeySequence>

namespace netsmith::ui {

/// Names `action` (when `objectName` is given) and gives it `shortcut` (when not empty).
inline QAction* namedAction(QAction* action, const char* objectName,
                            const QKeySequence& shortcut = {}) {
  if (objectName) action->setObjectName(QLatin1String(objectName));
  if (!shortcut.isEmpty()) action->setShortcut(shortcut);
  return action;
}

}  // namespace netsmith::ui
