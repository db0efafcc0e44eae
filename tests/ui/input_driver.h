#pragma once

// Real input for the studio's widget tests: clicks on spin arrows, typing then Tab or Enter,
// drop-down choices from their popup with the keyboard, wheel turns that go through the window
// system as a mouse's do. No setValue(): what a person can do, and only that.
#include <QtTest/qtestspontaneevent.h>
#include <QAbstractItemView>
#include <QAbstractSpinBox>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QLineEdit>
#include <QStyle>
#include <QStyleOptionSpinBox>
#include <QWheelEvent>
#include <QtTest>

namespace netsmith::uitest {

/// Lets pending deletions and queued calls run, as the event loop does between two inputs.
inline void settle() {
  QCoreApplication::processEvents();
  QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
  QCoreApplication::processEvents();
}

/// The rectangle of a spin box's up or down arrow, from its style.
inline QRect spinArrow(QAbstractSpinBox* spin, bool up) {
  struct Probe : QAbstractSpinBox {
    using QAbstractSpinBox::initStyleOption;
  };
  QStyleOptionSpinBox option;
  (spin->*(&Probe::initStyleOption))(&option);
  return spin->style()->subControlRect(QStyle::CC_SpinBox, &option,
                                       up ? QStyle::SC_SpinBoxUp : QStyle::SC_SpinBoxDown, spin);
}

/// One click on the up (or down) arrow of `spin`.
inline void clickArrow(QAbstractSpinBox* spin, bool up) {
  QTest::mouseClick(spin, Qt::LeftButton, {}, spinArrow(spin, up).center());
  settle();
}

/// Clicks into the text of `widget` (a spin box or line edit), selects it all, types `text`
/// and ends with `end` (Tab or Return).
inline void typeInto(QWidget* widget, const QString& text, Qt::Key end = Qt::Key_Tab) {
  QTest::mouseClick(widget, Qt::LeftButton, {}, QPoint(6, widget->height() / 2));
  QTest::keyClick(widget, Qt::Key_A, Qt::ControlModifier);
  QTest::keyClicks(widget, text);
  QTest::keyClick(widget, end);
  settle();
}

/// Opens `combo`'s popup with a click and picks item `index` with the keyboard.
inline void chooseItem(QComboBox* combo, int index) {
  // An editable combo opens its list from the arrow at its right end (a click on its text
  // places the cursor there).
  const QPoint at = combo->isEditable() ? QPoint(combo->width() - 8, combo->height() / 2)
                                        : QPoint(combo->width() / 2, combo->height() / 2);
  QTest::mouseClick(combo, Qt::LeftButton, {}, at);
  settle();
  QAbstractItemView* view = combo->view();
  if (!view->isVisible()) return;
  QTest::keyClick(view, Qt::Key_Home);
  for (int i = 0; i < index; ++i)
    QTest::keyClick(view, Qt::Key_Down);
  QTest::keyClick(view, Qt::Key_Return);
  settle();
}

/// A click on a check box's indicator.
inline void clickCheck(QCheckBox* check) {
  QTest::mouseClick(check, Qt::LeftButton, {}, QPoint(8, check->height() / 2));
  settle();
}

/// A wheel turn (one notch, up when `steps` > 0) at `at` in `widget`, delivered as the window
/// system delivers a mouse's (spontaneous), so that Qt hands it on to the parent when the widget
/// ignores it.
inline void turnWheel(QWidget* widget, QPoint at, int steps = -1) {
  QWheelEvent wheel(QPointF(at), QPointF(widget->mapToGlobal(at)), QPoint(), QPoint(0, 120 * steps),
                    Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
  QSpontaneKeyEvent::setSpontaneous(&wheel);
  qApp->notify(widget, &wheel);
  settle();
}

}  // namespace netsmith::uitest
