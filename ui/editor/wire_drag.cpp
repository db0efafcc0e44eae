#include "editor/wire_drag.h"

#include <QGraphicsLineItem>
#include <QPen>

#include "editor/graph_scene.h"

namespace netsmith::ui {

WireDrag::WireDrag(GraphScene* scene) : m_scene(scene) {}

void WireDrag::start(const QString& from, QPointF scenePos, const QColor& color) {
  m_from = from;
  m_line =
      m_scene->addLine(QLineF(m_scene->outputPort(from), scenePos), QPen(color, 1.5, Qt::DashLine));
}

void WireDrag::moveTo(QPointF scenePos) {
  m_line->setLine(QLineF(m_scene->outputPort(m_from), scenePos));
}

QString WireDrag::finish() {
  m_scene->removeItem(m_line);
  delete m_line;
  m_line = nullptr;
  const QString from = m_from;
  m_from.clear();
  return from;
}

void WireDrag::forget() {
  m_line = nullptr;
  m_from.clear();
}

}  // namespace netsmith::ui
