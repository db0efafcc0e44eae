#include "evaluation/multilabel_view.h"

#include <qcustomplot.h>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QSignalBlocker>
#include <QSlider>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "eval/evaluation.h"
#include "evaluation/sample_dialog.h"
#include "util/chart_fit.h"
#include "util/image_convert.h"
#include "util/theme_colors.h"

namespace netsmith::ui {

namespace {

constexpr int kLabelThumb = 96;

QString labelFigure(double v) {
  return std::isfinite(v) ? QString::number(v, 'f', 4) : QStringLiteral("-");
}

}  // namespace

MultiLabelView::MultiLabelView(QWidget* parent)
    : TaskView(parent),
      m_table(new QTableWidget(0, 5, this)),
      m_curve(new QCustomPlot(this)),
      m_slider(new QSlider(Qt::Horizontal, this)),
      m_countsLabel(new QLabel(this)),
      m_gallery(new QListWidget(this)) {
  setObjectName(QStringLiteral("multilabelView"));
  setUpFigureTable(m_table, QStringLiteral("labelTable"),
                   {tr("Label"), tr("AP"), tr("F1"), tr("Threshold"), tr("Positives")});
  m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_table->setSelectionMode(QAbstractItemView::SingleSelection);
  m_table->setToolTip(
      tr("Average precision, and F1 at the threshold the run used (tuned on validation). "
         "Select a label to see its precision-recall curve."));
  connect(m_table, &QTableWidget::currentCellChanged, this,
          [this](int row, int, int, int) { selectLabel(row); });
  setUpPrCurve(m_curve, QStringLiteral("prCurve"), tr("recall"));
  setUpThresholdSlider(m_slider, QStringLiteral("thresholdSlider"),
                       tr("The threshold: a label is predicted when its probability reaches it"));
  connect(m_slider, &QSlider::valueChanged, this, [this](int value) {
    m_threshold = double(value) / kThresholdSteps;
    updateCounts();
  });
  m_countsLabel->setObjectName(QStringLiteral("thresholdCounts"));
  m_countsLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
  setUpGallery(m_gallery, QStringLiteral("multilabelGallery"), QSize(kLabelThumb, kLabelThumb),
               QSize(kLabelThumb + 84, kLabelThumb + 76));

  auto* top = new QSplitter(Qt::Horizontal, this);
  top->addWidget(m_table);
  top->addWidget(curvePanel(m_curve, tr("Threshold"), m_slider, m_countsLabel));
  top->setStretchFactor(0, 1);
  top->setStretchFactor(1, 1);
  layOutSplit(Qt::Vertical, top,
              galleryPanel(tr("<b>Samples, highest loss first</b> (click one to see each "
                              "label's Grad-CAM map)"),
                           m_gallery),
              3, 2);
}

void MultiLabelView::clearResult() {
  m_evaluation = nullptr;
  m_label = -1;
  m_used.clear();
  m_counts = {};
  m_table->setRowCount(0);
  m_curve->clearGraphs();
  m_curve->replot();
  m_countsLabel->clear();
  m_gallery->clear();
}

void MultiLabelView::showResult(const eval::Evaluation& e) {
  clearResult();
  m_evaluation = &e;
  const auto& per = e.metrics.perClass;
  const std::size_t labels = e.classes.size();
  m_used.assign(labels, 0.5);
  m_table->setRowCount(int(labels));
  for (std::size_t k = 0; k < labels; ++k) {
    const double used = perClassFigure(per, "threshold", k);
    if (std::isfinite(used)) m_used[k] = used;
    std::int64_t positives = 0;
    for (const auto& s : e.samples)
      positives += k < s.view.truth.size() && s.view.truth[k] > 0.5f;
    const QStringList cells = {QString::fromStdString(e.classes[k]),
                               labelFigure(perClassFigure(per, "ap", k)),
                               labelFigure(perClassFigure(per, "f1", k)),
                               QString::number(m_used[k], 'f', 3), QString::number(positives)};
    setFigureRow(m_table, int(k), cells);
  }
  fillGallery();
  if (labels) m_table->setCurrentCell(0, 0);  // selectLabel(0) through currentCellChanged
}

void MultiLabelView::selectLabel(int label) {
  if (!m_evaluation || label < 0 || label >= int(m_used.size())) return;
  m_label = label;
  if (m_table->currentRow() != label) m_table->setCurrentCell(label, 0);
  drawCurve();
  // The run's own threshold, exactly (a tuned one is a score, not a slider step).
  setThreshold(m_used[std::size_t(label)]);
}

QDialog* MultiLabelView::sampleDialog(const QString& checkpoint, const RegistriesPtr& registries,
                                      const eval::SampleOutcome& sample,
                                      const eval::Evaluation& evaluation) {
  return new SampleDialog(checkpoint, registries, sample, evaluation.classes, this,
                          /*perLabel=*/true);
}

void MultiLabelView::setThreshold(double threshold) {
  m_threshold = std::clamp(threshold, 0.0, 1.0);
  {
    const QSignalBlocker block(m_slider);
    m_slider->setValue(int(std::lround(m_threshold * kThresholdSteps)));
  }
  updateCounts();
}

void MultiLabelView::drawCurve() {
  const auto k = std::size_t(m_label);
  std::vector<std::pair<float, bool>> scored;
  double positives = 0;
  for (const auto& s : m_evaluation->samples)
    if (k < s.view.output.size() && k < s.view.truth.size()) {
      scored.emplace_back(s.view.output[k], s.view.truth[k] > 0.5f);
      positives += s.view.truth[k] > 0.5f;
    }
  drawPrCurve(m_curve, std::move(scored), positives,
              QString::fromStdString(m_evaluation->classes[k]));
}

void MultiLabelView::updateCounts() {
  if (!m_evaluation || m_label < 0) return;
  const auto k = std::size_t(m_label);
  const float t = float(m_threshold);
  Counts c;
  for (const auto& s : m_evaluation->samples) {
    if (k >= s.view.output.size() || k >= s.view.truth.size()) continue;
    const bool predicted = s.view.output[k] >= t;
    const bool positive = s.view.truth[k] > 0.5f;
    if (predicted && positive) ++c.tp;
    if (predicted && !positive) ++c.fp;
    if (!predicted && positive) ++c.fn;
    if (!predicted && !positive) ++c.tn;
  }
  m_counts = c;
  const double precision = c.tp + c.fp ? double(c.tp) / double(c.tp + c.fp) : 0;
  const double recall = c.tp + c.fn ? double(c.tp) / double(c.tp + c.fn) : 0;
  const double f1 = precision + recall > 0 ? 2 * precision * recall / (precision + recall) : 0;
  m_countsLabel->setText(
      tr("%1 at threshold %2: precision %3, recall %4, F1 %5 (TP %6, FP %7, FN %8)%9")
          .arg(QString::fromStdString(m_evaluation->classes[k]).toHtmlEscaped())
          .arg(m_threshold, 0, 'f', 3)
          .arg(precision, 0, 'f', 4)
          .arg(recall, 0, 'f', 4)
          .arg(f1, 0, 'f', 4)
          .arg(c.tp)
          .arg(c.fp)
          .arg(c.fn)
          .arg(m_threshold == m_used[k] ? tr(" — the run's threshold") : QString()));
  markPrPoint(m_curve, recall, precision, c.tp + c.fp > 0);
}

void MultiLabelView::fillGallery() {
  m_gallery->clear();
  std::vector<const eval::SampleOutcome*> order;
  for (const auto& s : m_evaluation->samples)
    order.push_back(&s);
  std::stable_sort(order.begin(), order.end(),
                   [](const auto* a, const auto* b) { return a->loss > b->loss; });
  const auto names = [this](const std::vector<float>& values, const auto& keep) {
    QStringList out;
    for (std::size_t k = 0; k < values.size() && k < m_evaluation->classes.size(); ++k)
      if (keep(k, values[k])) out << QString::fromStdString(m_evaluation->classes[k]);
    return out.isEmpty() ? tr("(none)") : out.join(QStringLiteral(", "));
  };
  const std::size_t shown = std::min<std::size_t>(order.size(), 500);
  for (std::size_t i = 0; i < shown; ++i) {
    const auto& s = *order[i];
    const QString truth = names(s.view.truth, [](std::size_t, float v) { return v > 0.5f; });
    const QString predicted =
        names(s.view.output, [this](std::size_t k, float v) { return double(v) >= m_used[k]; });
    const QImage picture = toQImage(s.picture);
    auto* item = new QListWidgetItem(
        QIcon(QPixmap::fromImage(picture.scaled(
            kLabelThumb, kLabelThumb, Qt::KeepAspectRatio,
            picture.width() < kLabelThumb ? Qt::FastTransformation : Qt::SmoothTransformation))),
        tr("#%1 loss %2\ntrue: %3\npredicted: %4")
            .arg(s.position)
            .arg(s.loss, 0, 'f', 3)
            .arg(truth, predicted),
        m_gallery);
    item->setToolTip(tr("sample %1\ntrue: %2\npredicted: %3\nloss: %4")
                         .arg(s.position)
                         .arg(truth, predicted)
                         .arg(s.loss, 0, 'f', 4));
    item->setData(Qt::UserRole, qlonglong(s.position));
    item->setData(Qt::UserRole + 1, truth);
    item->setData(Qt::UserRole + 2, predicted);
  }
}

}  // namespace netsmith::ui
