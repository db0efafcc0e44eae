#include "editor/canvas_navigation.h"

#include <QGraphicsScene>
#include <QGraphicsView>
#include <QMouseEvent>
#include <QScrollBar>
#include <algorithm>

#include "editor/graph_canvas.h"
#include "editor/minimap.h"

namespace netsmith::ui {

CanvasNavigation::CanvasNavigation(QGraphicsView* view)
    : m_view(view), m_minimap(new Minimap(view)) {
  for (auto* bar : {view->horizontalScrollBar(), view->verticalScrollBar()})
    QObject::connect(bar, &QScrollBar::valueChanged, m_minimap, qOverload<>(&QWidget::update));
}

double CanvasNavigation::zoom() const {
  return m_view->transform().m11();
}

void CanvasNavigation::zoomBy(double factor) {
  const double s = m_view->transform().m11() * factor;
  if (s < 0.03 || s > 6) return;
  m_autoFit = false;  // the user's zoom stays through resizes
  m_view->scale(factor, factor);
  updateMinimap();
}

void CanvasNavigation::fit(bool readable) {
  m_autoFit = true;
  m_fitReadable = readable;
  m_fitPending =
      !m_view->isVisible() || m_view->viewport()->width() < 50 || m_view->viewport()->height() < 50;
  if (m_fitPending) return;
  m_fittedAt = m_view->size();
  fitRect(m_view->scene()->itemsBoundingRect().adjusted(-30, -30, 30, 30),
          readable ? GraphCanvas::readableScale() : 0.03);
}

void CanvasNavigation::zoomTo(const QRectF& r) {
  m_autoFit = false;
  fitRect(r);
}

void CanvasNavigation::fitAgain() {
  fit(m_fitReadable);
}

void CanvasNavigation::fitRect(const QRectF& r, double least) {
  if (r.isEmpty()) return;
  // The whole rectangle, down to `least` (nodes below readable size draw compact); a graph
  // that would need less shows its top and scrolls, with the minimap for the rest.
  const QWidget* viewport = m_view->viewport();
  const double s = std::clamp(
      std::min(viewport->width() / r.width(), viewport->height() / r.height()), least, 1.5);
  m_view->setTransform(QTransform::fromScale(s, s));
  const double visibleHeight = viewport->height() / s;
  m_view->centerOn(r.height() <= visibleHeight
                       ? r.center()
                       : QPointF(r.center().x(), r.top() + visibleHeight / 2));
  updateMinimap();
}

void CanvasNavigation::viewShown() {
  if (m_fitPending || (m_autoFit && m_view->size() != m_fittedAt)) fitAgain();
}

void CanvasNavigation::viewResized() {
  // Fitted until the user zooms: a window laid out again (shown, maximised, a splitter moved)
  // shows the model fitted to its final size, not to the first one it passed through. Only
  // when the view itself changed size: a scroll bar that a fit shows or hides resizes the
  // viewport alone, and fitting again on that would flip the bars for ever.
  if (m_fitPending || (m_autoFit && m_view->size() != m_fittedAt)) fitAgain();
  updateMinimap();
}

void CanvasNavigation::sceneChanged() {
  m_minimap->stale = true;
  updateMinimap();
}

void CanvasNavigation::updateMinimap() {
  const QRectF items = m_view->scene()->itemsBoundingRect();
  const QRectF visible = m_view->mapToScene(m_view->viewport()->rect()).boundingRect();
  const bool fits = items.isEmpty() || visible.contains(items);
  if (fits) {
    m_minimap->hide();
    return;
  }
  // Scrolling, zooming and resizing only move the frame; the picture is redrawn after edits.
  if (m_minimap->stale) m_minimap->refresh();
  const QRect area = m_view->viewport()->geometry();
  m_minimap->move(area.right() - m_minimap->width() - 10, area.top() + 10);
  m_minimap->show();
  m_minimap->raise();
}

bool CanvasNavigation::pressPan(QMouseEvent* event) {
  if (event->button() != Qt::MiddleButton) return false;
  m_panning = true;
  m_panLast = event->pos();
  m_view->viewport()->setCursor(Qt::ClosedHandCursor);
  event->accept();
  return true;
}

bool CanvasNavigation::movePan(QMouseEvent* event) {
  if (!m_panning) return false;
  const QPoint d = event->pos() - m_panLast;
  m_panLast = event->pos();
  auto* h = m_view->horizontalScrollBar();
  auto* v = m_view->verticalScrollBar();
  h->setValue(h->value() - d.x());
  v->setValue(v->value() - d.y());
  return true;
}

bool CanvasNavigation::releasePan(QMouseEvent* event) {
  if (!m_panning || event->button() != Qt::MiddleButton) return false;
  m_panning = false;
  m_view->viewport()->unsetCursor();
  return true;
}

}  // namespace netsmith::ui
