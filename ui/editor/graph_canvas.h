#pragma once

// The model graph drawn on a QGraphicsView: one box per node (op, key parameters, output
// shape; red with its problem when invalid), edges from output ports (bottom) to input ports
// (top) labelled with the tensor shape. Drag a node to move it, drag from an output port to a
// node to connect, drop an op from the palette to add it (where it was dropped), Ctrl+wheel to
// zoom, middle button to pan; a red node's "Fix" button applies its quick fix. Every change goes
// through the ModelEditor, so it is undoable; the view stays where it is across edits. A
// minimap in the corner shows the whole graph when it does not fit.
#include <QFont>
#include <QGraphicsView>
#include <QRectF>
#include <QString>
#include <QStringList>
#include <memory>

namespace netsmith::ui {

class CanvasNavigation;
class GraphScene;
class ModelEditor;
class WireDrag;
// Declared for graph_items.h, which includes this header.
class EdgeItem;
class NodeItem;

class GraphCanvas : public QGraphicsView {
  Q_OBJECT

 public:
  static constexpr double kNodeWidth = 176;
  static constexpr double kNodeHeight = 56;
  static constexpr const char* kOpMime = "application/x-netsmith-op";

  /// The font of node text: the application's, so that at zoom 1 it reads like the rest.
  static QFont nodeFont();
  /// The least scale at which a node's compact label (its op) is drawn: what a fit goes down to.
  static double readableScale();

  explicit GraphCanvas(ModelEditor* editor, QWidget* parent = nullptr);
  ~GraphCanvas() override;

  /// Re-creates the items from the model and its analysis (keeps the selection).
  void rebuild();
  QStringList selectedIds() const;
  void selectNodes(const QStringList& ids, bool center = false);
  /// Fits the whole graph in the view (at most 150%). Below the scale where node text reads at
  /// the application's size, nodes draw as compact blocks with their op (and shape while it
  /// fits); collapsing groups makes a long network readable whole. Before the view has its
  /// size, on first show.
  void fitToView();
  /// Fits the graph as a newly opened model is shown: whole when it can be, else at the least
  /// scale at which each node keeps its op in letters (readableScale), its top first and the
  /// minimap for the rest, rather than unlabelled specks. Again on each resize until the user
  /// zooms.
  void fitReadably();
  /// Zooms to the selected nodes (the whole graph when none is selected).
  void zoomToSelection();
  /// The model's collapsible groups: the scopes its ids share (an imported "layer1").
  QStringList groups() const;
  bool isGroupCollapsed(const QString& name) const;
  /// Draws a group as one block with its node count, parameters and output shape (a double
  /// click expands it again). Nodes below it move up on screen; the model's positions are
  /// kept, and a node dragged there is saved where it would be with every group expanded.
  void setGroupCollapsed(const QString& name, bool collapsed);
  void setAllGroupsCollapsed(bool collapsed);
  /// The scene rectangle of a collapsed group's block (empty when expanded).
  QRectF groupRect(const QString& name) const;
  /// Nodes drawn one by one (members of collapsed groups are not).
  int visibleNodeCount() const;
  /// The view's scale (1 = node text at the application font's size).
  double zoom() const;
  /// The minimap (shown only while the graph does not fit the view).
  QWidget* minimap() const;
  void zoomBy(double factor);
  /// The node under a scene point ("" for none) and whether the point is on its output port.
  QString nodeAt(QPointF scenePos, bool* onOutputPort = nullptr) const;
  /// Scene position of a node's output / input port.
  QPointF outputPort(const QString& id) const;
  QPointF inputPort(const QString& id) const;
  int nodeCount() const;
  int edgeCount() const;
  /// The label drawn in node `id` (op and key parameters) and on the edge from -> to.
  QString nodeLabel(const QString& id) const;
  QString edgeLabel(const QString& from, const QString& to) const;
  bool nodeIsInvalid(const QString& id) const;

  /// The graph rendered at 2x on the view's background.
  bool exportPng(const QString& path, QString* error = nullptr);
  /// A plain SVG of the graph (boxes, edges, labels), written atomically.
  bool exportSvg(const QString& path, QString* error = nullptr);

 Q_SIGNALS:
  void selectionChangedIds(const QStringList& ids);
  /// A refused action, said at the cursor too.
  void message(const QString& text);

 protected:
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void showEvent(QShowEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  void contextMenuEvent(QContextMenuEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dragMoveEvent(QDragMoveEvent* event) override;
  void dropEvent(QDropEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  void refuse(const QString& why, QPoint viewPos);

  ModelEditor* m_editor;
  GraphScene* m_scene;                             ///< the items, and which groups are collapsed
  std::unique_ptr<CanvasNavigation> m_navigation;  ///< zoom, fits, panning, the minimap
  std::unique_ptr<WireDrag> m_wire;                ///< connecting by drag
  bool m_pressedOnNode = false;
  bool m_rebuilding = false;
};

}  // namespace netsmith::ui
