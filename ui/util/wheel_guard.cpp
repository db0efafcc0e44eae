#include "util/wheel_guard.h"

#include <QAbstractSpinBox>
#include <QComboBox>
#include <QEvent>
#include <QSlider>
#include <QWidget>

namespace netsmith::ui {

bool WheelGuard::guards(const QObject* watched) {
  return qobject_cast<const QAbstractSpinBox*>(watched) ||
         qobject_cast<const QComboBox*>(watched) || qobject_cast<const QSlider*>(watched);
}

bool WheelGuard::eventFilter(QObject* watched, QEvent* event) {
  switch (event->type()) {
    case QEvent::Polish:
    case QEvent::FocusIn:  // widgets made before the filter was installed
      if (guards(watched)) {
        auto* w = static_cast<QWidget*>(watched);
        // WheelFocus would hand the field focus on the turn itself, before any filter.
        if (w->focusPolicy() == Qt::WheelFocus) w->setFocusPolicy(Qt::StrongFocus);
      }
      break;
    case QEvent::Wheel:
      if (guards(watched) && !static_cast<QWidget*>(watched)->hasFocus()) {
        // Handled here, and not accepted: QApplication hands the turn on to the parent.
        event->ignore();
        return true;
      }
      break;
    default:
      break;
  }
  return QObject::eventFilter(watched, event);
}

}  // namespace netsmith::ui
