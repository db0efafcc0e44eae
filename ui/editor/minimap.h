#pragma once

// The whole graph, small, in the canvas's top-right corner, with the visible part framed; a
// click or drag there moves the view.
#include <QPixmap>
#include <QRectF>
#include <QWidget>

class QGraphicsView;

namespace netsmith::ui {

class Minimap : public QWidget {
 public:
  /// A child of `view`, hidden until CanvasNavigation shows it.
  explicit Minimap(QGraphicsView* view);

  /// The picture no longer shows the scene (an edit, a theme change): refresh() before showing.
  bool stale = true;
  /// Draws the scene's items again.
  void refresh();
  QRectF itemsRect() const { return m_items; }

 protected:
  void paintEvent(QPaintEvent* event) override;
  void changeEvent(QEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;

 private:
  static constexpr double kMaxWidth = 150, kMaxHeight = 220;
  QRectF toWidget(const QRectF& scene) const;
  QPointF toScene(QPointF at) const;

  QGraphicsView* m_view;
  QRectF m_items;
  QPixmap m_picture;
};

}  // namespace netsmith::ui
