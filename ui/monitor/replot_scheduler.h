#pragma once

// Replots a page's charts without starving the event loop: one chart per pass, so input and
// timers run in between; a new round no sooner than 3x the last round's duration (at least
// 40 ms, at most 500 ms); nothing drawn while the page is hidden.
#include <QElapsedTimer>
#include <QObject>
#include <QVector>
#include <functional>

class QCustomPlot;
class QTimer;
class QWidget;

namespace netsmith::ui {

class ReplotScheduler : public QObject {
  Q_OBJECT

 public:
  /// `page`: the widget whose visibility gates drawing; `plotAt(i)`: its chart i of `count`.
  ReplotScheduler(QWidget* page, std::function<QCustomPlot*(int)> plotAt, int count);

  /// Every chart needs drawing: a round is scheduled (or the running one is followed by one).
  void replotAll();
  /// The page was shown again: a round cut short by hiding, or changes made while hidden, are
  /// drawn now.
  void pageShown();

 private:
  void schedule();
  void replotNext();

  QWidget* m_page;
  std::function<QCustomPlot*(int)> m_plotAt;
  int m_count;
  QTimer* m_timer;
  QVector<bool> m_dirty;  ///< charts changed since their last drawing
  QVector<bool> m_round;  ///< charts the running round has still to draw
  QElapsedTimer m_roundClock;
  double m_lastRoundMs = 0;
  bool m_roundRunning = false;
};

}  // namespace netsmith::ui
