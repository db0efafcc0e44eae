#pragma once

// Fields take the mouse wheel only when they have focus, as in Qt Creator's and KDE's forms: a
// wheel turn over a form scrolls the form, and never changes the number field or the drop-down
// that happens to pass under the pointer (the Training page's eps went from 1e-8 to 0 that way).
#include <QObject>

namespace netsmith::ui {

/// An application event filter: spin boxes, combo boxes and sliders (not scroll bars) get focus
/// from a click or Tab, not from the wheel, and pass a wheel turn to their parent (the scroll area)
/// while they do not have focus. The window installs one on the application.
class WheelGuard : public QObject {
  Q_OBJECT

 public:
  using QObject::QObject;

  /// Whether `watched` is a field that the guard keeps from taking an unfocused wheel turn.
  static bool guards(const QObject* watched);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;
};

}  // namespace netsmith::ui
