#pragma once

// The model editor's commands, without widgets: every edit of the project's model graph
// (add, connect, delete, parameters, moves, paste, blocks, quick fixes, layout) goes through
// here and becomes one undoable step on the document's QUndoStack. The canvas, the palette and
// the inspector call these; tests call them directly.
#include <QMap>
#include <QObject>
#include <QPointF>
#include <QString>
#include <QStringList>

#include "common/json.h"
#include "graph/model_graph.h"

namespace netsmith::ui {

class ProjectDocument;

class ModelEditor : public QObject {
  Q_OBJECT

 public:
  explicit ModelEditor(ProjectDocument* document, QObject* parent = nullptr);

  const graph::ModelGraph& model() const;
  ProjectDocument* document() const { return m_document; }

  /// Adds a node of `op` at `pos`; with `after`, it is fed by `after` and takes over `after`'s
  /// consumers (appended after it). Returns the new id ("" with `why` when refused).
  QString addNode(const QString& op, QPointF pos, const QString& after = {},
                  QString* why = nullptr);
  /// Feeds `from`'s output into `to`. Refused (false, `why`) when it would make a cycle, when
  /// `to` takes no more inputs, or when the edge exists.
  bool connectNodes(const QString& from, const QString& to, QString* why = nullptr);
  bool disconnectNodes(const QString& from, const QString& to);
  /// Removes the nodes and every edge touching them.
  void removeNodes(const QStringList& ids);
  /// Sets one parameter (a null value removes it: the default applies). Consecutive changes
  /// of one field merge into one undo step.
  void setParam(const QString& id, const QString& key, const Json& value);
  /// Sets one of the model input's "channels", "height" or "width" (the Input node's fields).
  void setInputDimension(const QString& key, std::int64_t value);
  void setInit(const QString& id, const QString& scheme);
  void setFrozen(const QString& id, bool frozen);
  /// The learning-rate multiplier of `id` (one undo step).
  void setLrMult(const QString& id, double mult);
  /// The same multiplier for `id` and every node it depends on (e.g. a backbone at 0.1).
  void setLrMultUpTo(const QString& id, double mult);
  /// Freezes `id` and every node it depends on (the backbone up to it), one undo step.
  void freezeUpTo(const QString& id);
  /// The last Linear gets the data's class count as out_features and starts anew (one undo
  /// step); false with no change when the model has no Linear head.
  bool replaceHead();
  /// Moves nodes; one drag (same set of nodes, consecutive) is one undo step.
  void moveNodes(const QMap<QString, QPointF>& positions);
  /// Puts a new `op` node on the edge from -> to. Returns its id.
  QString insertOnEdge(const QString& from, const QString& to, const QString& op,
                       QString* why = nullptr);
  /// The nodes as JSON text (for the clipboard): their edges among themselves are kept.
  QString copy(const QStringList& ids) const;
  /// Adds the copied nodes with fresh ids, shifted by `offset`; returns the new ids.
  QStringList paste(const QString& text, QPointF offset = QPointF(40, 40), QString* why = nullptr);
  QStringList duplicate(const QStringList& ids);
  /// "conv_bn_relu" or "residual" after `after` (or unconnected). Returns the new ids.
  QStringList insertBlock(const QString& kind, const QString& after);
  static QStringList blockKinds();
  /// Layered layout, top to bottom: each node one row below its deepest input.
  void autoLayout();
  /// True when the graph has no positions (a hand-written model): every node at 0,0.
  bool needsLayout() const;
  /// The quick fix of `nodeId`'s problem, when there is an obvious one: "set in_features to N",
  /// "insert a Flatten before it". Returns a description of what it did ("" when none).
  QString applyFix(const QString& nodeId);
  /// The fix a problem of `nodeId` offers, as a menu text ("" when none).
  QString fixFor(const QString& nodeId) const;
  /// A fresh id for `op` ("conv3", "relu2").
  QString freshId(const QString& op) const;

 private:
  /// The classes to set as out_features when `p` is a Linear's missing out_features and the
  /// data's class count is known; 0 otherwise.
  /// What a head-rule fix asks for: a Linear of `outputs`, after global pooling and a Flatten
  /// when the output is an image (`pooled`); outputs 0 when `fix` is no such text.
  struct HeadFix {
    std::int64_t outputs = 0;
    bool pooled = false;
  };
  static HeadFix headFix(const QString& fix);
  std::int64_t missingOutFeatures(const Problem& p) const;
  void commit(const graph::ModelGraph& model, const QString& text, const QString& mergeKey = {});
  bool reachable(const graph::ModelGraph& g, const std::string& from, const std::string& to) const;

  ProjectDocument* m_document;
  int m_dragSerial = 0;
};

}  // namespace netsmith::ui
