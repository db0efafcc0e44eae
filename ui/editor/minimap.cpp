#include "editor/minimap.h"

#include <QEvent>
#include <QGraphicsScene>
#include <QGraphicsView>
#include <QMouseEvent>
#include <QPainter>
#include <algorithm>

namespace netsmith::ui {

Minimap::Minimap(QGraphicsView* view) : QWidget(view), m_view(view) {
  setObjectName(QStringLiteral("canvasMinimap"));
  setToolTip(tr("The whole model: click or drag to move the view"));
  setCursor(Qt::PointingHandCursor);
  hide();
}

void Minimap::refresh() {
  stale = false;
  m_items = m_view->scene()->itemsBoundingRect().adjusted(-20, -20, 20, 20);
  if (m_items.isEmpty()) return;
  const double s = std::min(kMaxWidth / m_items.width(), kMaxHeight / m_items.height());
  resize(std::max(40, int(m_items.width() * s)), std::max(40, int(m_items.height() * s)));
  m_picture = QPixmap(size() * devicePixelRatioF());
  m_picture.setDevicePixelRatio(devicePixelRatioF());
  m_picture.fill(palette().color(QPalette::Base));
  QPainter p(&m_picture);
  p.setRenderHint(QPainter::Antialiasing);
  m_view->scene()->render(&p, QRectF(QPointF(0, 0), QSizeF(size())), m_items);
  update();
}

void Minimap::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.drawPixmap(0, 0, m_picture);
  const QRectF visible =
      m_view->mapToScene(m_view->viewport()->rect()).boundingRect().intersected(m_items);
  p.setPen(QPen(palette().color(QPalette::Highlight), 1.5));
  p.setBrush(Qt::NoBrush);
  p.drawRect(toWidget(visible));
  p.setPen(QPen(palette().color(QPalette::Mid), 1));
  p.drawRect(rect().adjusted(0, 0, -1, -1));
}

void Minimap::changeEvent(QEvent* event) {
  if (event->type() == QEvent::PaletteChange) {
    stale = true;
    if (isVisible()) refresh();  // drawn again in the new theme now, not after the next edit
  }
  QWidget::changeEvent(event);
}

void Minimap::mousePressEvent(QMouseEvent* event) {
  m_view->centerOn(toScene(event->position()));
}

void Minimap::mouseMoveEvent(QMouseEvent* event) {
  if (event->buttons() & Qt::LeftButton) m_view->centerOn(toScene(event->position()));
}

QRectF Minimap::toWidget(const QRectF& scene) const {
  const double sx = width() / m_items.width(), sy = height() / m_items.height();
  return {(scene.x() - m_items.x()) * sx, (scene.y() - m_items.y()) * sy, scene.width() * sx,
          scene.height() * sy};
}

QPointF Minimap::toScene(QPointF at) const {
  return {m_items.x() + at.x() * m_items.width() / width(),
          m_items.y() + at.y() * m_items.height() / height()};
}

}  // namespace netsmith::ui
