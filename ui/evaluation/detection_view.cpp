#include "evaluation/detection_view.h"

#include <QComboBox>
#include <QLabel>
#include <QListWidget>
#include <QPainter>
#include <QSplitter>

#include <algorithm>
#include <cmath>

#include "data/preview_grid.h"
#include "eval/evaluation.h"
#include "task/coco_map.h"
#include "util/image_convert.h"

namespace netsmith::ui {

namespace {

constexpr int kBoxTile = 96;  // each of a tile's two pictures
constexpr double kMatchIou = 0.5;

QString classFigure(double v) {
  return std::isfinite(v) ? QString::number(v, 'f', 4) : QStringLiteral("-");
}

/// Class `k`'s detections of one image matched at IoU 0.5 as COCO matches them
/// (task::matchImage): (score, found) per detection that counts (one on a crowd or difficult
/// box counts neither way), and the class's true boxes that count.
void matchClass(const task::SampleView& v, std::int64_t k,
                std::vector<std::pair<float, bool>>& scored, std::int64_t& positives) {
  const auto m = task::matchImage(v.trueBoxes, v.predictedBoxes, k, kMatchIou);
  positives += m.positives;
  for (std::size_t d = 0; d < v.predictedBoxes.size(); ++d) {
    if (v.predictedBoxes[d].cls != k || m.onIgnored[d]) continue;
    const float score = d < v.predictedScores.size() ? v.predictedScores[d] : 0.f;
    scored.emplace_back(score, m.truthOf[d] >= 0);
  }
}

QColor boxColor(std::int64_t cls, const std::vector<std::string>& colors) {
  const cv::Vec3f c = data::classColor(std::size_t(std::max<std::int64_t>(cls, 0)), colors, 0);
  return QColor(int(c[0]), int(c[1]), int(c[2]));
}

}  // namespace

task::DetectionErrors detectionErrors(const task::SampleView& v, float threshold) {
  return task::detectionErrors(v.trueBoxes, v.predictedBoxes, v.predictedScores, threshold);
}

DetectionView::DetectionView(QWidget* parent)
    : ThresholdCurveView(
          {QStringLiteral("classApTable"),
           {tr("Class"), tr("AP"), tr("AP@.5"), tr("Recall")},
           tr("COCO's figures: AP averaged over IoU 0.50 to 0.95, AP at IoU 0.50, recall averaged "
              "over the thresholds (100 detections per image). Select a class to see its "
              "precision-recall curve."),
           QStringLiteral("detectionPrCurve"),
           tr("recall (IoU 0.5)"),
           QStringLiteral("scoreSlider"),
           tr("The score from which a detection counts (and is drawn)"),
           QStringLiteral("scoreCounts")},
          task::kErrorsScore, parent),
      m_order(new QComboBox(this)),
      m_gallery(new QListWidget(this)) {
  setObjectName(QStringLiteral("detectionView"));
  connect(this, &ThresholdCurveView::thresholdChanged, this, &DetectionView::fillGallery);
  m_order->setObjectName(QStringLiteral("detectionOrder"));
  m_order->addItems({tr("Most errors first"), tr("Missed objects first"),
                     tr("False detections first"), tr("Wrong classes first"),
                     tr("Poor boxes first"), tr("Fewest errors first")});
  connect(m_order, qOverload<int>(&QComboBox::currentIndexChanged), this,
          &DetectionView::fillGallery);
  setUpGallery(m_gallery, QStringLiteral("detectionGallery"), QSize(2 * kBoxTile + 4, kBoxTile),
               QSize(2 * kBoxTile + 24, kBoxTile + 40));
  m_gallery->setToolTip(
      tr("Each image: its true boxes, and the detections from the slider's score"));

  layOutSplit(Qt::Horizontal, figuresSplit(Qt::Vertical, tr("Score")),
              galleryPanel(tr("<b>True boxes, detections</b>"), m_gallery, m_order), 2, 3);
}

void DetectionView::clearResult() {
  ThresholdCurveView::clearResult();
  m_counts = {};
  m_gallery->clear();
}

void DetectionView::showResult(const eval::Evaluation& e) {
  clearResult();
  const auto& per = e.metrics.perClass;
  std::vector<QStringList> rows;
  for (std::size_t k = 0; k < e.classes.size(); ++k)
    rows.push_back({QString::fromStdString(e.classes[k]), classFigure(perClassFigure(per, "ap", k)),
                    classFigure(perClassFigure(per, "ap50", k)),
                    classFigure(perClassFigure(per, "recall", k))});
  showRows(e, rows);
  fillGallery();
}

ThresholdCurveView::RowScores DetectionView::rowScores(std::size_t cls) const {
  RowScores out;
  std::int64_t positives = 0;
  for (const auto& s : evaluation()->samples)
    matchClass(s.view, std::int64_t(cls), out.scored, positives);
  out.positives = double(positives);
  return out;
}

void DetectionView::showCounts() {
  const double t = threshold();
  const auto& [scored, positives] = scores();
  Counts c;
  for (const auto& [score, found] : scored)
    if (double(score) >= t) (found ? c.tp : c.fp) += 1;
  c.fn = std::int64_t(positives) - c.tp;
  m_counts = c;
  const double precision = c.tp + c.fp ? double(c.tp) / double(c.tp + c.fp) : 0;
  const double recall = positives ? double(c.tp) / positives : 0;
  countsLabel()->setText(
      tr("%1 from score %2 at IoU 0.5: precision %3, recall %4 (TP %5, FP %6, FN %7)")
          .arg(rowName().toHtmlEscaped())
          .arg(t, 0, 'f', 3)
          .arg(precision, 0, 'f', 4)
          .arg(recall, 0, 'f', 4)
          .arg(c.tp)
          .arg(c.fp)
          .arg(c.fn));
  markPrPoint(curve(), recall, precision, c.tp + c.fp > 0);
}

QPixmap DetectionView::tile(const eval::SampleOutcome& s, const std::vector<std::string>& colors,
                            int side, float threshold) {
  const auto& v = s.view;
  const QImage picture = toQImage(s.picture);
  QPixmap pixmap(2 * side + 4, side);
  pixmap.fill(Qt::transparent);
  if (picture.isNull()) return pixmap;
  QPainter p(&pixmap);
  p.setRenderHint(QPainter::Antialiasing, false);
  const QImage big = picture.scaled(side, side, Qt::KeepAspectRatio, Qt::FastTransformation);
  const double scale = double(big.width()) / std::max(1, v.width > 0 ? v.width : picture.width());
  QFont font = p.font();
  font.setPixelSize(std::max(8, side / 12));
  p.setFont(font);
  for (int panel = 0; panel < 2; ++panel) {
    const int x0 = panel * (side + 4) + (side - big.width()) / 2;
    const int y0 = (side - big.height()) / 2;
    p.drawImage(x0, y0, big);
    const auto& boxes = panel == 0 ? v.trueBoxes : v.predictedBoxes;
    for (std::size_t i = 0; i < boxes.size(); ++i) {
      const auto& b = boxes[i];
      const float score = panel == 1 && i < v.predictedScores.size() ? v.predictedScores[i] : 1.f;
      if (panel == 1 && score < threshold) continue;
      const QRectF r(x0 + b.x0 * scale, y0 + b.y0 * scale, (b.x1 - b.x0) * scale,
                     (b.y1 - b.y0) * scale);
      QPen pen(boxColor(b.cls, colors), 2);
      if (panel == 0 && (b.crowd || b.difficult)) pen.setStyle(Qt::DashLine);
      p.setPen(pen);
      p.setBrush(Qt::NoBrush);
      p.drawRect(r);
      if (panel == 1)
        p.drawText(r.topLeft() + QPointF(2, font.pixelSize()), QString::number(score, 'f', 2));
    }
  }
  return pixmap;
}

QDialog* DetectionView::sampleDialog(const QString&, const RegistriesPtr&,
                                     const eval::SampleOutcome& s, const eval::Evaluation& e) {
  const auto errors = detectionErrors(s.view, float(threshold()));
  const auto names = [&](const std::vector<target::Box>& boxes, bool scored) {
    QStringList out;
    for (std::size_t i = 0; i < boxes.size(); ++i) {
      if (scored &&
          (i >= s.view.predictedScores.size() || s.view.predictedScores[i] < float(threshold())))
        continue;
      const auto c = std::size_t(std::max<std::int64_t>(boxes[i].cls, 0));
      QString name = c < e.classes.size() ? QString::fromStdString(e.classes[c])
                                          : QString::number(boxes[i].cls);
      if (scored) name += QStringLiteral(" %1").arg(s.view.predictedScores[i], 0, 'f', 2);
      out << name.toHtmlEscaped();
    }
    return out.isEmpty() ? tr("none") : out.join(QStringLiteral(", "));
  };
  return pictureDialog(
      s.position, tile(s, e.colors, 240, float(threshold())),
      tr("<b>#%1</b> from score %2: %3 found, %4 missed, %5 false, %6 wrong class, %7 poor "
         "box<br>true: %8<br>detected: %9")
          .arg(s.position)
          .arg(threshold(), 0, 'f', 2)
          .arg(errors.found)
          .arg(errors.missed)
          .arg(errors.falses)
          .arg(errors.wrongClass)
          .arg(errors.poorBox)
          .arg(names(s.view.trueBoxes, false), names(s.view.predictedBoxes, true)));
}

void DetectionView::fillGallery() {
  m_gallery->clear();
  const eval::Evaluation* evaluated = evaluation();
  if (!evaluated) return;
  const float t = float(threshold());
  struct Entry {
    const eval::SampleOutcome* sample;
    task::DetectionErrors errors;
  };
  std::vector<Entry> entries;
  for (const auto& s : evaluated->samples)
    if (!s.picture.empty()) entries.push_back({&s, detectionErrors(s.view, t)});
  const int order = m_order->currentIndex();
  const auto key = [order](const task::DetectionErrors& e) {
    switch (order) {
      case 1:
        return e.missed;
      case 2:
        return e.falses;
      case 3:
        return e.wrongClass;
      case 4:
        return e.poorBox;
      case 5:
        return -e.total();
      default:
        return e.total();
    }
  };
  std::stable_sort(entries.begin(), entries.end(), [&key](const Entry& a, const Entry& b) {
    const int ka = key(a.errors), kb = key(b.errors);
    return ka != kb ? ka > kb : a.errors.total() > b.errors.total();
  });
  const std::size_t shown = std::min<std::size_t>(entries.size(), eval::kMaskSamplesKept);
  for (std::size_t i = 0; i < shown; ++i) {
    const auto& s = entries[i].sample;
    const auto& e = entries[i].errors;
    QStringList parts;
    if (e.missed) parts << tr("%1 missed").arg(e.missed);
    if (e.falses) parts << tr("%1 false").arg(e.falses);
    if (e.wrongClass) parts << tr("%1 wrong class").arg(e.wrongClass);
    if (e.poorBox) parts << tr("%1 poor box").arg(e.poorBox);
    auto* item = new QListWidgetItem(
        QIcon(tile(*s, evaluated->colors, kBoxTile, t)),
        tr("#%1 %2").arg(s->position).arg(parts.isEmpty() ? tr("all found") : parts.join(", ")),
        m_gallery);
    item->setData(Qt::UserRole, qlonglong(s->position));
    item->setData(Qt::UserRole + 1, e.total());
  }
}

}  // namespace netsmith::ui
