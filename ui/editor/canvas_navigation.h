#pragma once

// Where the canvas looks: a fit to the whole graph or to a readable scale (fitted again as the
// view is resized, until the user zooms), the user's zoom, panning with the middle button, and
// the minimap that shows the rest while the graph does not fit.
#include <QPoint>
#include <QRectF>
#include <QSize>

class QGraphicsView;
class QMouseEvent;

namespace netsmith::ui {

class Minimap;

class CanvasNavigation {
 public:
  /// Moves `view`, and puts its minimap in its corner.
  explicit CanvasNavigation(QGraphicsView* view);

  /// The view's scale (1 = node text at the application font's size).
  double zoom() const;
  /// The minimap (shown only while the graph does not fit the view).
  Minimap* minimap() const { return m_minimap; }
  /// Scales by `factor` (within 3% and 600%); kept through resizes.
  void zoomBy(double factor);
  /// Fits the whole graph in the view, at up to 150% and down to GraphCanvas::readableScale()
  /// when `readable`, else to 3% (a graph that needs less shows its top). Fitted again on each
  /// resize until the user zooms; waits for the view to have its size.
  void fit(bool readable);
  /// Shows scene rectangle `r` whole, at up to 150%; kept through resizes.
  void zoomTo(const QRectF& r);
  /// A fit waits for the view to be shown at its size.
  bool fitPending() const { return m_fitPending; }

  /// The view was shown or resized: fitted again while the user has not zoomed.
  void viewShown();
  void viewResized();
  /// The scene's items changed: the minimap's picture is drawn again.
  void sceneChanged();

  /// Panning with the middle button: each returns whether it took the event.
  bool pressPan(QMouseEvent* event);
  bool movePan(QMouseEvent* event);
  bool releasePan(QMouseEvent* event);

 private:
  /// Shows `r` whole, at a scale of `least` to 150% (past `least`: its top, scrolling).
  void fitRect(const QRectF& r, double least = 0.03);
  /// The last kind of fit again (the view's size changed).
  void fitAgain();
  void updateMinimap();

  QGraphicsView* m_view;
  Minimap* m_minimap;
  bool m_fitPending = false;
  bool m_autoFit = false;      ///< fitted, and fitted again on a resize, until the user zooms
  bool m_fitReadable = false;  ///< the last fit was fit(true)
  QSize m_fittedAt;  ///< the view's size at the last fit (not the viewport's: scroll bars)
  bool m_panning = false;
  QPoint m_panLast;
};

}  // namespace netsmith::ui
