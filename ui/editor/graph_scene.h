#pragma once

// The model graph as scene items: a box per node (op, key parameters, output shape; red with
// its problem when invalid), a block per collapsed group, and the edges between what is shown,
// labelled with the tensor shape. Built again from the model and its analysis after each edit.
// Nodes below a collapsed group are drawn higher by the rows it no longer takes; the model's
// positions are kept.
#include <QGraphicsScene>
#include <QHash>
#include <QList>
#include <QMap>
#include <QPointF>
#include <QSet>
#include <QString>
#include <QStringList>
#include <map>
#include <string>
#include <vector>

#include "editor/graph_groups.h"

namespace netsmith::ui {

class EdgeItem;
class GraphCanvas;
class ModelEditor;
class NodeItem;

class GraphScene : public QGraphicsScene {
  Q_OBJECT

 public:
  /// The scene of `canvas` (its parent), drawing `editor`'s model.
  GraphScene(GraphCanvas* canvas, ModelEditor* editor);

  /// Clears the items and creates them again from the model and its analysis.
  void build();

  /// The nodes drawn one by one, by id (members of collapsed groups are not).
  const QHash<QString, NodeItem*>& nodes() const { return m_nodes; }
  NodeItem* node(const QString& id) const { return m_nodes.value(id); }
  const QList<EdgeItem*>& edges() const { return m_edges; }
  /// A collapsed group's block (nullptr while expanded).
  NodeItem* groupBlock(const QString& name) const { return m_groupItems.value(name); }
  /// The selected nodes' ids, sorted.
  QStringList selectedIds() const;

  /// The model's collapsible groups: the scopes its ids share (an imported "layer1").
  QStringList groups() const;
  bool isCollapsed(const QString& name) const { return m_collapsed.contains(name); }
  /// Marks a group collapsed or expanded, drawn so by the next build(); false when that
  /// changes nothing (or the group does not exist).
  bool setCollapsed(const QString& name, bool collapsed);
  void setAllCollapsed(bool collapsed);
  /// Expands the collapsed groups that hide any of `ids`; true when there was one.
  bool expandGroupsOf(const QStringList& ids);

  /// The node under a scene point ("" for none) and whether the point is on its output port.
  QString nodeAt(QPointF scenePos, bool* onOutputPort = nullptr) const;
  /// The node whose "Fix" button is at a scene point ("" for none).
  QString fixButtonAt(QPointF scenePos) const;
  /// Scene position of a node's output / input port.
  QPointF outputPort(const QString& id) const;
  QPointF inputPort(const QString& id) const;
  /// The shown nodes that were dragged away from where the model has them, by id, at their
  /// new positions in the model's coordinates (as if every group were expanded).
  QMap<QString, QPointF> movedNodes() const;

 private:
  /// A collapsed group and the rows its members take (top..bottom).
  struct CollapsedSpan {
    NodeGroup group;
    double top = 0, bottom = 0;
  };
  using Problems = std::map<std::string, QString>;  ///< the problems' text, by node id

  /// The collapsed groups' spans; marks their members hidden and forgets collapsed groups
  /// that an edit removed.
  std::vector<CollapsedSpan> collapsedSpans();
  /// How far a node at model row `y` moves up: the rows of the collapsed groups above it.
  static double shiftAt(const std::vector<CollapsedSpan>& spans, double y);
  void addNodes(const Problems& problems, const std::vector<CollapsedSpan>& spans);
  /// A collapsed group's block: its totals, and the output of the member that feeds the rest.
  void addGroupBlock(const Problems& problems, const CollapsedSpan& span,
                     const std::vector<CollapsedSpan>& spans);
  /// Edges between what is shown: a hidden node's edges meet its group's block.
  void addEdges();

  GraphCanvas* m_canvas;
  ModelEditor* m_editor;
  QHash<QString, NodeItem*> m_nodes;
  QHash<QString, NodeItem*> m_groupItems;  ///< collapsed groups' blocks, by group name
  QHash<QString, QString> m_hiddenIn;      ///< a hidden node's collapsed group
  QHash<QString, double> m_shift;          ///< how far a shown node moved up on screen
  QSet<QString> m_collapsed;
  QList<EdgeItem*> m_edges;
};

}  // namespace netsmith::ui
