#include "editor/graph_image_writer.h"

#include <QImage>
#include <QPainter>
#include <QSaveFile>

#include "editor/graph_canvas.h"
#include "editor/graph_items.h"
#include "editor/graph_scene.h"

namespace netsmith::ui {

GraphImageWriter::GraphImageWriter(GraphScene* scene) : m_scene(scene) {}

bool GraphImageWriter::writePng(const QString& path, const QColor& background, QString* error) {
  const QRectF r = m_scene->itemsBoundingRect().adjusted(-20, -20, 20, 20);
  QImage image((r.size() * 2).toSize(), QImage::Format_ARGB32);
  image.fill(background);
  {
    QPainter p(&image);
    p.setRenderHint(QPainter::Antialiasing);
    m_scene->clearSelection();
    m_scene->render(&p, QRectF(), r);
  }
  if (!image.save(path, "PNG")) {
    if (error) *error = tr("%1: cannot write").arg(path);
    return false;
  }
  return true;
}

bool GraphImageWriter::writeSvg(const QString& path, QString* error) const {
  constexpr double kNodeWidth = GraphCanvas::kNodeWidth, kNodeHeight = GraphCanvas::kNodeHeight;
  const QRectF r = m_scene->itemsBoundingRect().adjusted(-20, -20, 20, 20);
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
  for (auto* e : m_scene->edges()) {
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
  for (auto* n : m_scene->nodes()) {
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
