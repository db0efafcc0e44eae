#pragma once

// Taking widgets out of a form that may be rebuilt from inside a signal of one of its own
// widgets: a spin box whose arrow was clicked is still inside its mouse handler when the edit it
// started comes back as "rebuild the form". Deleting it there is a use after free (the Augment
// page's crash); retiring it is safe.
#include <QObject>
#include <QWidget>

namespace netsmith::ui {

/// Hides `widget`, silences it and its children (a field that loses focus as it hides must not
/// send its value to a form that now shows something else), takes it out of its parent and
/// deletes it once control is back in the event loop.
inline void retireWidget(QWidget* widget) {
  if (!widget) return;
  widget->blockSignals(true);
  for (QObject* child : widget->findChildren<QObject*>())
    child->blockSignals(true);
  widget->hide();
  widget->setParent(nullptr);
  widget->deleteLater();
}

/// Retires every direct child widget of `parent`.
inline void retireChildWidgets(QWidget* parent) {
  for (QWidget* w : parent->findChildren<QWidget*>(QString(), Qt::FindDirectChildrenOnly))
    retireWidget(w);
}

}  // namespace netsmith::ui
