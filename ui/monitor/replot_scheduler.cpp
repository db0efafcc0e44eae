#include "monitor/replot_scheduler.h"

#include <qcustomplot.h>
#include <QTimer>
#include <QWidget>
#include <algorithm>

namespace netsmith::ui {

ReplotScheduler::ReplotScheduler(QWidget* page, std::function<QCustomPlot*(int)> plotAt, int count)
    : QObject(page),
      m_page(page),
      m_plotAt(std::move(plotAt)),
      m_count(count),
      m_timer(new QTimer(this)) {
  m_timer->setSingleShot(true);
  connect(m_timer, &QTimer::timeout, this, &ReplotScheduler::replotNext);
  m_dirty.fill(false, m_count);
  m_round.fill(false, m_count);
}

void ReplotScheduler::replotAll() {
  m_dirty.fill(true, m_count);
  schedule();
}

void ReplotScheduler::pageShown() {
  for (int i = 0; i < m_round.size(); ++i)  // a round cut short by hiding
    if (m_round[i]) m_dirty[i] = true;
  m_round.fill(false, m_count);
  m_roundRunning = false;
  if (m_dirty.indexOf(true) >= 0) schedule();
}

void ReplotScheduler::schedule() {
  if (m_timer->isActive() || m_roundRunning || !m_page->isVisible()) return;
  const double minGap = std::clamp(3.0 * m_lastRoundMs, 40.0, 500.0);
  const double since = m_roundClock.isValid() ? double(m_roundClock.elapsed()) : minGap;
  m_timer->start(int(std::max(0.0, minGap - since)));
}

void ReplotScheduler::replotNext() {
  if (!m_page->isVisible()) {
    m_roundRunning = false;
    return;  // stays dirty; pageShown() draws it
  }
  if (!m_roundRunning) {
    // A round draws the charts dirty when it starts; later updates wait for the next round.
    m_roundRunning = true;
    m_roundClock.start();
    m_round = m_dirty;
    m_dirty.fill(false, m_count);
  }
  const int next = int(m_round.indexOf(true));
  if (next >= 0) {
    m_round[next] = false;
    m_plotAt(next)->replot(QCustomPlot::rpImmediateRefresh);
  }
  if (m_round.indexOf(true) >= 0) {
    m_timer->start(0);  // the next chart after the timers and input due now
    return;
  }
  m_roundRunning = false;
  m_lastRoundMs = double(m_roundClock.nsecsElapsed()) / 1e6;
  if (m_dirty.indexOf(true) >= 0) schedule();
}

}  // namespace netsmith::ui
