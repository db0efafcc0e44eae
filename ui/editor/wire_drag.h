#pragma once

// A wire drawn from a node's output port while the left button is held; released on another
// node, the canvas asks the editor to connect the two.
#include <QColor>
#include <QPointF>
#include <QString>

class QGraphicsLineItem;

namespace netsmith::ui {

class GraphScene;

class WireDrag {
 public:
  explicit WireDrag(GraphScene* scene);

  /// Draws a dashed wire in `color` from `from`'s output port to `scenePos`.
  void start(const QString& from, QPointF scenePos, const QColor& color);
  bool active() const { return m_line != nullptr; }
  /// Moves the wire's loose end.
  void moveTo(QPointF scenePos);
  /// Removes the wire; returns the node it started from.
  QString finish();
  /// The scene was cleared, and the wire with it.
  void forget();

 private:
  GraphScene* m_scene;
  QString m_from;
  QGraphicsLineItem* m_line = nullptr;
};

}  // namespace netsmith::ui
