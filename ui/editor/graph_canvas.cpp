#include "editor/graph_canvas.h"

#include <QApplication>
#include <QContextMenuEvent>
#include <QMenu>
#include <QMimeData>
#include <QMouseEvent>
#include <QToolTip>
#include <QWheelEvent>
#include <cmath>
#include <map>

#include "editor/canvas_navigation.h"
#include "editor/graph_groups.h"
#include "editor/graph_image_writer.h"
#include "editor/graph_items.h"
#include "editor/graph_scene.h"
#include "editor/minimap.h"
#include "editor/model_editor.h"
#include "editor/wire_drag.h"
#include "session/project_document.h"

namespace netsmith::ui {

namespace {

/// The edge under a point of `view` (nullptr for none).
EdgeItem* edgeUnder(const QGraphicsView* view, QPoint viewPos) {
  for (auto* item : view->items(viewPos))
    if (auto* e = dynamic_cast<EdgeItem*>(item)) return e;
  return nullptr;
}

}  // namespace

QFont GraphCanvas::nodeFont() {
  return QApplication::font();
}

double GraphCanvas::readableScale() {
  QFont f = nodeFont();
  f.setPointSizeF(f.pointSizeF() * 0.85);  // NodeItem::paintCompact's line
  return QFontMetricsF(f).height() / double(kNodeHeight);
}

GraphCanvas::GraphCanvas(ModelEditor* editor, QWidget* parent)
    : QGraphicsView(parent), m_editor(editor) {
  setObjectName(QStringLiteral("graphCanvas"));
  m_scene = new GraphScene(this, editor);
  setScene(m_scene);
  setRenderHint(QPainter::Antialiasing);
  setDragMode(QGraphicsView::RubberBandDrag);
  setAcceptDrops(true);
  setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
  setViewportUpdateMode(QGraphicsView::BoundingRectViewportUpdate);
  connect(m_scene, &QGraphicsScene::selectionChanged, this, [this] {
    if (!m_rebuilding) Q_EMIT selectionChangedIds(selectedIds());
  });
  m_navigation = std::make_unique<CanvasNavigation>(this);
  m_wire = std::make_unique<WireDrag>(m_scene);
}

GraphCanvas::~GraphCanvas() {
  // The scene's items go after this; their selection changes must not reach anyone.
  m_rebuilding = true;
  scene()->disconnect(this);
}

double GraphCanvas::zoom() const {
  return m_navigation->zoom();
}

QWidget* GraphCanvas::minimap() const {
  return m_navigation->minimap();
}

int GraphCanvas::visibleNodeCount() const {
  return int(m_scene->nodes().size());
}

int GraphCanvas::nodeCount() const {
  return int(m_scene->nodes().size());
}

int GraphCanvas::edgeCount() const {
  return int(m_scene->edges().size());
}

QString GraphCanvas::nodeLabel(const QString& id) const {
  const auto* n = m_scene->node(id);
  return n ? n->title() : QString();
}

QString GraphCanvas::edgeLabel(const QString& from, const QString& to) const {
  for (auto* e : m_scene->edges())
    if (e->from()->id() == from && e->to()->id() == to) return e->label();
  return {};
}

bool GraphCanvas::nodeIsInvalid(const QString& id) const {
  const auto* n = m_scene->node(id);
  return n && n->invalid();
}

void GraphCanvas::rebuild() {
  const QStringList selected = selectedIds();
  // The view stays where it is: the scene point at its centre is put back afterwards.
  const bool keepView = isVisible() && !m_navigation->fitPending() && !m_scene->nodes().isEmpty();
  const QRectF visible = mapToScene(viewport()->rect()).boundingRect();
  m_rebuilding = true;
  m_wire->forget();
  m_scene->build();
  for (const auto& id : selected)
    if (auto* item = m_scene->node(id)) item->setSelected(true);
  // The scene always covers what is on screen, so that the view never re-centres by itself.
  QRectF area = m_scene->itemsBoundingRect().adjusted(-400, -300, 400, 300);
  if (keepView) area = area.united(visible);
  m_scene->setSceneRect(area);
  if (keepView) centerOn(visible.center());
  m_rebuilding = false;
  m_navigation->sceneChanged();
  if (selectedIds() != selected) Q_EMIT selectionChangedIds(selectedIds());
}

QStringList GraphCanvas::selectedIds() const {
  return m_scene->selectedIds();
}

void GraphCanvas::selectNodes(const QStringList& ids, bool center) {
  // A node inside a collapsed group is shown by expanding the group.
  if (m_scene->expandGroupsOf(ids)) rebuild();
  scene()->clearSelection();
  for (const auto& id : ids)
    if (auto* n = m_scene->node(id)) {
      n->setSelected(true);
      if (center) centerOn(n);
    }
}

void GraphCanvas::resizeEvent(QResizeEvent* event) {
  QGraphicsView::resizeEvent(event);
  m_navigation->viewResized();
}

void GraphCanvas::showEvent(QShowEvent* event) {
  QGraphicsView::showEvent(event);
  m_navigation->viewShown();
}

void GraphCanvas::fitToView() {
  m_navigation->fit(false);
}

void GraphCanvas::fitReadably() {
  m_navigation->fit(true);
}

void GraphCanvas::zoomToSelection() {
  QRectF r;
  for (const auto& id : selectedIds())
    if (auto* n = m_scene->node(id)) r = r.united(n->sceneBoundingRect());
  if (r.isEmpty()) {
    fitToView();
    return;
  }
  // Some room around it, and never closer than 150%.
  m_navigation->zoomTo(r.adjusted(-kNodeWidth / 2, -kNodeHeight, kNodeWidth / 2, kNodeHeight));
}

void GraphCanvas::zoomBy(double factor) {
  m_navigation->zoomBy(factor);
}

QStringList GraphCanvas::groups() const {
  return m_scene->groups();
}

bool GraphCanvas::isGroupCollapsed(const QString& name) const {
  return m_scene->isCollapsed(name);
}

void GraphCanvas::setGroupCollapsed(const QString& name, bool collapsed) {
  if (m_scene->setCollapsed(name, collapsed)) rebuild();
}

void GraphCanvas::setAllGroupsCollapsed(bool collapsed) {
  m_scene->setAllCollapsed(collapsed);
  rebuild();
}

QRectF GraphCanvas::groupRect(const QString& name) const {
  const auto* item = m_scene->groupBlock(name);
  return item ? item->sceneBoundingRect() : QRectF();
}

QString GraphCanvas::nodeAt(QPointF scenePos, bool* onOutputPort) const {
  return m_scene->nodeAt(scenePos, onOutputPort);
}

QPointF GraphCanvas::outputPort(const QString& id) const {
  return m_scene->outputPort(id);
}

QPointF GraphCanvas::inputPort(const QString& id) const {
  return m_scene->inputPort(id);
}

bool GraphCanvas::exportPng(const QString& path, QString* error) {
  return GraphImageWriter(m_scene).writePng(path, palette().color(QPalette::Base), error);
}

bool GraphCanvas::exportSvg(const QString& path, QString* error) {
  return GraphImageWriter(m_scene).writeSvg(path, error);
}

void GraphCanvas::refuse(const QString& why, QPoint viewPos) {
  QToolTip::showText(viewport()->mapToGlobal(viewPos), why, this);
  Q_EMIT message(why);
}

void GraphCanvas::mousePressEvent(QMouseEvent* event) {
  if (m_navigation->pressPan(event)) return;
  if (event->button() == Qt::LeftButton) {
    if (const QString fix = m_scene->fixButtonAt(mapToScene(event->pos())); !fix.isEmpty()) {
      const QString did = m_editor->applyFix(fix);
      if (!did.isEmpty()) Q_EMIT message(did);
      event->accept();
      return;
    }
    bool onPort = false;
    const QString id = nodeAt(mapToScene(event->pos()), &onPort);
    if (onPort) {
      m_wire->start(id, mapToScene(event->pos()), palette().color(QPalette::Highlight));
      event->accept();
      return;
    }
    m_pressedOnNode = !id.isEmpty();
  }
  QGraphicsView::mousePressEvent(event);
}

void GraphCanvas::mouseMoveEvent(QMouseEvent* event) {
  if (m_navigation->movePan(event)) return;
  if (m_wire->active()) {
    m_wire->moveTo(mapToScene(event->pos()));
    return;
  }
  QGraphicsView::mouseMoveEvent(event);
}

void GraphCanvas::mouseReleaseEvent(QMouseEvent* event) {
  if (m_navigation->releasePan(event)) return;
  if (m_wire->active() && event->button() == Qt::LeftButton) {
    const QString from = m_wire->finish();
    const QString to = nodeAt(mapToScene(event->pos()));
    if (to.isEmpty() || to == from) return;
    QString why;
    if (!m_editor->connectNodes(from, to, &why)) refuse(why, event->pos());
    return;
  }
  QGraphicsView::mouseReleaseEvent(event);
  if (event->button() == Qt::LeftButton && m_pressedOnNode) {
    m_pressedOnNode = false;
    if (const auto moved = m_scene->movedNodes(); !moved.isEmpty()) m_editor->moveNodes(moved);
  }
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
  } else if (EdgeItem* e = edgeUnder(this, event->pos());
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
