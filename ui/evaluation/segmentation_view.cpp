#include "evaluation/segmentation_view.h"

#include <qcustomplot.h>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QPainter>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "data/preview_grid.h"
#include "eval/evaluation.h"
#include "util/chart_fit.h"
#include "util/image_convert.h"
#include "util/theme_colors.h"

namespace netsmith::ui {

namespace {

constexpr int kTileSide = 96;  // each of a tile's three pictures

QString classPercent(double v) {
  return std::isfinite(v) ? QString::number(100.0 * v, 'f', 2) + QLatin1Char('%')
                          : QStringLiteral("-");
}

}  // namespace

SegmentationView::SegmentationView(QWidget* parent)
    : TaskView(parent),
      m_table(new QTableWidget(0, 4, this)),
      m_bars(new QCustomPlot(this)),
      m_order(new QComboBox(this)),
      m_gallery(new QListWidget(this)) {
  setObjectName(QStringLiteral("segmentationView"));
  setUpFigureTable(m_table, QStringLiteral("classIouTable"),
                   {tr("Class"), tr("IoU"), tr("Dice"), tr("Pixel share")});
  m_table->setToolTip(
      tr("From the split's pixel confusion matrix, ignored pixels left out; \"-\": the class "
         "is in neither the truth nor the prediction"));
  m_bars->setObjectName(QStringLiteral("iouBars"));
  m_bars->setMinimumHeight(180);
  emptyChartText(m_bars, tr("Evaluate a checkpoint to see each class's IoU"));
  m_bars->yAxis->setLabel(tr("IoU"));
  m_bars->axisRect()->setMinimumMargins(QMargins(0, 0, 40, 0));
  followTheme(m_bars);
  fitTicksToSize(m_bars);
  m_order->setObjectName(QStringLiteral("segmentationOrder"));
  m_order->addItems({tr("Lowest IoU first"), tr("Highest IoU first")});
  connect(m_order, qOverload<int>(&QComboBox::currentIndexChanged), this,
          &SegmentationView::fillGallery);
  setUpGallery(m_gallery, QStringLiteral("segmentationGallery"),
               QSize(3 * kTileSide + 8, kTileSide), QSize(3 * kTileSide + 24, kTileSide + 40));
  m_gallery->setToolTip(tr("Each sample: the image, its true mask, the predicted mask"));

  auto* figures = new QSplitter(Qt::Vertical, this);
  figures->addWidget(m_table);
  figures->addWidget(m_bars);
  figures->setCollapsible(1, false);  // a dragged splitter never flattens the chart to a strip
  layOutSplit(Qt::Horizontal, figures,
              galleryPanel(tr("<b>Image, true mask, predicted mask</b>"), m_gallery, m_order), 2,
              3);
}

void SegmentationView::clearResult() {
  m_evaluation = nullptr;
  m_table->setRowCount(0);
  m_bars->clearPlottables();
  m_bars->replot();
  m_gallery->clear();
}

void SegmentationView::showResult(const eval::Evaluation& e) {
  clearResult();
  m_evaluation = &e;
  const auto& per = e.metrics.perClass;
  const std::size_t classes = e.classes.size();
  m_table->setRowCount(int(classes));
  QVector<double> ticks, iou;
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  for (std::size_t c = 0; c < classes; ++c) {
    const QString name = QString::fromStdString(e.classes[c]);
    const QStringList cells = {name, classPercent(perClassFigure(per, "iou", c)),
                               classPercent(perClassFigure(per, "dice", c)),
                               classPercent(perClassFigure(per, "pixel_share", c))};
    setFigureRow(m_table, int(c), cells);
    ticks << double(c);
    const double v = perClassFigure(per, "iou", c);
    iou << (std::isfinite(v) ? v : 0.0);
    ticker->addTick(double(c), name);
  }
  auto* bars = new QCPBars(m_bars->xAxis, m_bars->yAxis);
  bars->setName(tr("IoU"));
  bars->setBrush(QColor(44, 160, 44));
  bars->setPen(Qt::NoPen);
  bars->setWidth(0.6);
  bars->setData(ticks, iou, true);
  m_bars->xAxis->setTicker(ticker);
  m_bars->xAxis->setTickLabelRotation(classes > 6 ? 40 : 0);
  m_bars->xAxis->setRange(-0.6, double(classes) - 0.4);
  m_bars->yAxis->setRange(0, 1.05);
  m_bars->replot();
  fillGallery();
}

QPixmap SegmentationView::tile(const eval::SampleOutcome& s, const std::vector<std::string>& colors,
                               int side) {
  const auto& v = s.view;
  cv::Mat image;
  s.picture.convertTo(image, CV_32F, 1.0 / 255.0);
  const auto overlay = [&](const std::vector<std::uint8_t>& mask) {
    if (int(mask.size()) != v.height * v.width || v.height != image.rows || v.width != image.cols)
      return QImage();
    const cv::Mat m(v.height, v.width, CV_8UC1, const_cast<std::uint8_t*>(mask.data()));
    return toQImage(data::overlayMask(image, m, colors));
  };
  const QImage pictures[] = {toQImage(s.picture), overlay(v.trueMask), overlay(v.predictedMask)};
  QPixmap pixmap(3 * side + 8, side);
  pixmap.fill(Qt::transparent);
  QPainter p(&pixmap);
  for (int i = 0; i < 3; ++i) {
    if (pictures[i].isNull()) continue;
    // Pixels kept sharp: a mask's edges are what the user looks at.
    const QImage big = pictures[i].scaled(side, side, Qt::KeepAspectRatio, Qt::FastTransformation);
    p.drawImage(i * (side + 4) + (side - big.width()) / 2, (side - big.height()) / 2, big);
  }
  return pixmap;
}

QDialog* SegmentationView::sampleDialog(const QString&, const RegistriesPtr&,
                                        const eval::SampleOutcome& s, const eval::Evaluation& e) {
  const auto& v = s.view;
  const auto caption = [&](const std::vector<std::uint8_t>& mask) {
    if (int(mask.size()) != v.height * v.width) return QString();
    const cv::Mat m(v.height, v.width, CV_8UC1, const_cast<std::uint8_t*>(mask.data()));
    return QString::fromStdString(data::maskCaption(m, e.classes)).toHtmlEscaped();
  };
  return pictureDialog(
      s.position, tile(s, e.colors, 240),
      tr("<b>#%1</b>: IoU %2<br>image, true mask (%3), predicted mask (%4)")
          .arg(s.position)
          .arg(std::isfinite(s.loss) ? QString::number(s.loss, 'f', 4) : tr("none (all ignored)"))
          .arg(caption(v.trueMask), caption(v.predictedMask)));
}

void SegmentationView::fillGallery() {
  m_gallery->clear();
  if (!m_evaluation) return;
  std::vector<const eval::SampleOutcome*> order;
  for (const auto& s : m_evaluation->samples)
    order.push_back(&s);
  const bool lowestFirst = m_order->currentIndex() == 0;
  // A sample whose pixels are all ignored (no IoU) comes last either way.
  std::stable_sort(order.begin(), order.end(), [lowestFirst](const auto* a, const auto* b) {
    const bool aNone = !std::isfinite(a->loss), bNone = !std::isfinite(b->loss);
    if (aNone || bNone) return !aNone && bNone;
    return lowestFirst ? a->loss < b->loss : a->loss > b->loss;
  });
  // The evaluation keeps the pictures of this many from either end.
  const std::size_t shown = std::min<std::size_t>(order.size(), eval::kMaskSamplesKept);
  for (std::size_t i = 0; i < shown; ++i) {
    const auto& s = *order[i];
    auto* item = new QListWidgetItem(QIcon(tile(s, m_evaluation->colors, kTileSide)),
                                     std::isfinite(s.loss)
                                         ? tr("#%1 IoU %2").arg(s.position).arg(s.loss, 0, 'f', 3)
                                         : tr("#%1 (all pixels ignored)").arg(s.position),
                                     m_gallery);
    item->setData(Qt::UserRole, qlonglong(s.position));
  }
}

}  // namespace netsmith::ui
