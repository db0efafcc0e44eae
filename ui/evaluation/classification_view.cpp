#include "evaluation/classification_view.h"

#include <qcustomplot.h>
#include <QComboBox>
#include <QGridLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QPainter>
#include <QScrollBar>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "eval/calibration.h"
#include "evaluation/calibration_panel.h"
#include "evaluation/embedding_panel.h"
#include "evaluation/sample_dialog.h"
#include "util/chart_fit.h"
#include "util/image_convert.h"
#include "util/theme_colors.h"

namespace netsmith::ui {

namespace {

QString pct(double v) {
  return std::isfinite(v) ? QString::number(100.0 * v, 'f', 2) + QLatin1Char('%')
                          : QStringLiteral("-");
}

constexpr int kThumb = 96;        // a sample's picture, in pixels
constexpr int kThumbWidth = 144;  // picture and its top-3 bars
constexpr int kBarHeight = 14;

/// A sample's thumbnail: its picture at 96 px (pixels kept sharp), and under it its top-3
/// classes as bars as long as their probabilities, named.
QPixmap sampleThumbnail(const QImage& picture, const QList<QPair<QString, double>>& top,
                        const QPalette& palette) {
  QPixmap pixmap(kThumbWidth, kThumb + 3 * kBarHeight + 4);
  pixmap.fill(Qt::transparent);
  QPainter p(&pixmap);
  const QImage big =
      picture.scaled(kThumb, kThumb, Qt::KeepAspectRatio,
                     picture.width() < kThumb ? Qt::FastTransformation : Qt::SmoothTransformation);
  p.drawImage((kThumbWidth - big.width()) / 2, 0, big);
  QFont small = p.font();
  small.setPointSizeF(small.pointSizeF() * 0.85);
  p.setFont(small);
  for (int i = 0; i < int(top.size()) && i < 3; ++i) {
    const QRectF row(0, kThumb + 4 + i * kBarHeight, kThumbWidth, kBarHeight - 2);
    QColor bar = i == 0 ? palette.color(QPalette::Highlight) : palette.color(QPalette::Mid);
    bar.setAlpha(150);
    p.fillRect(QRectF(row.topLeft(),
                      QSizeF(row.width() * std::clamp(top[i].second, 0.0, 1.0), row.height())),
               bar);
    p.setPen(palette.color(QPalette::Text));
    p.drawText(row.adjusted(3, 0, -2, 0), Qt::AlignVCenter | Qt::AlignLeft,
               QStringLiteral("%1 %2%").arg(top[i].first).arg(100.0 * top[i].second, 0, 'f', 0));
  }
  return pixmap;
}

/// A caption turned a quarter anticlockwise: the confusion matrix's "true class" axis title.
class VerticalLabel : public QWidget {
 public:
  VerticalLabel(const QString& text, QWidget* parent) : QWidget(parent), m_text(text) {
    setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Preferred);
  }
  QSize sizeHint() const override {
    const QFontMetrics fm(font());
    return {fm.height() + 4, fm.horizontalAdvance(m_text) + 8};
  }
  QSize minimumSizeHint() const override { return {fontMetrics().height() + 4, 0}; }

 protected:
  void paintEvent(QPaintEvent*) override {
    QPainter p(this);
    QFont f = font();
    f.setBold(true);
    p.setFont(f);
    p.translate(0, height());
    p.rotate(-90);
    p.drawText(QRect(0, 0, height(), width()), Qt::AlignCenter, m_text);
  }

 private:
  QString m_text;
};

}  // namespace

ClassificationView::ClassificationView(QWidget* parent)
    : TaskView(parent),
      m_confusion(new QTableWidget(this)),
      m_perClass(new QTableWidget(0, 6, this)),
      m_bars(new QCustomPlot(this)),
      m_prCurves(new QCustomPlot(this)),
      m_cellTitle(new QLabel(this)),
      m_calibration(new CalibrationPanel(this)),
      m_embedding(new EmbeddingPanel(this)),
      m_cell(new QListWidget(this)),
      m_misclassified(new QListWidget(this)),
      m_order(new QComboBox(this)) {
  setObjectName(QStringLiteral("classificationView"));
  m_confusion->setObjectName(QStringLiteral("confusionMatrix"));
  m_confusion->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_confusion->setSelectionMode(QAbstractItemView::SingleSelection);
  m_confusion->setToolTip(
      tr("Rows: true class; columns: predicted. Click a cell to see its "
         "images."));
  // The matrix fits the page's width: columns share it, long class names are elided (the
  // header's tooltip has them whole).
  m_confusion->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  m_confusion->horizontalHeader()->setMinimumSectionSize(36);
  // Rows share the height too, down to two lines of text: on a large screen the matrix fills
  // its area with its axis titles beside it instead of leaving most of it empty.
  m_confusion->verticalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  m_confusion->verticalHeader()->setMinimumSectionSize(
      2 * m_confusion->fontMetrics().lineSpacing() + 6);
  m_confusion->horizontalHeader()->setTextElideMode(Qt::ElideRight);
  // Past what the space holds (many classes, a small window) the columns keep their least
  // width and scroll, with a line under the matrix saying so.
  m_confusion->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
  connect(m_confusion->horizontalHeader(), &QHeaderView::sectionResized, this,
          &ClassificationView::elideClassNames);
  m_perClass->setObjectName(QStringLiteral("perClassTable"));
  m_perClass->setHorizontalHeaderLabels(
      {tr("Class"), tr("Precision"), tr("Recall"), tr("F1"), tr("AP"), tr("Support")});
  m_perClass->horizontalHeaderItem(4)->setToolTip(
      tr("Average precision: the area under the class's precision-recall curve (PR curves tab)"));
  m_perClass->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_perClass->verticalHeader()->hide();
  m_perClass->horizontalHeader()->setStretchLastSection(true);
  m_bars->setObjectName(QStringLiteral("perClassChart"));
  m_bars->setMinimumHeight(180);
  emptyChartText(m_bars, tr("Evaluate a checkpoint to see each class's precision and recall"));
  // Room on the right for the last class's slanted name.
  m_bars->axisRect()->setMinimumMargins(QMargins(0, 0, 40, 0));
  legendBelow(m_bars);
  followTheme(m_bars);
  fitTicksToSize(m_bars);
  for (auto* list : {m_cell, m_misclassified}) {
    list->setViewMode(QListView::IconMode);
    list->setIconSize(QSize(kThumbWidth, kThumb + 3 * kBarHeight + 4));
    list->setResizeMode(QListView::Adjust);
    list->setGridSize(QSize(kThumbWidth + 16, kThumb + 3 * kBarHeight + 56));
    list->setWordWrap(true);
    list->setMovement(QListView::Static);
  }
  for (auto* list : {m_cell, m_misclassified})
    connect(list, &QListWidget::itemClicked, this, [this](QListWidgetItem* item) {
      Q_EMIT sampleRequested(item->data(Qt::UserRole).toLongLong());
    });
  m_cell->setObjectName(QStringLiteral("cellSamples"));
  m_misclassified->setObjectName(QStringLiteral("misclassifiedGallery"));

  connect(m_confusion, &QTableWidget::cellClicked, this, &ClassificationView::showCell);
  // Beside the matrix: per-class figures, the clicked cell's images, the misclassified ones.
  auto* tabs = m_details = new QTabWidget(this);
  tabs->setObjectName(QStringLiteral("evaluationDetails"));
  auto* cellTab = new QWidget(tabs);
  auto* cl = new QVBoxLayout(cellTab);
  cl->addWidget(m_cellTitle);
  cl->addWidget(m_cell, 1);
  tabs->addTab(cellTab, tr("Cell"));
  auto* wrongTab = new QWidget(tabs);
  auto* wl = new QVBoxLayout(wrongTab);
  m_order->setObjectName(QStringLiteral("misclassifiedOrder"));
  m_order->addItems({tr("Highest loss first"), tr("Lowest loss first")});
  connect(m_order, qOverload<int>(&QComboBox::currentIndexChanged), this,
          &ClassificationView::fillMisclassified);
  wl->addWidget(m_order, 0, Qt::AlignLeft);
  wl->addWidget(m_misclassified, 1);
  tabs->addTab(wrongTab, tr("Misclassified"));
  m_prCurves->setObjectName(QStringLiteral("prCurves"));
  m_prCurves->xAxis->setLabel(tr("recall"));
  m_prCurves->yAxis->setLabel(tr("precision"));
  m_prCurves->xAxis->setRange(0, 1);
  m_prCurves->yAxis->setRange(0, 1.02);
  m_prCurves->setMinimumHeight(200);
  emptyChartText(m_prCurves,
                 tr("Evaluate a checkpoint to see each class's precision-recall curve"));
  legendBelow(m_prCurves, 3);
  followTheme(m_prCurves);
  fitTicksToSize(m_prCurves);
  legendTooltips(m_prCurves);
  tabs->addTab(m_prCurves, tr("PR curves"));
  tabs->addTab(m_calibration, tr("Calibration"));
  connect(m_calibration, &CalibrationPanel::fitRequested, this, &TaskView::temperatureFitRequested);
  tabs->addTab(m_embedding, tr("Embedding"));
  connect(m_embedding, &EmbeddingPanel::sampleRequested, this, &TaskView::sampleRequested);
  auto* perClassBox = new QWidget(tabs);
  auto* pl = new QVBoxLayout(perClassBox);
  pl->addWidget(m_perClass, 1);
  pl->addWidget(m_bars, 1);
  tabs->insertTab(0, perClassBox, tr("Per class"));
  tabs->setCurrentIndex(0);
  // The matrix with its axis titles.
  auto* matrixBox = new QWidget(this);
  auto* mg = new QGridLayout(matrixBox);
  mg->setContentsMargins(0, 0, 0, 0);
  mg->setSpacing(2);
  auto* predicted = new QLabel(tr("<b>predicted class</b>"), matrixBox);
  predicted->setAlignment(Qt::AlignCenter);
  mg->addWidget(predicted, 0, 1);
  mg->addWidget(new VerticalLabel(tr("true class"), matrixBox), 1, 0);
  mg->addWidget(m_confusion, 1, 1);
  m_matrixHint = new QLabel(tr("Scroll sideways for the other predicted classes."), matrixBox);
  m_matrixHint->setObjectName(QStringLiteral("confusionScrollHint"));
  m_matrixHint->hide();
  mg->addWidget(m_matrixHint, 2, 1);
  connect(m_confusion->horizontalScrollBar(), &QScrollBar::rangeChanged, m_matrixHint,
          [this](int, int max) { m_matrixHint->setVisible(max > 0); });
  auto* split = new QSplitter(Qt::Horizontal, this);
  split->addWidget(matrixBox);
  split->addWidget(tabs);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 1);
  split->setCollapsible(0, false);  // a dragged splitter never hides the matrix
  m_matrixBox = matrixBox;
  m_split = split;
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(split);
}

void ClassificationView::clearResult() {
  m_result = nullptr;
  m_confusion->clear();
  m_confusion->setRowCount(0);
  m_confusion->setColumnCount(0);
  m_perClass->setRowCount(0);
  m_cell->clear();
  m_cellRow = m_cellColumn = -1;
  m_misclassified->clear();
  m_calibration->clear();
  m_embedding->setEvaluation(nullptr);  // its points index the result being replaced
  m_bars->clearPlottables();
  m_bars->replot();
  m_prCurves->clearPlottables();
  m_prCurves->replot();
}

QString ClassificationView::summaryLine(const eval::Evaluation& e, const QString& headline) const {
  const auto& m = e.metrics;
  return tr("<b>%1</b>; top-%2 accuracy %3, loss %4%5%6")
      .arg(headline.toHtmlEscaped())
      .arg(e.topK)
      .arg(pct(e.topKAccuracy))
      .arg(m.loss, 0, 'f', 4)
      .arg(e.tta.empty() ? QString()
                         : tr("; test-time augmentation (%1, %2 views): %3 points "
                              "over the picture alone (%4)")
                               .arg(QString::fromStdString(e.tta))
                               .arg(e.ttaViews)
                               .arg(100.0 * (m.accuracy - e.accuracyWithoutTta), 0, 'f', 2)
                               .arg(pct(e.accuracyWithoutTta)))
      .arg(e.cancelled ? tr(" (cancelled: partial)") : QString());
}

void ClassificationView::setBusy(bool busy) {
  m_calibration->setBusy(busy);
}

QString ClassificationView::className(std::int64_t c) const {
  return m_result && c >= 0 && c < std::int64_t(m_result->classes.size())
             ? QString::fromStdString(m_result->classes[std::size_t(c)])
             : QString::number(c);
}

void ClassificationView::showResult(const eval::Evaluation& e) {
  m_embedding->setEvaluation(nullptr);
  m_result = &e;
  QStringList names;
  for (int c = 0; c < int(e.metrics.confusion.size()); ++c)
    names << className(c);
  showMatrix(names);
  showPerClass(names);
  fillMisclassified();
  m_cell->clear();
  m_cellRow = m_cellColumn = -1;
  m_cellTitle->setText(tr("Click a cell of the matrix to see its images."));
  showCalibration();
  m_embedding->setEvaluation(&e);
}

void ClassificationView::showMatrix(const QStringList& names) {
  const auto& m = m_result->metrics;
  const int k = int(m.confusion.size());
  m_confusion->clear();
  m_confusion->setRowCount(k);
  m_confusion->setColumnCount(k);
  m_confusion->setVerticalHeaderLabels(names);
  for (int c = 0; c < k; ++c) {
    auto* header = new QTableWidgetItem(names[c]);
    header->setData(Qt::UserRole, names[c]);
    header->setToolTip(tr("predicted %1").arg(names[c]));
    m_confusion->setHorizontalHeaderItem(c, header);
  }
  elideClassNames();
  fitMatrix(k);
  for (int r = 0; r < k; ++r) {
    double rowTotal = 0;
    for (auto v : m.confusion[std::size_t(r)])
      rowTotal += double(v);
    for (int c = 0; c < k; ++c) {
      const auto count = m.confusion[std::size_t(r)][std::size_t(c)];
      const double share = rowTotal > 0 ? double(count) / rowTotal : 0;
      auto* item =
          new QTableWidgetItem(QStringLiteral("%1\n%2%").arg(count).arg(100.0 * share, 0, 'f', 1));
      item->setTextAlignment(Qt::AlignCenter);
      item->setData(Qt::UserRole, qlonglong(count));
      // Heat: the diagonal green, the rest red, by row share.
      const QColor base = r == c ? QColor(44, 160, 44) : QColor(214, 39, 40);
      QColor bg = base;
      bg.setAlphaF(float(std::min(1.0, 0.08 + share * 0.9)));
      item->setBackground(count ? bg : QColor(Qt::transparent));
      item->setToolTip(tr("%1 images of %2 predicted as %3").arg(count).arg(names[r], names[c]));
      m_confusion->setItem(r, c, item);
    }
  }
}

void ClassificationView::showPerClass(const QStringList& names) {
  const auto& e = *m_result;
  m_perClass->setRowCount(int(e.perClass.size()));
  QVector<double> ticks, precision, recall, f1;
  for (int c = 0; c < int(e.perClass.size()); ++c) {
    const auto& s = e.perClass[std::size_t(c)];
    const QStringList cells = {names.value(c), pct(s.precision),        pct(s.recall),
                               pct(s.f1),      pct(s.averagePrecision), QString::number(s.support)};
    for (int col = 0; col < cells.size(); ++col) {
      auto* item = new QTableWidgetItem(cells[col]);
      if (col) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
      m_perClass->setItem(c, col, item);
    }
    ticks << c;
    precision << (std::isfinite(s.precision) ? s.precision : 0);
    recall << (std::isfinite(s.recall) ? s.recall : 0);
    f1 << (std::isfinite(s.f1) ? s.f1 : 0);
  }
  m_bars->clearPlottables();
  auto* group = new QCPBarsGroup(m_bars);
  const QList<QPair<QString, QColor>> series = {{tr("precision"), QColor(31, 119, 180)},
                                                {tr("recall"), QColor(255, 127, 14)},
                                                {tr("F1"), QColor(44, 160, 44)}};
  const QVector<double>* values[] = {&precision, &recall, &f1};
  for (int i = 0; i < 3; ++i) {
    auto* bars = new QCPBars(m_bars->xAxis, m_bars->yAxis);
    bars->setName(series[i].first);
    bars->setBrush(series[i].second);
    bars->setPen(Qt::NoPen);
    bars->setWidth(0.25);
    bars->setBarsGroup(group);
    bars->setData(ticks, *values[i]);
  }
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  for (int c = 0; c < names.size(); ++c)
    ticker->addTick(c, names[c]);
  m_bars->xAxis->setTicker(ticker);
  m_bars->xAxis->setTickLabelRotation(names.size() > 6 ? 40 : 0);
  m_bars->xAxis->setRange(-0.6, names.size() - 0.4);
  m_bars->yAxis->setRange(0, 1.05);
  m_bars->legend->setVisible(true);
  m_bars->replot();

  // Each class's precision-recall curve, named with its average precision.
  m_prCurves->clearPlottables();
  for (std::size_t k = 0; k < e.prCurves.size(); ++k) {
    const auto& curve = e.prCurves[k];
    auto* line = new QCPCurve(m_prCurves->xAxis, m_prCurves->yAxis);
    line->setName(tr("%1 (AP %2)").arg(names.value(int(k))).arg(curve.averagePrecision, 0, 'f', 3));
    line->setPen(QPen(seriesColor(int(k)), 1.5));
    line->setData(QVector<double>(curve.recall.begin(), curve.recall.end()),
                  QVector<double>(curve.precision.begin(), curve.precision.end()));
  }
  m_prCurves->legend->setVisible(!e.prCurves.empty());
  m_prCurves->replot();
}

void ClassificationView::showCalibration() {
  const auto& e = *m_result;
  // A fit is shown against the same checkpoint and split at temperature 1.
  const QString key = QString::fromStdString(e.checkpoint + "\n" + e.split);
  if (!e.temperatureFitted && e.temperature == 1 && !e.cancelled) {
    m_uncalibrated = e.calibration;
    m_uncalibratedKey = key;
  }
  const bool before = e.temperatureFitted && m_uncalibrated && m_uncalibratedKey == key;
  m_calibration->showCalibration(
      e, before ? &*m_uncalibrated : nullptr,
      // The page records a whole fit beside the checkpoint, as eval --fit-temperature does.
      e.temperatureFitted && !e.cancelled
          ? QString::fromStdString(eval::calibrationFileFor(e.checkpoint))
          : QString());
}

QDialog* ClassificationView::sampleDialog(const QString& checkpoint,
                                          const RegistriesPtr& registries,
                                          const eval::SampleOutcome& sample,
                                          const eval::Evaluation& evaluation) {
  return new SampleDialog(checkpoint, registries, sample, evaluation.classes, this);
}

void ClassificationView::resizeEvent(QResizeEvent* event) {
  TaskView::resizeEvent(event);
  QTimer::singleShot(0, this, &ClassificationView::elideClassNames);  // after the sections stretch
}

void ClassificationView::fitMatrix(int classes) {
  // Each column wide enough for "1234" over "12.3%"; the matrix takes that much of the page
  // (up to half of it), the tabs beside it the rest.
  const QFontMetrics fm(m_confusion->font());
  const int column = std::max(36, fm.horizontalAdvance(QStringLiteral("100.0%")) + 8);
  // Never narrower: stretched columns below that cut their cells; past the room, they scroll.
  m_confusion->horizontalHeader()->setMinimumSectionSize(column);
  const int need = m_confusion->verticalHeader()->sizeHint().width() + classes * column +
                   2 * m_confusion->frameWidth() + 30;  // + the "true class" title
  // A view just made may not have its place's size yet: its parent's counts then.
  const int total =
      std::max({m_split->width(), width(), parentWidget() ? parentWidget()->width() : 0});
  const int matrix = std::min(need, std::max(total / 2, 360));
  m_matrixBox->setMinimumWidth(std::min(matrix, 420));
  m_split->setSizes({matrix, std::max(1, total - matrix)});
}

void ClassificationView::elideClassNames() {
  const QFontMetrics fm(m_confusion->horizontalHeader()->font());
  for (int c = 0; c < m_confusion->columnCount(); ++c) {
    auto* header = m_confusion->horizontalHeaderItem(c);
    if (!header) continue;
    const QString whole = header->data(Qt::UserRole).toString();
    const QString shown =
        fm.elidedText(whole, Qt::ElideRight, m_confusion->horizontalHeader()->sectionSize(c) - 8);
    if (header->text() != shown) header->setText(shown);
  }
}

void ClassificationView::fillMisclassified() {
  std::vector<const eval::SampleOutcome*> wrong;
  for (const auto& s : m_result->samples)
    if (s.label != s.predicted) wrong.push_back(&s);
  const bool highestFirst = m_order->currentIndex() == 0;
  std::stable_sort(wrong.begin(), wrong.end(), [highestFirst](const auto* a, const auto* b) {
    return highestFirst ? a->loss > b->loss : a->loss < b->loss;
  });
  fillGallery(m_misclassified, wrong);
}

void ClassificationView::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() != QEvent::PaletteChange || !m_result) return;
  fillMisclassified();
  if (m_cellRow >= 0) fillGallery(m_cell, m_result->cell(m_cellRow, m_cellColumn));
}

void ClassificationView::showCell(int row, int column) {
  m_cellRow = row;
  m_cellColumn = column;
  const auto samples = m_result->cell(row, column);
  m_cellTitle->setText(
      tr("%n image(s) of %1 predicted as %2, highest loss first", nullptr, int(samples.size()))
          .arg(className(row), className(column)));
  fillGallery(m_cell, samples);
  m_details->setCurrentIndex(1);  // the Cell tab
}

void ClassificationView::fillGallery(QListWidget* list,
                                     const std::vector<const eval::SampleOutcome*>& samples) {
  list->clear();
  const std::size_t shown = std::min<std::size_t>(samples.size(), 2000);
  for (std::size_t i = 0; i < shown; ++i) {
    const auto* s = samples[i];
    QStringList top;
    QList<QPair<QString, double>> bars;
    for (const auto& [c, p] : s->top) {
      top << QStringLiteral("%1 %2%").arg(className(c)).arg(100.0 * p, 0, 'f', 1);
      bars.append({className(c), p});
    }
    auto* item = new QListWidgetItem(QIcon(sampleThumbnail(toQImage(s->picture), bars, palette())),
                                     tr("#%1 %2 \u2192 %3\nloss %4")
                                         .arg(s->position)
                                         .arg(className(s->label), className(s->predicted))
                                         .arg(s->loss, 0, 'f', 2),
                                     list);
    item->setToolTip(tr("sample %1\ntrue: %2\npredicted: %3\nloss: %4\ntop-3: %5")
                         .arg(s->position)
                         .arg(className(s->label), className(s->predicted))
                         .arg(s->loss, 0, 'f', 4)
                         .arg(top.join(QStringLiteral(", "))));
    item->setData(Qt::UserRole, qlonglong(s->position));
    item->setStatusTip(tr("Click: open it large with its Grad-CAM map"));
  }
}

}  // namespace netsmith::ui
