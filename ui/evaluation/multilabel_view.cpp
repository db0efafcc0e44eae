#include "evaluation/multilabel_view.h"

#include <QLabel>
#include <QListWidget>
#include <QSplitter>

#include <algorithm>
#include <cmath>

#include "eval/evaluation.h"
#include "evaluation/sample_dialog.h"
#include "util/image_convert.h"

namespace netsmith::ui {

namespace {

constexpr int kLabelThumb = 96;

QString labelFigure(double v) {
  return std::isfinite(v) ? QString::number(v, 'f', 4) : QStringLiteral("-");
}

}  // namespace

MultiLabelView::MultiLabelView(QWidget* parent)
    : ThresholdCurveView(
          {QStringLiteral("labelTable"),
           {tr("Label"), tr("AP"), tr("F1"), tr("Threshold"), tr("Positives")},
           tr("Average precision, and F1 at the threshold the run used (tuned on validation). "
              "Select a label to see its precision-recall curve."),
           QStringLiteral("prCurve"),
           tr("recall"),
           QStringLiteral("thresholdSlider"),
           tr("The threshold: a label is predicted when its probability reaches it"),
           QStringLiteral("thresholdCounts")},
          0.5, parent),
      m_gallery(new QListWidget(this)) {
  setObjectName(QStringLiteral("multilabelView"));
  setUpGallery(m_gallery, QStringLiteral("multilabelGallery"), QSize(kLabelThumb, kLabelThumb),
               QSize(kLabelThumb + 84, kLabelThumb + 76));

  auto* top = figuresSplit(Qt::Horizontal, tr("Threshold"));
  top->setStretchFactor(0, 1);
  top->setStretchFactor(1, 1);
  layOutSplit(Qt::Vertical, top,
              galleryPanel(tr("<b>Samples, highest loss first</b> (click one to see each "
                              "label's Grad-CAM map)"),
                           m_gallery),
              3, 2);
}

void MultiLabelView::clearResult() {
  ThresholdCurveView::clearResult();
  m_used.clear();
  m_counts = {};
  m_gallery->clear();
}

void MultiLabelView::showResult(const eval::Evaluation& e) {
  clearResult();
  const auto& per = e.metrics.perClass;
  const std::size_t labels = e.classes.size();
  m_used.assign(labels, 0.5);
  std::vector<QStringList> rows;
  for (std::size_t k = 0; k < labels; ++k) {
    const double used = perClassFigure(per, "threshold", k);
    if (std::isfinite(used)) m_used[k] = used;
    std::int64_t positives = 0;
    for (const auto& s : e.samples)
      positives += k < s.view.truth.size() && s.view.truth[k] > 0.5f;
    rows.push_back({QString::fromStdString(e.classes[k]), labelFigure(perClassFigure(per, "ap", k)),
                    labelFigure(perClassFigure(per, "f1", k)), QString::number(m_used[k], 'f', 3),
                    QString::number(positives)});
  }
  showRows(e, rows);
  fillGallery();
}

std::optional<double> MultiLabelView::rowThreshold(std::size_t label) const {
  return m_used[label];
}

QDialog* MultiLabelView::sampleDialog(const QString& checkpoint, const RegistriesPtr& registries,
                                      const eval::SampleOutcome& sample,
                                      const eval::Evaluation& evaluation) {
  return new SampleDialog(checkpoint, registries, sample, evaluation.classes, this,
                          /*perLabel=*/true);
}

ThresholdCurveView::RowScores MultiLabelView::rowScores(std::size_t k) const {
  RowScores out;
  for (const auto& s : evaluation()->samples)
    if (k < s.view.output.size() && k < s.view.truth.size()) {
      out.scored.emplace_back(s.view.output[k], s.view.truth[k] > 0.5f);
      out.positives += s.view.truth[k] > 0.5f;
    }
  return out;
}

void MultiLabelView::showCounts() {
  const float t = float(threshold());
  Counts c;
  for (const auto& [score, positive] : scores().scored) {
    const bool predicted = score >= t;
    if (predicted && positive) ++c.tp;
    if (predicted && !positive) ++c.fp;
    if (!predicted && positive) ++c.fn;
    if (!predicted && !positive) ++c.tn;
  }
  m_counts = c;
  const double precision = c.tp + c.fp ? double(c.tp) / double(c.tp + c.fp) : 0;
  const double recall = c.tp + c.fn ? double(c.tp) / double(c.tp + c.fn) : 0;
  const double f1 = precision + recall > 0 ? 2 * precision * recall / (precision + recall) : 0;
  countsLabel()->setText(
      tr("%1 at threshold %2: precision %3, recall %4, F1 %5 (TP %6, FP %7, FN %8)%9")
          .arg(rowName().toHtmlEscaped())
          .arg(threshold(), 0, 'f', 3)
          .arg(precision, 0, 'f', 4)
          .arg(recall, 0, 'f', 4)
          .arg(f1, 0, 'f', 4)
          .arg(c.tp)
          .arg(c.fp)
          .arg(c.fn)
          .arg(threshold() == m_used[std::size_t(currentRow())] ? tr(" — the run's threshold")
                                                                : QString()));
  markPrPoint(curve(), recall, precision, c.tp + c.fp > 0);
}

void MultiLabelView::fillGallery() {
  m_gallery->clear();
  const eval::Evaluation& evaluated = *evaluation();
  std::vector<const eval::SampleOutcome*> order;
  for (const auto& s : evaluated.samples)
    order.push_back(&s);
  std::stable_sort(order.begin(), order.end(),
                   [](const auto* a, const auto* b) { return a->loss > b->loss; });
  const auto names = [&evaluated](const std::vector<float>& values, const auto& keep) {
    QStringList out;
    for (std::size_t k = 0; k < values.size() && k < evaluated.classes.size(); ++k)
      if (keep(k, values[k])) out << QString::fromStdString(evaluated.classes[k]);
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
