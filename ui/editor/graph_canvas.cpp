#include "editor/graph_canvas.h"

#include <QApplication>
#include <QContextMenuEvent>
#include <QGraphicsLineItem>
#include <QGraphicsScene>
#include <QImage>
#include <QMenu>
#include <QMimeData>
#include <QMouseEvent>
#include <QPainter>
#include <QPixmap>
#include <QSaveFile>
#include <QScrollBar>
#include <QToolTip>
#include <QWheelEvent>
#include <cmath>
#include <map>

#include "editor/graph_groups.h"
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

}  // namespace

/// The whole graph, small, in the canvas's top-right corner, with the visible part framed;
/// a click or drag there moves the view.
class Minimap : public QWidget {
 public:
  explicit Minimap(GraphCanvas* canvas) : QWidget(canvas), m_canvas(canvas) {
    setObjectName(QStringLiteral("canvasMinimap"));
    setToolTip(tr("The whole model: click or drag to move the view"));
    setCursor(Qt::PointingHandCursor);
    hide();
  }
  /// The picture no longer shows the scene (an edit, a theme change): refresh() before showing.
  bool stale = true;
  /// Draws the scene's items again.
  void refresh() {
    stale = false;
    m_items = m_canvas->scene()->itemsBoundingRect().adjusted(-20, -20, 20, 20);
    if (m_items.isEmpty()) return;
    const double s = std::min(kMaxWidth / m_items.width(), kMaxHeight / m_items.height());
    resize(std::max(40, int(m_items.width() * s)), std::max(40, int(m_items.height() * s)));
    m_picture = QPixmap(size() * devicePixelRatioF());
    m_picture.setDevicePixelRatio(devicePixelRatioF());
    m_picture.fill(palette().color(QPalette::Base));
    QPainter p(&m_picture);
    p.setRenderHint(QPainter::Antialiasing);
    m_canvas->scene()->render(&p, QRectF(QPointF(0, 0), QSizeF(size())), m_items);
    update();
  }
  QRectF itemsRect() const { return m_items; }

 protected:
  void paintEvent(QPaintEvent*) override {
    QPainter p(this);
    p.drawPixmap(0, 0, m_picture);
    const QRectF visible =
        m_canvas->mapToScene(m_canvas->viewport()->rect()).boundingRect().intersected(m_items);
    p.setPen(QPen(palette().color(QPalette::Highlight), 1.5));
    p.setBrush(Qt::NoBrush);
    p.drawRect(toWidget(visible));
    p.setPen(QPen(palette().color(QPalette::Mid), 1));
    p.drawRect(rect().adjusted(0, 0, -1, -1));
  }
  void changeEvent(QEvent* e) override {
    if (e->type() == QEvent::PaletteChange) {
      stale = true;
      if (isVisible()) refresh();  // drawn again in the new theme now, not after the next edit
    }
    QWidget::changeEvent(e);
  }
  void mousePressEvent(QMouseEvent* e) override { m_canvas->centerOn(toScene(e->position())); }
  void mouseMoveEvent(QMouseEvent* e) override {
    if (e->buttons() & Qt::LeftButton) m_canvas->centerOn(toScene(e->position()));
  }

 private:
  static constexpr double kMaxWidth = 150, kMaxHeight = 220;
  QRectF toWidget(const QRectF& scene) const {
    const double sx = width() / m_items.width(), sy = height() / m_items.height();
    return {(scene.x() - m_items.x()) * sx, (scene.y() - m_items.y()) * sy, scene.width() * sx,
            scene.height() * sy};
  }
  QPointF toScene(QPointF at) const {
    return {m_items.x() + at.x() * m_items.width() / width(),
            m_items.y() + at.y() * m_items.height() / height()};
  }
  GraphCanvas* m_canvas;
  QRectF m_items;
  QPixmap m_picture;
};

QFont GraphCanvas::nodeFont() {
  return QApplication::font();
}

GraphCanvas::GraphCanvas(ModelEditor* editor, QWidget* parent)
    : QGraphicsView(parent), m_editor(editor) {
  setObjectName(QStringLiteral("graphCanvas"));
  setScene(new QGraphicsScene(this));
  setRenderHint(QPainter::Antialiasing);
  setDragMode(QGraphicsView::RubberBandDrag);
  setAcceptDrops(true);
  setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
  setViewportUpdateMode(QGraphicsView::BoundingRectViewportUpdate);
  connect(scene(), &QGraphicsScene::selectionChanged, this, [this] {
    if (!m_rebuilding) Q_EMIT selectionChangedIds(selectedIds());
  });
  m_minimap = new Minimap(this);
  for (auto* bar : {horizontalScrollBar(), verticalScrollBar()})
    connect(bar, &QScrollBar::valueChanged, m_minimap, qOverload<>(&QWidget::update));
}

double GraphCanvas::zoom() const {
  return transform().m11();
}

QWidget* GraphCanvas::minimap() const {
  return m_minimap;
}

void GraphCanvas::updateMinimap() {
  const QRectF items = scene()->itemsBoundingRect();
  const QRectF visible = mapToScene(viewport()->rect()).boundingRect();
  const bool fits = items.isEmpty() || visible.contains(items);
  if (fits) {
    m_minimap->hide();
    return;
  }
  // Scrolling, zooming and resizing only move the frame; the picture is redrawn after edits.
  if (m_minimap->stale) m_minimap->refresh();
  const QRect area = viewport()->geometry();
  m_minimap->move(area.right() - m_minimap->width() - 10, area.top() + 10);
  m_minimap->show();
  m_minimap->raise();
}

GraphCanvas::~GraphCanvas() {
  // The scene's items go after this; their selection changes must not reach anyone.
  m_rebuilding = true;
  scene()->disconnect(this);
}

QString GraphCanvas::nodeLabel(const QString& id) const {
  const auto* n = m_nodes.value(id);
  return n ? n->title() : QString();
}

QString GraphCanvas::edgeLabel(const QString& from, const QString& to) const {
  for (auto* e : m_edges)
    if (e->from()->id() == from && e->to()->id() == to) return e->label();
  return {};
}

bool GraphCanvas::nodeIsInvalid(const QString& id) const {
  const auto* n = m_nodes.value(id);
  return n && n->invalid();
}

void GraphCanvas::rebuild() {
  const QStringList selected = selectedIds();
  // The view stays where it is: the scene point at its centre is put back afterwards.
  const bool keepView = isVisible() && !m_fitPending && !m_nodes.isEmpty();
  const QRectF visible = mapToScene(viewport()->rect()).boundingRect();
  m_rebuilding = true;
  m_rubber = nullptr;
  scene()->clear();
  m_nodes.clear();
  m_edges.clear();
  m_groupItems.clear();
  m_hiddenIn.clear();
  m_shift.clear();
  const auto& model = m_editor->model();
  const auto& analysis = m_editor->document()->analysis();
  std::map<std::string, QString> problems;
  for (const auto& p : analysis.problems)
    if (!p.nodeId.empty()) {
      QString& text = problems[p.nodeId];
      if (!text.isEmpty()) text += "\n";
      text += QString::fromStdString(p.message + (p.fix.empty() ? "" : "; " + p.fix));
    }
  // Collapsed groups: where their members lie (rows top..bottom), so that what is below them
  // moves up by the rows they no longer take.
  struct Span {
    NodeGroup group;
    double top = 0, bottom = 0;
  };
  std::vector<Span> spans;
  QSet<QString> present;
  for (const auto& g : scopeGroups(model)) {
    present.insert(g.name);
    if (!m_collapsed.contains(g.name)) continue;
    Span span{g, 1e300, -1e300};
    for (const auto& id : g.members) {
      const auto* n = model.find(id.toStdString());
      span.top = std::min(span.top, n->y);
      span.bottom = std::max(span.bottom, n->y);
      m_hiddenIn.insert(id, g.name);
    }
    spans.push_back(std::move(span));
  }
  m_collapsed.intersect(present);  // groups that an edit removed
  const auto shiftAt = [&spans](double y) {
    double shift = 0;
    for (const auto& sp : spans)
      if (sp.bottom < y) shift += sp.bottom - sp.top;
    return shift;
  };
  for (const auto& n : model.nodes) {
    const QString id = QString::fromStdString(n.id);
    if (m_hiddenIn.contains(id)) continue;
    const auto* info = analysis.find(n.id);
    const Json params = info && info->valid ? info->params.values() : n.params;
    const QString shape = info && !info->outputShape.empty()
                              ? QString::fromStdString(formatShape(info->outputShape))
                              : QStringLiteral("?");
    const bool bad = problems.count(n.id) > 0;
    auto* item =
        new NodeItem(this, id, describe(n.op, params), shape, bad ? problems[n.id] : QString(),
                     n.frozen, bad && !m_editor->fixFor(id).isEmpty());
    if (const auto* def = m_editor->document()->registry().find(n.op))
      item->setCategory(QString::fromStdString(def->group));
    const double shift = shiftAt(n.y);
    item->setPos(n.x, n.y - shift);
    if (shift != 0) m_shift.insert(id, shift);
    scene()->addItem(item);
    m_nodes.insert(item->id(), item);
  }
  for (const auto& sp : spans) {
    // The block: its totals, and the output of the member that feeds the rest of the model.
    std::int64_t params = 0;
    int bad = 0;
    bool frozen = true;
    QString exitId = sp.group.members.back();
    for (const auto& id : sp.group.members) {
      const auto* info = analysis.find(id.toStdString());
      if (info) params += info->paramCount;
      if (problems.count(id.toStdString())) ++bad;
      frozen = frozen && model.find(id.toStdString())->frozen;
    }
    for (const auto& n : model.nodes)
      if (m_hiddenIn.value(QString::fromStdString(n.id)) != sp.group.name)
        for (const auto& in : n.inputs)
          if (m_hiddenIn.value(QString::fromStdString(in)) == sp.group.name)
            exitId = QString::fromStdString(in);
    const auto* exitInfo = analysis.find(exitId.toStdString());
    const QString shape = exitInfo && !exitInfo->outputShape.empty()
                              ? QString::fromStdString(formatShape(exitInfo->outputShape))
                              : QStringLiteral("?");
    const QString title =
        tr("%n nodes", nullptr, int(sp.group.members.size())) + ", " + tr("%L1 params").arg(params);
    auto* item = new NodeItem(
        this, sp.group.name, title, shape,
        bad ? tr("%n node(s) with a problem inside: double-click to expand", nullptr, bad)
            : QString(),
        frozen, false);
    item->setGroup(int(sp.group.members.size()));
    item->setToolTip(
        tr("%1: %2\noutput %3\nDouble-click to expand").arg(sp.group.name, title, shape));
    // On the column of the node that leaves the group (a side branch may start it).
    item->setPos(model.find(exitId.toStdString())->x, sp.top - shiftAt(sp.top));
    scene()->addItem(item);
    m_groupItems.insert(sp.group.name, item);
  }
  // Edges between what is shown: a hidden node's edges meet its group's block.
  const auto shown = [this](const std::string& id) -> NodeItem* {
    const QString q = QString::fromStdString(id);
    if (const auto it = m_hiddenIn.constFind(q); it != m_hiddenIn.constEnd())
      return m_groupItems.value(*it);
    return m_nodes.value(q);
  };
  QSet<QPair<NodeItem*, NodeItem*>> drawn;
  for (const auto& n : model.nodes)
    for (const auto& in : n.inputs) {
      NodeItem* from = shown(in);
      NodeItem* to = shown(n.id);
      const QPair<NodeItem*, NodeItem*> pair(from, to);
      if (!from || !to || from == to || drawn.contains(pair)) continue;
      drawn.insert(pair);
      const auto* info = analysis.find(in);
      const QString label = info && !info->outputShape.empty()
                                ? QString::fromStdString(formatShape(info->outputShape))
                                : QString();
      auto* edge = new EdgeItem(from, to, label);
      scene()->addItem(edge);
      m_edges << edge;
    }
  for (const auto& id : selected)
    if (auto* item = m_nodes.value(id)) item->setSelected(true);
  // The scene always covers what is on screen, so that the view never re-centres by itself.
  QRectF area = scene()->itemsBoundingRect().adjusted(-400, -300, 400, 300);
  if (keepView) area = area.united(visible);
  scene()->setSceneRect(area);
  if (keepView) centerOn(visible.center());
  m_rebuilding = false;
  m_minimap->stale = true;
  updateMinimap();
  if (selectedIds() != selected) Q_EMIT selectionChangedIds(selectedIds());
}

QStringList GraphCanvas::selectedIds() const {
  QStringList ids;
  for (auto* item : scene()->selectedItems())
    if (auto* n = dynamic_cast<NodeItem*>(item)) ids << n->id();
  ids.sort();
  return ids;
}

void GraphCanvas::selectNodes(const QStringList& ids, bool center) {
  // A node inside a collapsed group is shown by expanding the group.
  bool expanded = false;
  for (const auto& id : ids)
    if (const auto it = m_hiddenIn.constFind(id); it != m_hiddenIn.constEnd())
      expanded = m_collapsed.remove(*it) || expanded;
  if (expanded) rebuild();
  scene()->clearSelection();
  for (const auto& id : ids)
    if (auto* n = m_nodes.value(id)) {
      n->setSelected(true);
      if (center) centerOn(n);
    }
}

void GraphCanvas::resizeEvent(QResizeEvent* event) {
  QGraphicsView::resizeEvent(event);
  // Fitted until the user zooms: a window laid out again (shown, maximised, a splitter moved)
  // shows the model fitted to its final size, not to the first one it passed through. Only
  // when the view itself changed size: a scroll bar that a fit shows or hides resizes the
  // viewport alone, and fitting again on that would flip the bars for ever.
  if (m_fitPending || (m_autoFit && size() != m_fittedAt)) fitAgain();
  updateMinimap();
}

void GraphCanvas::showEvent(QShowEvent* event) {
  QGraphicsView::showEvent(event);
  if (m_fitPending || (m_autoFit && size() != m_fittedAt)) fitAgain();
}

void GraphCanvas::fitAgain() {
  if (m_fitReadable)
    fitReadably();
  else
    fitToView();
}

void GraphCanvas::fitToView() {
  fit(false);
}

void GraphCanvas::fitReadably() {
  fit(true);
}

void GraphCanvas::fit(bool readable) {
  m_autoFit = true;
  m_fitReadable = readable;
  m_fitPending = !isVisible() || viewport()->width() < 50 || viewport()->height() < 50;
  if (m_fitPending) return;
  m_fittedAt = size();
  fitRect(scene()->itemsBoundingRect().adjusted(-30, -30, 30, 30),
          readable ? readableScale() : 0.03);
}

double GraphCanvas::readableScale() {
  QFont f = nodeFont();
  f.setPointSizeF(f.pointSizeF() * 0.85);  // NodeItem::paintCompact's line
  return QFontMetricsF(f).height() / double(kNodeHeight);
}

void GraphCanvas::fitRect(const QRectF& r, double least) {
  if (r.isEmpty()) return;
  // The whole rectangle, down to `least` (nodes below readable size draw compact); a graph
  // that would need less shows its top and scrolls, with the minimap for the rest.
  const double s = std::clamp(
      std::min(viewport()->width() / r.width(), viewport()->height() / r.height()), least, 1.5);
  setTransform(QTransform::fromScale(s, s));
  const double visibleHeight = viewport()->height() / s;
  centerOn(r.height() <= visibleHeight ? r.center()
                                       : QPointF(r.center().x(), r.top() + visibleHeight / 2));
  updateMinimap();
}

void GraphCanvas::zoomToSelection() {
  QRectF r;
  for (const auto& id : selectedIds())
    if (auto* n = m_nodes.value(id)) r = r.united(n->sceneBoundingRect());
  if (r.isEmpty()) {
    fitToView();
    return;
  }
  // Some room around it, and never closer than 150%.
  m_autoFit = false;
  fitRect(r.adjusted(-kNodeWidth / 2, -kNodeHeight, kNodeWidth / 2, kNodeHeight));
}

QStringList GraphCanvas::groups() const {
  QStringList out;
  for (const auto& g : scopeGroups(m_editor->model()))
    out << g.name;
  return out;
}

bool GraphCanvas::isGroupCollapsed(const QString& name) const {
  return m_collapsed.contains(name);
}

void GraphCanvas::setGroupCollapsed(const QString& name, bool collapsed) {
  if (collapsed == m_collapsed.contains(name) || (collapsed && !groups().contains(name))) return;
  if (collapsed)
    m_collapsed.insert(name);
  else
    m_collapsed.remove(name);
  rebuild();
}

void GraphCanvas::setAllGroupsCollapsed(bool collapsed) {
  const QStringList all = groups();
  if (collapsed)
    m_collapsed = QSet<QString>(all.begin(), all.end());
  else
    m_collapsed.clear();
  rebuild();
}

QRectF GraphCanvas::groupRect(const QString& name) const {
  const auto* item = m_groupItems.value(name);
  return item ? item->sceneBoundingRect() : QRectF();
}

void GraphCanvas::mouseDoubleClickEvent(QMouseEvent* event) {
  for (auto* item : items(event->pos()))
    if (auto* n = dynamic_cast<NodeItem*>(item); n && n->isGroup()) {
      const QPointF at = n->scenePos();
      setGroupCollapsed(n->id(), false);
      centerOn(at);
      event->accept();
      return;
    }
  QGraphicsView::mouseDoubleClickEvent(event);
}

void GraphCanvas::zoomBy(double factor) {
  const double s = transform().m11() * factor;
  if (s < 0.03 || s > 6) return;
  m_autoFit = false;  // the user's zoom stays through resizes
  scale(factor, factor);
  updateMinimap();
}

QString GraphCanvas::fixButtonAt(QPointF scenePos) const {
  for (auto* n : m_nodes)
    if (n->hasFix() && NodeItem::fixButtonRect().contains(scenePos - n->pos())) return n->id();
  return {};
}

QString GraphCanvas::nodeAt(QPointF scenePos, bool* onOutputPort) const {
  for (auto* n : m_nodes) {
    const QPointF local = scenePos - n->pos();
    if (onOutputPort && QLineF(local, QPointF(0, kNodeHeight)).length() <= 9) {
      *onOutputPort = true;
      return n->id();
    }
  }
  for (auto* n : m_nodes) {
    const QPointF local = scenePos - n->pos();
    if (std::abs(local.x()) <= kNodeWidth / 2 && local.y() >= 0 && local.y() <= kNodeHeight) {
      if (onOutputPort) *onOutputPort = false;
      return n->id();
    }
  }
  if (onOutputPort) *onOutputPort = false;
  return {};
}

QPointF GraphCanvas::outputPort(const QString& id) const {
  const auto* n = m_nodes.value(id);
  return n ? n->pos() + QPointF(0, kNodeHeight) : QPointF();
}

QPointF GraphCanvas::inputPort(const QString& id) const {
  const auto* n = m_nodes.value(id);
  return n ? n->pos() : QPointF();
}

void GraphCanvas::refuse(const QString& why, QPoint viewPos) {
  QToolTip::showText(viewport()->mapToGlobal(viewPos), why, this);
  Q_EMIT message(why);
}

void GraphCanvas::mousePressEvent(QMouseEvent* event) {
  if (event->button() == Qt::MiddleButton) {
    m_panning = true;
    m_panLast = event->pos();
    viewport()->setCursor(Qt::ClosedHandCursor);
    event->accept();
    return;
  }
  if (event->button() == Qt::LeftButton) {
    if (const QString fix = fixButtonAt(mapToScene(event->pos())); !fix.isEmpty()) {
      const QString did = m_editor->applyFix(fix);
      if (!did.isEmpty()) Q_EMIT message(did);
      event->accept();
      return;
    }
    bool onPort = false;
    const QString id = nodeAt(mapToScene(event->pos()), &onPort);
    if (onPort) {
      m_connectFrom = id;
      m_rubber = scene()->addLine(QLineF(outputPort(id), mapToScene(event->pos())),
                                  QPen(palette().color(QPalette::Highlight), 1.5, Qt::DashLine));
      event->accept();
      return;
    }
    m_pressedOnNode = !id.isEmpty();
  }
  QGraphicsView::mousePressEvent(event);
}

void GraphCanvas::mouseMoveEvent(QMouseEvent* event) {
  if (m_panning) {
    const QPoint d = event->pos() - m_panLast;
    m_panLast = event->pos();
    horizontalScrollBar()->setValue(horizontalScrollBar()->value() - d.x());
    verticalScrollBar()->setValue(verticalScrollBar()->value() - d.y());
    return;
  }
  if (m_rubber) {
    m_rubber->setLine(QLineF(outputPort(m_connectFrom), mapToScene(event->pos())));
    return;
  }
  QGraphicsView::mouseMoveEvent(event);
}

void GraphCanvas::mouseReleaseEvent(QMouseEvent* event) {
  if (m_panning && event->button() == Qt::MiddleButton) {
    m_panning = false;
    viewport()->unsetCursor();
    return;
  }
  if (m_rubber && event->button() == Qt::LeftButton) {
    scene()->removeItem(m_rubber);
    delete m_rubber;
    m_rubber = nullptr;
    const QString from = m_connectFrom;
    m_connectFrom.clear();
    const QString to = nodeAt(mapToScene(event->pos()));
    if (to.isEmpty() || to == from) return;
    QString why;
    if (!m_editor->connectNodes(from, to, &why)) refuse(why, event->pos());
    return;
  }
  QGraphicsView::mouseReleaseEvent(event);
  if (event->button() == Qt::LeftButton && m_pressedOnNode) {
    m_pressedOnNode = false;
    commitMoves();
  }
}

void GraphCanvas::commitMoves() {
  QMap<QString, QPointF> moved;
  const auto& model = m_editor->model();
  for (auto* n : m_nodes) {
    const auto* node = model.find(n->id().toStdString());
    // Below a collapsed group the node is drawn higher than it stands in the model.
    const double y = n->pos().y() + m_shift.value(n->id());
    if (node && (node->x != n->pos().x() || node->y != y))
      moved.insert(n->id(), QPointF(std::round(n->pos().x()), std::round(y)));
  }
  if (!moved.isEmpty()) m_editor->moveNodes(moved);
}

void GraphCanvas::wheelEvent(QWheelEvent* event) {
  if (event->modifiers() & Qt::ControlModifier) {
    zoomBy(event->angleDelta().y() > 0 ? 1.15 : 1 / 1.15);
    event->accept();
    return;
  }
  QGraphicsView::wheelEvent(event);
}

void GraphCanvas::keyPressEvent(QKeyEvent* event) {
  if (event->key() == Qt::Key_Delete || event->key() == Qt::Key_Backspace) {
    m_editor->removeNodes(selectedIds());
    return;
  }
  QGraphicsView::keyPressEvent(event);
}

EdgeItem* GraphCanvas::edgeAt(QPoint viewPos) const {
  for (auto* item : items(viewPos))
    if (auto* e = dynamic_cast<EdgeItem*>(item)) return e;
  return nullptr;
}

void GraphCanvas::contextMenuEvent(QContextMenuEvent* event) {
  const QPointF scenePos = mapToScene(event->pos());
  QMenu menu(this);
  const QString id = nodeAt(scenePos);
  const auto& registry = m_editor->document()->registry();
  auto addOpMenu = [&](QMenu* parent, const std::function<void(const QString&)>& act) {
    std::map<std::string, QMenu*> groups;
    for (const auto& name : registry.names()) {
      const auto* def = registry.find(name);
      if (def->isSource) continue;
      QMenu*& g = groups[def->group];
      if (!g) g = parent->addMenu(QString::fromStdString(def->group));
      const QString op = QString::fromStdString(name);
      g->addAction(op, this, [act, op] { act(op); });
    }
  };
  if (!id.isEmpty()) {
    if (!selectedIds().contains(id)) selectNodes({id});
    const QString fix = m_editor->fixFor(id);
    if (!fix.isEmpty())
      menu.addAction(tr("Fix: %1").arg(fix), this, [this, id] { m_editor->applyFix(id); });
    addOpMenu(menu.addMenu(tr("Append after")), [this, id](const QString& op) {
      const QString added = m_editor->addNode(op, {}, id);
      if (!added.isEmpty()) selectNodes({added});
    });
    QMenu* blocks = menu.addMenu(tr("Insert block after"));
    blocks->addAction(tr("Conv-BN-ReLU"), this,
                      [this, id] { selectNodes(m_editor->insertBlock("conv_bn_relu", id)); });
    blocks->addAction(tr("Residual"), this,
                      [this, id] { selectNodes(m_editor->insertBlock("residual", id)); });
    menu.addAction(tr("Freeze up to here"), this, [this, id] { m_editor->freezeUpTo(id); })
        ->setToolTip(tr("Freeze this node and every node before it (fine-tuning)"));
    QMenu* lr = menu.addMenu(tr("Learning rate up to here"));
    for (const double m : {0.01, 0.1, 0.5, 1.0})
      lr->addAction(tr("x%1").arg(m), this, [this, id, m] { m_editor->setLrMultUpTo(id, m); });
    if (const QString group = scopeOf(id); groups().contains(group))
      menu.addAction(tr("Collapse group %1").arg(group), this,
                     [this, group] { setGroupCollapsed(group, true); });
    menu.addAction(tr("Duplicate"), this,
                   [this] { selectNodes(m_editor->duplicate(selectedIds())); });
    menu.addAction(tr("Delete"), this, [this] { m_editor->removeNodes(selectedIds()); });
  } else if (auto* block = [&]() -> NodeItem* {
               for (auto* item : items(event->pos()))
                 if (auto* n = dynamic_cast<NodeItem*>(item); n && n->isGroup()) return n;
               return nullptr;
             }()) {
    const QString group = block->id();
    menu.addAction(tr("Expand group %1").arg(group), this,
                   [this, group] { setGroupCollapsed(group, false); });
  } else if (EdgeItem* e = edgeAt(event->pos());
             e && !e->from()->isGroup() && !e->to()->isGroup()) {
    const QString from = e->from()->id(), to = e->to()->id();
    addOpMenu(menu.addMenu(tr("Insert on this edge")), [this, from, to](const QString& op) {
      QString why;
      const QString added = m_editor->insertOnEdge(from, to, op, &why);
      if (added.isEmpty())
        Q_EMIT message(why);
      else
        selectNodes({added});
    });
    menu.addAction(tr("Delete edge"), this,
                   [this, from, to] { m_editor->disconnectNodes(from, to); });
  } else {
    addOpMenu(menu.addMenu(tr("Add")), [this, scenePos](const QString& op) {
      QString why;
      const QString added = m_editor->addNode(
          op, QPointF(std::round(scenePos.x()), std::round(scenePos.y())), {}, &why);
      if (added.isEmpty()) Q_EMIT message(why);
    });
    menu.addAction(tr("Auto layout"), this, [this] { m_editor->autoLayout(); });
    menu.addAction(tr("Replace head (one output per class)"), this,
                   [this] { m_editor->replaceHead(); });
    menu.addAction(tr("Fit to view"), this, &GraphCanvas::fitToView);
    if (!groups().isEmpty()) {
      menu.addAction(tr("Collapse all groups"), this, [this] { setAllGroupsCollapsed(true); });
      menu.addAction(tr("Expand all groups"), this, [this] { setAllGroupsCollapsed(false); });
    }
  }
  menu.exec(event->globalPos());
}

void GraphCanvas::dragEnterEvent(QDragEnterEvent* event) {
  if (event->mimeData()->hasFormat(QLatin1String(kOpMime)))
    event->acceptProposedAction();
  else
    QGraphicsView::dragEnterEvent(event);
}

void GraphCanvas::dragMoveEvent(QDragMoveEvent* event) {
  if (event->mimeData()->hasFormat(QLatin1String(kOpMime)))
    event->acceptProposedAction();
  else
    QGraphicsView::dragMoveEvent(event);
}

void GraphCanvas::dropEvent(QDropEvent* event) {
  if (!event->mimeData()->hasFormat(QLatin1String(kOpMime))) {
    QGraphicsView::dropEvent(event);
    return;
  }
  const QString op = QString::fromUtf8(event->mimeData()->data(QLatin1String(kOpMime)));
  QString why;
  QString id;
  if (const QStringList selected = selectedIds(); selected.size() == 1) {
    // Dropped while one node is selected: appended after it (it reads that node's output),
    // placed below it with what follows moved down, as the palette's double click does.
    id = m_editor->addNode(op, {}, selected.front(), &why);
  } else {
    // The node's centre lands on the drop point (a node's position is its input port, top
    // centre), moved right until it covers no other node.
    QPointF at = mapToScene(event->position().toPoint()) - QPointF(0, kNodeHeight / 2);
    const auto covers = [this](QPointF p) {
      for (const auto& n : m_editor->model().nodes)
        if (std::abs(n.x - p.x()) < kNodeWidth + 8 && std::abs(n.y - p.y()) < kNodeHeight + 8)
          return true;
      return false;
    };
    for (int i = 0; i < 64 && covers(at); ++i)
      at.rx() += 24;
    id = m_editor->addNode(op, QPointF(std::round(at.x()), std::round(at.y())), {}, &why);
  }
  if (id.isEmpty())
    refuse(why, event->position().toPoint());
  else
    selectNodes({id});
  event->acceptProposedAction();
}

}  // namespace netsmith::ui
