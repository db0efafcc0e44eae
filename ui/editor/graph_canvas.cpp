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
#include <QSaveFile>
#include <QScrollBar>
#include <QToolTip>
#include <QWheelEvent>
#include <cmath>
#include <map>

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

/// One node: a rounded box with its id, op summary and output shape.
class NodeItem : public QGraphicsItem {
 public:
  NodeItem(GraphCanvas* canvas, QString id, QString title, QString shape, QString problem,
           bool frozen)
      : m_canvas(canvas),
        m_id(std::move(id)),
        m_title(std::move(title)),
        m_shape(std::move(shape)),
        m_problem(std::move(problem)),
        m_frozen(frozen) {
    setFlags(ItemIsMovable | ItemIsSelectable | ItemSendsGeometryChanges);
    setToolTip(m_problem.isEmpty()
                   ? m_id + ": " + m_title + "\n" + QObject::tr("output %1").arg(m_shape)
                   : m_id + ": " + m_problem);
    setZValue(1);
  }
  QRectF boundingRect() const override {
    return {-GraphCanvas::kNodeWidth / 2 - 4, -4, GraphCanvas::kNodeWidth + 8,
            GraphCanvas::kNodeHeight + 8};
  }
  void paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) override {
    const QRectF r(-GraphCanvas::kNodeWidth / 2, 0, GraphCanvas::kNodeWidth,
                   GraphCanvas::kNodeHeight);
    const bool bad = !m_problem.isEmpty();
    const QPalette pal = QApplication::palette();
    QColor fill = bad ? QColor(253, 226, 226) : pal.color(QPalette::Base);
    QColor border = bad ? QColor(200, 30, 30) : pal.color(QPalette::Mid);
    if (isSelected()) border = pal.color(QPalette::Highlight);
    p->setRenderHint(QPainter::Antialiasing);
    p->setPen(
        QPen(border, isSelected() || bad ? 2.2 : 1.2, m_frozen ? Qt::DashLine : Qt::SolidLine));
    p->setBrush(fill);
    p->drawRoundedRect(r, 6, 6);
    const QColor text = bad ? QColor(120, 0, 0) : pal.color(QPalette::Text);
    p->setPen(text);
    QFont f = QApplication::font();
    f.setPointSizeF(8.5);
    f.setBold(true);
    p->setFont(f);
    p->drawText(r.adjusted(8, 3, -8, 0), Qt::AlignLeft | Qt::AlignTop, m_id);
    f.setBold(false);
    p->setFont(f);
    p->drawText(r.adjusted(8, 20, -8, 0), Qt::AlignLeft | Qt::AlignTop, m_title);
    QColor dim = text;
    dim.setAlpha(160);
    p->setPen(dim);
    p->drawText(r.adjusted(8, 0, -8, -3), Qt::AlignLeft | Qt::AlignBottom,
                bad ? QObject::tr("error") : m_shape);
    // ports
    p->setPen(QPen(border, 1));
    p->setBrush(pal.color(QPalette::Window));
    p->drawEllipse(QPointF(0, 0), 4, 4);
    p->setBrush(pal.color(QPalette::Highlight));
    p->drawEllipse(QPointF(0, GraphCanvas::kNodeHeight), 4.5, 4.5);
  }
  QVariant itemChange(GraphicsItemChange change, const QVariant& value) override;

  QString id() const { return m_id; }
  QString title() const { return m_title; }
  bool invalid() const { return !m_problem.isEmpty(); }
  QList<EdgeItem*> edges;

 private:
  GraphCanvas* m_canvas;
  QString m_id, m_title, m_shape, m_problem;
  bool m_frozen;
};

/// An edge from an output port to an input port, labelled with the tensor shape.
class EdgeItem : public QGraphicsPathItem {
 public:
  EdgeItem(NodeItem* from, NodeItem* to, QString label)
      : m_from(from), m_to(to), m_label(std::move(label)) {
    setZValue(0);
    from->edges << this;
    to->edges << this;
    adjust();
  }
  void adjust() {
    const QPointF a = m_from->pos() + QPointF(0, GraphCanvas::kNodeHeight);
    const QPointF b = m_to->pos();
    QPainterPath path(a);
    const double dy = std::max(30.0, std::abs(b.y() - a.y()) / 2);
    // An edge that skips rows in one column (a residual connection) bows out to the right,
    // so it does not run through the nodes it skips.
    const bool skip = std::abs(b.x() - a.x()) < GraphCanvas::kNodeWidth &&
                      b.y() - a.y() > GraphCanvas::kNodeHeight * 2;
    const QPointF bow(skip ? GraphCanvas::kNodeWidth * 0.9 : 0, 0);
    path.cubicTo(a + QPointF(0, dy) + bow, b - QPointF(0, dy) + bow, b);
    prepareGeometryChange();
    setPath(path);
    m_mid = path.pointAtPercent(0.5);
  }
  QRectF boundingRect() const override {
    return QGraphicsPathItem::boundingRect().united(QRectF(m_mid.x() - 4, m_mid.y() - 8, 90, 16));
  }
  QPainterPath shape() const override {
    QPainterPathStroker stroker;
    stroker.setWidth(8);
    return stroker.createStroke(path());
  }
  void paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) override {
    const QPalette pal = QApplication::palette();
    p->setRenderHint(QPainter::Antialiasing);
    p->setPen(QPen(pal.color(QPalette::Mid), 1.4));
    p->setBrush(Qt::NoBrush);
    p->drawPath(path());
    // arrow head at the input port
    const QPointF tip = path().pointAtPercent(1.0);
    p->setBrush(pal.color(QPalette::Mid));
    p->drawPolygon(QPolygonF({tip, tip + QPointF(-4, -8), tip + QPointF(4, -8)}));
    if (!m_label.isEmpty()) {
      QFont f = QApplication::font();
      f.setPointSizeF(7.5);
      p->setFont(f);
      p->setPen(pal.color(QPalette::Text));
      p->drawText(m_mid + QPointF(5, 4), m_label);
    }
  }
  NodeItem* from() const { return m_from; }
  NodeItem* to() const { return m_to; }
  QString label() const { return m_label; }
  QPointF mid() const { return m_mid; }

 private:
  NodeItem* m_from;
  NodeItem* m_to;
  QString m_label;
  QPointF m_mid;
};

QVariant NodeItem::itemChange(GraphicsItemChange change, const QVariant& value) {
  if (change == ItemPositionHasChanged)
    for (auto* e : edges)
      e->adjust();
  return QGraphicsItem::itemChange(change, value);
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
  m_rebuilding = true;
  m_rubber = nullptr;
  scene()->clear();
  m_nodes.clear();
  m_edges.clear();
  const auto& model = m_editor->model();
  const auto& analysis = m_editor->document()->analysis();
  std::map<std::string, QString> problems;
  for (const auto& p : analysis.problems)
    if (!p.nodeId.empty()) {
      QString& text = problems[p.nodeId];
      if (!text.isEmpty()) text += "\n";
      text += QString::fromStdString(p.message + (p.fix.empty() ? "" : "; " + p.fix));
    }
  for (const auto& n : model.nodes) {
    const auto* info = analysis.find(n.id);
    const Json params = info && info->valid ? info->params.values() : n.params;
    const QString shape = info && !info->outputShape.empty()
                              ? QString::fromStdString(formatShape(info->outputShape))
                              : QStringLiteral("?");
    auto* item = new NodeItem(this, QString::fromStdString(n.id), describe(n.op, params), shape,
                              problems.count(n.id) ? problems[n.id] : QString(), n.frozen);
    item->setPos(n.x, n.y);
    scene()->addItem(item);
    m_nodes.insert(item->id(), item);
  }
  for (const auto& n : model.nodes)
    for (const auto& in : n.inputs) {
      NodeItem* from = m_nodes.value(QString::fromStdString(in));
      NodeItem* to = m_nodes.value(QString::fromStdString(n.id));
      if (!from || !to) continue;
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
  scene()->setSceneRect(scene()->itemsBoundingRect().adjusted(-400, -300, 400, 300));
  m_rebuilding = false;
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
  scene()->clearSelection();
  for (const auto& id : ids)
    if (auto* n = m_nodes.value(id)) {
      n->setSelected(true);
      if (center) centerOn(n);
    }
}

void GraphCanvas::resizeEvent(QResizeEvent* event) {
  QGraphicsView::resizeEvent(event);
  if (m_fitPending) fitToView();
}

void GraphCanvas::fitToView() {
  m_fitPending = !isVisible() || viewport()->width() < 50 || viewport()->height() < 50;
  if (m_fitPending) return;
  const QRectF r = scene()->itemsBoundingRect().adjusted(-30, -30, 30, 30);
  if (r.isEmpty()) return;
  // Fit, but never so small that the labels cannot be read: a long network shows its top
  // and scrolls.
  const double s = std::clamp(
      std::min(viewport()->width() / r.width(), viewport()->height() / r.height()), 0.6, 1.5);
  setTransform(QTransform::fromScale(s, s));
  const double visibleHeight = viewport()->height() / s;
  centerOn(r.height() <= visibleHeight ? r.center()
                                       : QPointF(r.center().x(), r.top() + visibleHeight / 2));
}

void GraphCanvas::zoomBy(double factor) {
  const double s = transform().m11() * factor;
  if (s < 0.05 || s > 6) return;
  scale(factor, factor);
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
    if (node && (node->x != n->pos().x() || node->y != n->pos().y()))
      moved.insert(n->id(), QPointF(std::round(n->pos().x()), std::round(n->pos().y())));
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
    menu.addAction(tr("Duplicate"), this,
                   [this] { selectNodes(m_editor->duplicate(selectedIds())); });
    menu.addAction(tr("Delete"), this, [this] { m_editor->removeNodes(selectedIds()); });
  } else if (EdgeItem* e = edgeAt(event->pos())) {
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
    menu.addAction(tr("Fit to view"), this, &GraphCanvas::fitToView);
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
  const QPointF at = mapToScene(event->position().toPoint());
  QString why;
  const QString id =
      m_editor->addNode(op, QPointF(std::round(at.x()), std::round(at.y())), {}, &why);
  if (id.isEmpty())
    refuse(why, event->position().toPoint());
  else
    selectNodes({id});
  event->acceptProposedAction();
}

bool GraphCanvas::exportPng(const QString& path, QString* error) {
  const QRectF r = scene()->itemsBoundingRect().adjusted(-20, -20, 20, 20);
  QImage image((r.size() * 2).toSize(), QImage::Format_ARGB32);
  image.fill(palette().color(QPalette::Base));
  {
    QPainter p(&image);
    p.setRenderHint(QPainter::Antialiasing);
    scene()->clearSelection();
    scene()->render(&p, QRectF(), r);
  }
  if (!image.save(path, "PNG")) {
    if (error) *error = tr("%1: cannot write").arg(path);
    return false;
  }
  return true;
}

bool GraphCanvas::exportSvg(const QString& path, QString* error) {
  const QRectF r = scene()->itemsBoundingRect().adjusted(-20, -20, 20, 20);
  auto esc = [](QString s) { return s.toHtmlEscaped(); };
  QString svg;
  svg += QStringLiteral(
             "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"%1 %2 %3 %4\" width=\"%3\" "
             "height=\"%4\" font-family=\"sans-serif\">\n")
             .arg(r.x())
             .arg(r.y())
             .arg(r.width())
             .arg(r.height());
  svg += QStringLiteral("<rect x=\"%1\" y=\"%2\" width=\"%3\" height=\"%4\" fill=\"white\"/>\n")
             .arg(r.x())
             .arg(r.y())
             .arg(r.width())
             .arg(r.height());
  for (auto* e : m_edges) {
    const QPainterPath p = e->path();
    QString d = QStringLiteral("M %1 %2").arg(p.elementAt(0).x).arg(p.elementAt(0).y);
    for (int i = 1; i + 2 < p.elementCount(); i += 3)
      d += QStringLiteral(" C %1 %2 %3 %4 %5 %6")
               .arg(p.elementAt(i).x)
               .arg(p.elementAt(i).y)
               .arg(p.elementAt(i + 1).x)
               .arg(p.elementAt(i + 1).y)
               .arg(p.elementAt(i + 2).x)
               .arg(p.elementAt(i + 2).y);
    svg += QStringLiteral("<path d=\"%1\" fill=\"none\" stroke=\"#888\" stroke-width=\"1.4\"/>\n")
               .arg(d);
    if (!e->label().isEmpty())
      svg += QStringLiteral("<text x=\"%1\" y=\"%2\" font-size=\"9\">%3</text>\n")
                 .arg(e->mid().x() + 5)
                 .arg(e->mid().y() + 4)
                 .arg(esc(e->label()));
  }
  for (auto* n : m_nodes) {
    const QPointF o = n->pos() + QPointF(-kNodeWidth / 2, 0);
    svg += QStringLiteral(
               "<rect x=\"%1\" y=\"%2\" width=\"%3\" height=\"%4\" rx=\"6\" fill=\"%5\" "
               "stroke=\"%6\"/>\n")
               .arg(o.x())
               .arg(o.y())
               .arg(kNodeWidth)
               .arg(kNodeHeight)
               .arg(n->invalid() ? "#fde2e2" : "#ffffff", n->invalid() ? "#c81e1e" : "#999999");
    svg +=
        QStringLiteral("<text x=\"%1\" y=\"%2\" font-size=\"11\" font-weight=\"bold\">%3</text>\n")
            .arg(o.x() + 8)
            .arg(o.y() + 15)
            .arg(esc(n->id()));
    svg += QStringLiteral("<text x=\"%1\" y=\"%2\" font-size=\"11\">%3</text>\n")
               .arg(o.x() + 8)
               .arg(o.y() + 32)
               .arg(esc(n->title()));
  }
  svg += QStringLiteral("</svg>\n");
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly) || file.write(svg.toUtf8()) < 0 || !file.commit()) {
    if (error) *error = tr("%1: cannot write (%2)").arg(path, file.errorString());
    return false;
  }
  return true;
}

}  // namespace netsmith::ui
