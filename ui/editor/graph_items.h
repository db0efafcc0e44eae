#pragma once

// The canvas's scene items (a node box, an edge curve), shared by the canvas and its image
// exports. Private to ui/editor.
#include <QApplication>
#include <QGraphicsItem>
#include <QGraphicsPathItem>
#include <QPainter>
#include <QString>
#include <QStyleOptionGraphicsItem>
#include <cmath>
#include <vector>

#include "editor/graph_canvas.h"
#include "util/theme_colors.h"

namespace netsmith::ui {

/// One node: a rounded box with its id, op summary and output shape.
class NodeItem : public QGraphicsItem {
 public:
  NodeItem(GraphCanvas* canvas, QString id, QString title, QString shape, QString problem,
           bool frozen, bool hasFix)
      : m_canvas(canvas),
        m_id(std::move(id)),
        m_title(std::move(title)),
        m_shape(std::move(shape)),
        m_problem(std::move(problem)),
        m_frozen(frozen),
        m_hasFix(hasFix) {
    setFlags(ItemIsMovable | ItemIsSelectable | ItemSendsGeometryChanges);
    setToolTip(m_problem.isEmpty()
                   ? m_id + ": " + m_title + "\n" + QObject::tr("output %1").arg(m_shape)
                   : m_id + ": " + m_problem);
    setZValue(1);
  }
  QRectF boundingRect() const override {
    return {-GraphCanvas::kNodeWidth / 2 - 4, -4, GraphCanvas::kNodeWidth + 14,
            GraphCanvas::kNodeHeight + 14};
  }
  /// Makes this item the block of a collapsed group of `members` nodes: drawn doubled, not
  /// moved or selected (a double click expands it).
  void setGroup(int members) {
    m_groupSize = members;
    setFlags(ItemSendsGeometryChanges);
  }
  bool isGroup() const { return m_groupSize > 0; }
  /// The op's palette group ("Convolution", "Activation"): compact blocks are tinted by it,
  /// so that a network's structure shows when it is too small to read.
  void setCategory(const QString& category) { m_category = category; }

  /// Below this scale the text of a full node is too small to read: a compact block is drawn.
  static constexpr double kReadableScale = 0.6;

  void paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget*) override {
    const QRectF r(-GraphCanvas::kNodeWidth / 2, 0, GraphCanvas::kNodeWidth,
                   GraphCanvas::kNodeHeight);
    const bool bad = !m_problem.isEmpty();
    const QPalette pal = QApplication::palette();
    const ThemeColors theme = themeColors();
    QColor fill = bad ? theme.errorFill : pal.color(QPalette::Base);
    if (isGroup()) fill = pal.color(QPalette::AlternateBase);
    QColor border = bad ? theme.errorBorder : pal.color(QPalette::Mid);
    if (isSelected()) border = pal.color(QPalette::Highlight);
    p->setRenderHint(QPainter::Antialiasing);
    if (isGroup()) {  // a stack of cards: the group holds several nodes
      p->setPen(QPen(border, 1.2));
      p->setBrush(fill);
      p->drawRoundedRect(r.translated(5, 5), 6, 6);
    }
    p->setPen(
        QPen(border, isSelected() || bad ? 2.2 : 1.2, m_frozen ? Qt::DashLine : Qt::SolidLine));
    p->setBrush(fill);
    p->drawRoundedRect(r, 6, 6);
    const double lod = option->levelOfDetailFromTransform(p->worldTransform());
    if (lod < kReadableScale) {
      if (!bad && !isGroup()) {
        p->setBrush(opGroupTint(m_category, fill));
        p->drawRoundedRect(r, 6, 6);
      }
      paintCompact(p, r, lod, bad ? theme.errorText : pal.color(QPalette::Text));
      return;
    }
    const QColor text = bad ? theme.errorText : pal.color(QPalette::Text);
    p->setPen(text);
    // Three lines at the application's font size: id, op and key parameters, output shape.
    QFont f = GraphCanvas::nodeFont();
    const double line = QFontMetricsF(f).height();
    const double gap = std::max(0.0, (GraphCanvas::kNodeHeight - 3 * line) / 4);
    f.setBold(true);
    p->setFont(f);
    p->drawText(r.adjusted(8, gap, -8, 0), Qt::AlignLeft | Qt::AlignTop, m_id);
    f.setBold(false);
    p->setFont(f);
    p->drawText(r.adjusted(8, 2 * gap + line, -8, 0), Qt::AlignLeft | Qt::AlignTop, m_title);
    QColor dim = text;
    dim.setAlpha(160);
    p->setPen(dim);
    p->drawText(r.adjusted(8, 0, -8, -gap), Qt::AlignLeft | Qt::AlignBottom,
                bad ? QObject::tr("error") : m_shape);
    if (m_hasFix) {  // a "Fix" button in the top-right corner; a click applies the quick fix
      const QRectF b = fixButtonRect();
      p->setPen(QPen(theme.errorBorder, 1));
      p->setBrush(theme.errorBorder);
      p->drawRoundedRect(b, 4, 4);
      p->setPen(QColor(Qt::white));
      f.setBold(true);
      p->setFont(f);
      p->drawText(b, Qt::AlignCenter, QObject::tr("Fix"));
    }
    // ports
    p->setPen(QPen(border, 1));
    p->setBrush(pal.color(QPalette::Window));
    p->drawEllipse(QPointF(0, 0), 4, 4);
    p->setBrush(pal.color(QPalette::Highlight));
    p->drawEllipse(QPointF(0, GraphCanvas::kNodeHeight), 4.5, 4.5);
  }
  QVariant itemChange(GraphicsItemChange change, const QVariant& value) override;

  /// A node too small to read in full: its op (or a group's name) and its output shape, in
  /// letters kept at a readable size on screen, as many lines as the box holds at this scale.
  void paintCompact(QPainter* p, const QRectF& r, double lod, const QColor& text) const {
    QFont f = GraphCanvas::nodeFont();
    f.setPointSizeF(f.pointSizeF() * 0.85);
    const double screenPx = QFontMetricsF(f).height();   // a small line of text, on screen
    const double line = screenPx / std::max(lod, 1e-3);  // the same line, in scene units
    if (line > r.height()) return;                       // a plain block
    f.setPointSizeF(f.pointSizeF() / std::max(lod, 1e-3));
    f.setBold(true);
    p->setFont(f);
    p->setPen(text);
    const QString name = isGroup() ? m_id : m_title.section(QLatin1Char(' '), 0, 0);
    const QRectF inner = r.adjusted(4, 0, -4, 0);
    if (2 * line <= r.height()) {
      p->drawText(QRectF(inner.left(), r.center().y() - line, inner.width(), line), Qt::AlignCenter,
                  QFontMetricsF(f).elidedText(name, Qt::ElideRight, inner.width()));
      f.setBold(false);
      p->setFont(f);
      const QString second = isGroup() ? m_title.section(QLatin1Char(','), 0, 0) : m_shape;
      p->drawText(QRectF(inner.left(), r.center().y(), inner.width(), line), Qt::AlignCenter,
                  QFontMetricsF(f).elidedText(second, Qt::ElideRight, inner.width()));
    } else {
      p->drawText(inner, Qt::AlignCenter,
                  QFontMetricsF(f).elidedText(name, Qt::ElideRight, inner.width()));
    }
  }

  QString id() const { return m_id; }
  QString title() const { return m_title; }
  bool invalid() const { return !m_problem.isEmpty(); }
  bool hasFix() const { return m_hasFix; }
  /// The "Fix" button, in item coordinates.
  static QRectF fixButtonRect() {
    const double h = QFontMetricsF(GraphCanvas::nodeFont()).height() + 4;
    const double w =
        QFontMetricsF(GraphCanvas::nodeFont()).horizontalAdvance(QObject::tr("Fix")) + 14;
    return {GraphCanvas::kNodeWidth / 2 - w - 5, 4, w, h};
  }
  QList<EdgeItem*> edges;

 private:
  GraphCanvas* m_canvas;
  QString m_id, m_title, m_shape, m_problem;
  bool m_frozen;
  bool m_hasFix;
  int m_groupSize = 0;
  QString m_category;
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
  void paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget*) override {
    const QPalette pal = QApplication::palette();
    p->setRenderHint(QPainter::Antialiasing);
    p->setPen(QPen(pal.color(QPalette::Mid), 1.4));
    p->setBrush(Qt::NoBrush);
    p->drawPath(path());
    // arrow head at the input port
    const QPointF tip = path().pointAtPercent(1.0);
    p->setBrush(pal.color(QPalette::Mid));
    p->drawPolygon(QPolygonF({tip, tip + QPointF(-4, -8), tip + QPointF(4, -8)}));
    // Shapes on edges only where they can be read; the compact blocks show them.
    if (!m_label.isEmpty() &&
        option->levelOfDetailFromTransform(p->worldTransform()) >= NodeItem::kReadableScale) {
      QFont f = GraphCanvas::nodeFont();
      f.setPointSizeF(f.pointSizeF() * 0.9);
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

inline QVariant NodeItem::itemChange(GraphicsItemChange change, const QVariant& value) {
  if (change == ItemPositionHasChanged)
    for (auto* e : edges)
      e->adjust();
  return QGraphicsItem::itemChange(change, value);
}

}  // namespace netsmith::ui
