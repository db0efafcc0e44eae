#include "editor/graph_scene.h"

#include <cmath>
#include <cstdint>

#include "editor/graph_canvas.h"
#include "editor/graph_items.h"
#include "editor/model_editor.h"
#include "graph/graph_analysis.h"
#include "session/project_document.h"

namespace netsmith::ui {

namespace {

QString dims(const Json& v) {
  if (v.is_array() && v.size() == 2) {
    if (v[0] == v[1]) return QString::fromStdString(v[0].dump());
    return QString::fromStdString(v[0].dump()) + "x" + QString::fromStdString(v[1].dump());
  }
  if (v.is_string()) return QString::fromStdString(v.get<std::string>());
  return QString::fromStdString(v.dump());
}

QString kernel(const Json& v) {
  if (v.is_number_integer())
    return QString::number(v.get<long long>()) + "x" + QString::number(v.get<long long>());
  if (v.is_array() && v.size() == 2)
    return QString::fromStdString(v[0].dump()) + "x" + QString::fromStdString(v[1].dump());
  return dims(v);
}

/// "Conv 3x3, 32, s1" from the node's (resolved, when known) parameters.
QString describe(const std::string& op, const Json& p) {
  auto has = [&](const char* k) { return p.is_object() && p.contains(k); };
  const QString name = QString::fromStdString(op);
  if (op == "Conv2d") {
    QString s = QStringLiteral("Conv %1").arg(has("kernel_size") ? kernel(p["kernel_size"]) : "?");
    if (has("out_channels")) s += ", " + dims(p["out_channels"]);
    if (has("stride")) s += ", s" + dims(p["stride"]);
    return s;
  }
  if (op == "MaxPool2d" || op == "AvgPool2d")
    return QStringLiteral("%1 %2").arg(op == "MaxPool2d" ? "MaxPool" : "AvgPool",
                                       has("kernel_size") ? kernel(p["kernel_size"]) : "");
  if (op == "Linear" && has("out_features")) return "Linear " + dims(p["out_features"]);
  if ((op == "Dropout" || op == "Dropout2d") && has("p")) return name + " " + dims(p["p"]);
  if (op == "BatchNorm2d") return QStringLiteral("BatchNorm");
  return name;
}

/// The output shape of node `id` as drawn (`unknown` when the analysis has none).
QString shownShape(const graph::GraphAnalysis& analysis, const std::string& id,
                   const QString& unknown = {}) {
  const auto* info = analysis.find(id);
  return info && !info->outputShape.empty() ? QString::fromStdString(formatShape(info->outputShape))
                                            : unknown;
}

}  // namespace

GraphScene::GraphScene(GraphCanvas* canvas, ModelEditor* editor)
    : QGraphicsScene(canvas), m_canvas(canvas), m_editor(editor) {}

void GraphScene::build() {
  clear();
  m_nodes.clear();
  m_edges.clear();
  m_groupItems.clear();
  m_hiddenIn.clear();
  m_shift.clear();
  Problems problems;
  for (const auto& p : m_editor->document()->analysis().problems)
    if (!p.nodeId.empty()) {
      QString& text = problems[p.nodeId];
      if (!text.isEmpty()) text += "\n";
      text += QString::fromStdString(p.message + (p.fix.empty() ? "" : "; " + p.fix));
    }
  const std::vector<CollapsedSpan> spans = collapsedSpans();
  addNodes(problems, spans);
  for (const auto& span : spans)
    addGroupBlock(problems, span, spans);
  addEdges();
}

std::vector<GraphScene::CollapsedSpan> GraphScene::collapsedSpans() {
  const auto& model = m_editor->model();
  std::vector<CollapsedSpan> spans;
  QSet<QString> present;
  for (const auto& g : scopeGroups(model)) {
    present.insert(g.name);
    if (!m_collapsed.contains(g.name)) continue;
    CollapsedSpan span{g, 1e300, -1e300};
    for (const auto& id : g.members) {
      const auto* n = model.find(id.toStdString());
      span.top = std::min(span.top, n->y);
      span.bottom = std::max(span.bottom, n->y);
      m_hiddenIn.insert(id, g.name);
    }
    spans.push_back(std::move(span));
  }
  m_collapsed.intersect(present);  // groups that an edit removed
  return spans;
}

double GraphScene::shiftAt(const std::vector<CollapsedSpan>& spans, double y) {
  double shift = 0;
  for (const auto& sp : spans)
    if (sp.bottom < y) shift += sp.bottom - sp.top;
  return shift;
}

void GraphScene::addNodes(const Problems& problems, const std::vector<CollapsedSpan>& spans) {
  const auto& analysis = m_editor->document()->analysis();
  for (const auto& n : m_editor->model().nodes) {
    const QString id = QString::fromStdString(n.id);
    if (m_hiddenIn.contains(id)) continue;
    const auto* info = analysis.find(n.id);
    const Json params = info && info->valid ? info->params.values() : n.params;
    const QString shape = shownShape(analysis, n.id, QStringLiteral("?"));
    const auto problem = problems.find(n.id);
    const bool bad = problem != problems.end();
    auto* item =
        new NodeItem(m_canvas, id, describe(n.op, params), shape, bad ? problem->second : QString(),
                     n.frozen, bad && !m_editor->fixFor(id).isEmpty());
    if (const auto* def = m_editor->document()->registry().find(n.op))
      item->setCategory(QString::fromStdString(def->group));
    const double shift = shiftAt(spans, n.y);
    item->setPos(n.x, n.y - shift);
    if (shift != 0) m_shift.insert(id, shift);
    addItem(item);
    m_nodes.insert(item->id(), item);
  }
}

void GraphScene::addGroupBlock(const Problems& problems, const CollapsedSpan& span,
                               const std::vector<CollapsedSpan>& spans) {
  const auto& model = m_editor->model();
  const auto& analysis = m_editor->document()->analysis();
  const NodeGroup& group = span.group;
  std::int64_t params = 0;
  int bad = 0;
  bool frozen = true;
  QString exitId = group.members.back();
  for (const auto& id : group.members) {
    const auto* info = analysis.find(id.toStdString());
    if (info) params += info->paramCount;
    if (problems.count(id.toStdString())) ++bad;
    frozen = frozen && model.find(id.toStdString())->frozen;
  }
  for (const auto& n : model.nodes)
    if (m_hiddenIn.value(QString::fromStdString(n.id)) != group.name)
      for (const auto& in : n.inputs)
        if (m_hiddenIn.value(QString::fromStdString(in)) == group.name)
          exitId = QString::fromStdString(in);
  const QString shape = shownShape(analysis, exitId.toStdString(), QStringLiteral("?"));
  const QString title =
      tr("%n nodes", nullptr, int(group.members.size())) + ", " + tr("%L1 params").arg(params);
  auto* item = new NodeItem(
      m_canvas, group.name, title, shape,
      bad ? tr("%n node(s) with a problem inside: double-click to expand", nullptr, bad)
          : QString(),
      frozen, false);
  item->setGroup(int(group.members.size()));
  item->setToolTip(tr("%1: %2\noutput %3\nDouble-click to expand").arg(group.name, title, shape));
  // On the column of the node that leaves the group (a side branch may start it).
  item->setPos(model.find(exitId.toStdString())->x, span.top - shiftAt(spans, span.top));
  addItem(item);
  m_groupItems.insert(group.name, item);
}

void GraphScene::addEdges() {
  const auto shown = [this](const std::string& id) -> NodeItem* {
    const QString q = QString::fromStdString(id);
    if (const auto it = m_hiddenIn.constFind(q); it != m_hiddenIn.constEnd())
      return m_groupItems.value(*it);
    return m_nodes.value(q);
  };
  const auto& analysis = m_editor->document()->analysis();
  QSet<QPair<NodeItem*, NodeItem*>> drawn;
  for (const auto& n : m_editor->model().nodes)
    for (const auto& in : n.inputs) {
      NodeItem* from = shown(in);
      NodeItem* to = shown(n.id);
      const QPair<NodeItem*, NodeItem*> pair(from, to);
      if (!from || !to || from == to || drawn.contains(pair)) continue;
      drawn.insert(pair);
      auto* edge = new EdgeItem(from, to, shownShape(analysis, in));
      addItem(edge);
      m_edges << edge;
    }
}

QStringList GraphScene::selectedIds() const {
  QStringList ids;
  for (auto* item : selectedItems())
    if (auto* n = dynamic_cast<NodeItem*>(item)) ids << n->id();
  ids.sort();
  return ids;
}

QStringList GraphScene::groups() const {
  QStringList out;
  for (const auto& g : scopeGroups(m_editor->model()))
    out << g.name;
  return out;
}

bool GraphScene::setCollapsed(const QString& name, bool collapsed) {
  if (collapsed == m_collapsed.contains(name) || (collapsed && !groups().contains(name)))
    return false;
  if (collapsed)
    m_collapsed.insert(name);
  else
    m_collapsed.remove(name);
  return true;
}

void GraphScene::setAllCollapsed(bool collapsed) {
  const QStringList all = groups();
  if (collapsed)
    m_collapsed = QSet<QString>(all.begin(), all.end());
  else
    m_collapsed.clear();
}

bool GraphScene::expandGroupsOf(const QStringList& ids) {
  bool expanded = false;
  for (const auto& id : ids)
    if (const auto it = m_hiddenIn.constFind(id); it != m_hiddenIn.constEnd())
      expanded = m_collapsed.remove(*it) || expanded;
  return expanded;
}

QString GraphScene::nodeAt(QPointF scenePos, bool* onOutputPort) const {
  for (auto* n : m_nodes) {
    const QPointF local = scenePos - n->pos();
    if (onOutputPort && QLineF(local, QPointF(0, GraphCanvas::kNodeHeight)).length() <= 9) {
      *onOutputPort = true;
      return n->id();
    }
  }
  for (auto* n : m_nodes) {
    const QPointF local = scenePos - n->pos();
    if (std::abs(local.x()) <= GraphCanvas::kNodeWidth / 2 && local.y() >= 0 &&
        local.y() <= GraphCanvas::kNodeHeight) {
      if (onOutputPort) *onOutputPort = false;
      return n->id();
    }
  }
  if (onOutputPort) *onOutputPort = false;
  return {};
}

QString GraphScene::fixButtonAt(QPointF scenePos) const {
  for (auto* n : m_nodes)
    if (n->hasFix() && NodeItem::fixButtonRect().contains(scenePos - n->pos())) return n->id();
  return {};
}

QPointF GraphScene::outputPort(const QString& id) const {
  const auto* n = m_nodes.value(id);
  return n ? n->pos() + QPointF(0, GraphCanvas::kNodeHeight) : QPointF();
}

QPointF GraphScene::inputPort(const QString& id) const {
  const auto* n = m_nodes.value(id);
  return n ? n->pos() : QPointF();
}

QMap<QString, QPointF> GraphScene::movedNodes() const {
  QMap<QString, QPointF> moved;
  const auto& model = m_editor->model();
  for (auto* n : m_nodes) {
    const auto* node = model.find(n->id().toStdString());
    // Below a collapsed group the node is drawn higher than it stands in the model.
    const double y = n->pos().y() + m_shift.value(n->id());
    if (node && (node->x != n->pos().x() || node->y != y))
      moved.insert(n->id(), QPointF(std::round(n->pos().x()), std::round(y)));
  }
  return moved;
}

}  // namespace netsmith::ui
