#include "evaluation/embedding_panel.h"

#include <qcustomplot.h>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QMouseEvent>
#include <QProgressBar>
#include <QPushButton>
#include <QVBoxLayout>

#include <cmath>
#include <map>

#include "eval/embedding.h"
#include "eval/evaluation.h"
#include "util/background_job.h"
#include "util/chart_fit.h"
#include "util/image_convert.h"
#include "util/theme_colors.h"

namespace netsmith::ui {

namespace {

constexpr int kHoverPicture = 96;
constexpr int kSelectionListed = 300;  ///< thumbnails listed for a selection, at most
constexpr double kPickRadius = 10;     ///< pixels

QString className(const eval::Evaluation& e, std::int64_t k) {
  return k >= 0 && std::size_t(k) < e.classes.size()
             ? QString::fromStdString(e.classes[std::size_t(k)])
             : QString::number(k);
}

double confidenceOf(const eval::SampleOutcome& s) {
  return s.top.empty() ? 0.0 : s.top.front().second;
}

}  // namespace

EmbeddingPanel::EmbeddingPanel(QWidget* parent)
    : QWidget(parent),
      m_chart(new QCustomPlot(this)),
      m_layOut(new QPushButton(tr("Lay out (t-SNE)"), this)),
      m_stop(new QPushButton(tr("Stop"), this)),
      m_progress(new QProgressBar(this)),
      m_colouring(new QComboBox(this)),
      m_lasso(new QPushButton(tr("Lasso"), this)),
      m_status(new QLabel(this)),
      m_hoverPicture(new QLabel(this)),
      m_hoverText(new QLabel(this)),
      m_selectionText(new QLabel(this)),
      m_selectionList(new QListWidget(this)),
      m_job(new BackgroundJob(this)) {
  setObjectName(QStringLiteral("embeddingPanel"));
  m_chart->setObjectName(QStringLiteral("embeddingChart"));
  m_chart->setMinimumSize(240, 200);
  m_chart->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  m_chart->setMouseTracking(true);
  m_chart->installEventFilter(this);
  m_chart->xAxis->setTickLabels(false);
  m_chart->yAxis->setTickLabels(false);
  m_chart->setNoAntialiasingOnDrag(true);
  legendBelow(m_chart, 5);
  // As many columns as the longest class name leaves room for, every name whole; shown
  // whatever its height (the colours are the chart's key).
  fitTicksToSize(m_chart);
  setLegendMode(m_chart, LegendMode::Shown);
  followTheme(m_chart);
  legendTooltips(m_chart);
  m_chart->addLayer(QStringLiteral("lasso"));
  m_chart->layer(QStringLiteral("lasso"))->setMode(QCPLayer::lmBuffered);
  m_layOut->setObjectName(QStringLiteral("layOutEmbedding"));
  m_layOut->setToolTip(
      tr("Reduce the samples' penultimate-layer features to two dimensions: PCA to 50, then "
         "t-SNE (Barnes-Hut, perplexity 30, 1000 iterations). Samples the model sees alike "
         "land close together."));
  m_stop->setObjectName(QStringLiteral("stopEmbedding"));
  m_stop->setEnabled(false);
  m_progress->setMaximumWidth(160);
  m_progress->setFormat(tr("%p%"));
  m_colouring->setObjectName(QStringLiteral("embeddingColouring"));
  m_colouring->addItems(
      {tr("Colour by class"), tr("Colour by right / wrong"), tr("Colour by confidence")});
  m_lasso->setObjectName(QStringLiteral("embeddingLasso"));
  m_lasso->setCheckable(true);
  m_lasso->setShortcut(QKeySequence(Qt::Key_L));
  m_lasso->setToolTip(
      tr("Lasso (L): drag a loop around samples to list them and their "
         "accuracy. Off: a drag pans, the wheel zooms, a click opens a sample."));
  m_status->setObjectName(QStringLiteral("embeddingStatus"));
  m_status->setWordWrap(true);
  m_hoverPicture->setFixedSize(kHoverPicture, kHoverPicture);
  m_hoverPicture->setAlignment(Qt::AlignCenter);
  m_hoverText->setObjectName(QStringLiteral("embeddingHover"));
  m_hoverText->setWordWrap(true);
  m_selectionText->setObjectName(QStringLiteral("embeddingSelection"));
  m_selectionText->setWordWrap(true);
  m_selectionList->setObjectName(QStringLiteral("embeddingSelectionList"));
  m_selectionList->setViewMode(QListView::IconMode);
  m_selectionList->setIconSize(QSize(48, 48));
  m_selectionList->setGridSize(QSize(60, 60));
  m_selectionList->setResizeMode(QListView::Adjust);
  m_selectionList->setMovement(QListView::Static);
  connect(m_selectionList, &QListWidget::itemClicked, this, [this](QListWidgetItem* item) {
    Q_EMIT sampleRequested(item->data(Qt::UserRole).toLongLong());
  });
  connect(m_layOut, &QPushButton::clicked, this, &EmbeddingPanel::layOut);
  connect(m_stop, &QPushButton::clicked, this, &EmbeddingPanel::stop);
  connect(m_colouring, qOverload<int>(&QComboBox::currentIndexChanged), this,
          [this](int i) { colourBy(Colouring(i)); });
  connect(m_lasso, &QPushButton::toggled, this, &EmbeddingPanel::setLassoMode);
  connect(m_job, &BackgroundJob::progress, this, [this](qint64 done, qint64 total) {
    m_progress->setMaximum(int(std::max<qint64>(1, total)));
    m_progress->setValue(int(done));
  });

  auto* top = new QHBoxLayout;
  top->addWidget(m_layOut);
  top->addWidget(m_stop);
  top->addWidget(m_progress);
  top->addWidget(m_colouring);
  top->addWidget(m_lasso);
  top->addStretch(1);
  auto* side = new QVBoxLayout;
  side->addWidget(m_hoverPicture, 0, Qt::AlignHCenter);
  side->addWidget(m_hoverText);
  side->addWidget(m_selectionText);
  side->addWidget(m_selectionList, 1);
  auto* sideBox = new QWidget(this);
  sideBox->setLayout(side);
  sideBox->setFixedWidth(190);
  auto* middle = new QHBoxLayout;
  middle->addWidget(m_chart, 1);
  middle->addWidget(sideBox);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(top);
  layout->addWidget(m_status);
  layout->addLayout(middle, 1);
  setEvaluation(nullptr);
}

void EmbeddingPanel::setEvaluation(const eval::Evaluation* evaluation) {
  m_job->cancel();
  m_evaluation = evaluation;
  m_points.clear();
  m_selection.clear();
  m_hovered = -1;
  m_stop->setEnabled(false);
  m_progress->setValue(0);
  const bool features = evaluation && evaluation->featureWidth > 0;
  m_layOut->setEnabled(features);
  if (!evaluation || evaluation->metrics.samples == 0)
    m_status->setText(tr("Evaluate a checkpoint, then lay out its samples here."));
  else if (!features)
    m_status->setText(tr("This evaluation kept no features to lay out."));
  else
    m_status->setText(tr("%1 %2 samples, %3 features each from node %4: press Lay out.")
                          .arg(evaluation->samples.size())
                          .arg(QString::fromStdString(evaluation->split))
                          .arg(evaluation->featureWidth)
                          .arg(QString::fromStdString(evaluation->featureNode)));
  draw();
  showHover(-1);
  showSelection();
}

bool EmbeddingPanel::isRunning() const {
  return m_job->isRunning();
}

void EmbeddingPanel::stop() {
  m_job->requestStop();  // the layout so far comes back
}

void EmbeddingPanel::layOut() {
  if (!m_evaluation || m_evaluation->featureWidth <= 0 || m_job->isRunning()) return;
  const auto& e = *m_evaluation;
  m_layOut->setEnabled(false);
  m_stop->setEnabled(true);
  m_progress->setValue(0);
  m_status->setText(tr("Laying out %1 samples...").arg(e.samples.size()));
  // The rows of the kept samples only (a cancelled evaluation keeps fewer than the split).
  auto rows = eval::embeddingRows(e);
  struct Result {
    eval::Embedding embedding;
    std::vector<std::size_t> sampleOf;
  };
  m_job->start(
      [rows = std::move(rows)](const JobContext& job) {
        eval::EmbeddingOptions o;
        o.progress = [&job](int done, int total) {
          job.progress(done, total);
          return !job.cancelled();
        };
        Result r;
        r.embedding =
            eval::embedFeatures(rows.features, std::int64_t(rows.samples.size()), rows.width, o);
        r.sampleOf = rows.samples;
        return r;
      },
      [this](Result r) {
        m_stop->setEnabled(false);
        m_layOut->setEnabled(true);
        m_points.clear();
        m_selection.clear();
        const auto& e = *m_evaluation;
        for (std::size_t i = 0; i < r.sampleOf.size(); ++i) {
          const float x = r.embedding.xy[2 * i], y = r.embedding.xy[2 * i + 1];
          if (!std::isfinite(x) || !std::isfinite(y)) continue;
          m_points.push_back({e.samples[r.sampleOf[i]].position, x, y, r.sampleOf[i]});
        }
        if (m_points.empty())
          m_status->setText(tr("Stopped before the layout began: press Lay out again."));
        else
          m_status->setText(
              tr("%1 samples laid out: t-SNE, %2 iterations%3, KL divergence %4. Wheel: zoom; "
                 "drag: pan; click: open a sample; L: lasso.")
                  .arg(m_points.size())
                  .arg(r.embedding.iterations)
                  .arg(r.embedding.cancelled ? tr(" (stopped)") : QString())
                  .arg(r.embedding.divergence, 0, 'f', 3));
        draw();
        m_chart->rescaleAxes();
        const auto pad = [](QCPAxis* axis) {
          const auto range = axis->range();
          axis->setRange(range.lower - 0.04 * range.size(), range.upper + 0.04 * range.size());
        };
        pad(m_chart->xAxis);
        pad(m_chart->yAxis);
        m_chart->replot();
        showSelection();
        Q_EMIT laidOut();
      },
      [this](const QString& error) {
        m_stop->setEnabled(false);
        m_layOut->setEnabled(true);
        m_status->setText(tr("<b>Not laid out:</b> %1").arg(error.toHtmlEscaped()));
        Q_EMIT laidOut();
      });
}

void EmbeddingPanel::colourBy(Colouring colouring) {
  if (m_colouring->currentIndex() != int(colouring)) {
    m_colouring->setCurrentIndex(int(colouring));  // draws through the signal
    return;
  }
  draw();
}

void EmbeddingPanel::draw() {
  m_chart->clearGraphs();
  m_chart->clearPlottables();
  m_selected = nullptr;
  m_loop = nullptr;
  if (!m_evaluation || m_points.empty()) {
    m_chart->legend->setVisible(false);
    m_chart->replot();
    return;
  }
  const auto& e = *m_evaluation;
  // One graph per colour: a class, right or wrong, or a fifth of the confidence range.
  std::map<int, std::pair<QVector<double>, QVector<double>>> groups;
  QMap<int, QPair<QString, QColor>> look;
  const auto colouring = Colouring(m_colouring->currentIndex());
  QCPColorGradient heat(QCPColorGradient::gpThermal);
  for (const auto& p : m_points) {
    const auto& s = e.samples[p.sample];
    int group = 0;
    switch (colouring) {
      case Colouring::Class:
        group = int(s.label);
        if (!look.contains(group)) look[group] = {className(e, s.label), seriesColor(group)};
        break;
      case Colouring::Correct:
        group = s.label == s.predicted ? 0 : 1;
        look[0] = {tr("right"), QColor(44, 160, 44)};
        look[1] = {tr("wrong"), QColor(214, 39, 40)};
        break;
      case Colouring::Confidence: {
        group = std::clamp(int(confidenceOf(s) * 5), 0, 4);
        if (!look.contains(group))
          look[group] = {
              tr("confidence %1-%2").arg(group * 0.2, 0, 'f', 1).arg((group + 1) * 0.2, 0, 'f', 1),
              heat.color(0.15 + 0.17 * group, QCPRange(0, 1))};
        break;
      }
    }
    groups[group].first << p.x;
    groups[group].second << p.y;
  }
  for (auto& [group, xy] : groups) {
    auto* graph = m_chart->addGraph();
    graph->setName(look[group].first);
    graph->setLineStyle(QCPGraph::lsNone);
    QColor c = look[group].second;
    c.setAlpha(200);
    graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, c, c, 4));
    // Thousands of discs pan and zoom at twice the frame rate without antialiasing.
    graph->setAntialiasedScatters(m_points.size() < 3000);
    graph->setData(xy.first, xy.second);
    graph->setProperty("netsmithGroup", group);
  }
  m_selected = m_chart->addGraph();
  m_selected->setName(tr("selected"));
  m_selected->setLineStyle(QCPGraph::lsNone);
  // Light rings: a dense selection keeps its colours readable through them.
  QColor ring = themeColors().text;
  ring.setAlpha(110);
  m_selected->setScatterStyle(
      QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(ring, 1), Qt::NoBrush, 7));
  m_selected->setAntialiasedScatters(m_points.size() < 3000);
  m_selected->removeFromLegend();
  keepOutOfLegend(m_selected);
  m_loop = new QCPCurve(m_chart->xAxis, m_chart->yAxis);
  m_loop->setLayer(QStringLiteral("lasso"));
  m_loop->setPen(QPen(themeColors().text, 1.5, Qt::DashLine));
  m_loop->removeFromLegend();
  m_chart->legend->setVisible(true);
  showSelection();
}

QPointF EmbeddingPanel::pixelOf(int point) const {
  const auto& p = m_points[std::size_t(point)];
  return {m_chart->xAxis->coordToPixel(p.x), m_chart->yAxis->coordToPixel(p.y)};
}

int EmbeddingPanel::pointAt(QPointF pixel) const {
  int best = -1;
  double bestDistance = kPickRadius * kPickRadius;
  for (int i = 0; i < int(m_points.size()); ++i) {
    const QPointF d = pixelOf(i) - pixel;
    const double distance = d.x() * d.x() + d.y() * d.y();
    if (distance <= bestDistance) {
      bestDistance = distance;
      best = i;
    }
  }
  return best;
}

void EmbeddingPanel::selectInside(const QPolygonF& polygon) {
  m_selection.clear();
  for (int i = 0; i < int(m_points.size()); ++i)
    if (polygon.containsPoint(pixelOf(i), Qt::OddEvenFill)) m_selection.push_back(i);
  showSelection();
}

void EmbeddingPanel::showHover(int point) {
  m_hovered = point;
  if (point < 0 || !m_evaluation) {
    m_hoverPicture->clear();
    m_hoverText->setText(m_points.empty() ? QString() : tr("Point at a sample to see it here."));
    return;
  }
  const auto& e = *m_evaluation;
  const auto& s = e.samples[m_points[std::size_t(point)].sample];
  if (!s.picture.empty())
    m_hoverPicture->setPixmap(QPixmap::fromImage(toQImage(s.picture).scaled(
        kHoverPicture, kHoverPicture, Qt::KeepAspectRatio, Qt::FastTransformation)));
  else
    m_hoverPicture->clear();
  // The sample as the predictions file names it: its file's name here, the whole in the tip.
  const auto p = std::size_t(s.position);
  const QString name =
      p < e.featureSamples.size() ? QString::fromStdString(e.featureSamples[p]) : QString();
  m_hoverText->setToolTip(name);
  m_hoverText->setText(
      tr("<b>#%1</b> %5<br>true: %2<br>predicted: %3 (%4%)")
          .arg(s.position)
          .arg(className(e, s.label).toHtmlEscaped(), className(e, s.predicted).toHtmlEscaped())
          .arg(100.0 * confidenceOf(s), 0, 'f', 1)
          .arg(elideMiddle(name.section(QLatin1Char('/'), -1), 28).toHtmlEscaped()));
}

void EmbeddingPanel::showSelection() {
  m_selectionList->clear();
  if (m_selected) {
    QVector<double> x, y;
    for (int i : m_selection) {
      x << m_points[std::size_t(i)].x;
      y << m_points[std::size_t(i)].y;
    }
    m_selected->setData(x, y);
  }
  m_chart->replot();
  if (m_selection.empty() || !m_evaluation) {
    m_selectionText->setText(m_points.empty() ? QString()
                                              : tr("Lasso (L) samples to list them here."));
    return;
  }
  const auto& e = *m_evaluation;
  std::int64_t right = 0;
  std::map<std::int64_t, std::int64_t> perClass;
  for (int i : m_selection) {
    const auto& s = e.samples[m_points[std::size_t(i)].sample];
    right += s.label == s.predicted;
    ++perClass[s.label];
  }
  // The classes most of the selection is of.
  std::vector<std::pair<std::int64_t, std::int64_t>> counts(perClass.begin(), perClass.end());
  std::sort(counts.begin(), counts.end(),
            [](const auto& a, const auto& b) { return a.second > b.second; });
  QStringList most;
  for (std::size_t k = 0; k < counts.size() && k < 3; ++k)
    most << tr("%1 %2").arg(counts[k].second).arg(className(e, counts[k].first).toHtmlEscaped());
  const auto n = std::int64_t(m_selection.size());
  m_selectionText->setText(tr("<b>%1 selected</b>: accuracy %2% (%3 right)<br>%4")
                               .arg(n)
                               .arg(100.0 * double(right) / double(n), 0, 'f', 1)
                               .arg(right)
                               .arg(most.join(QStringLiteral(", "))));
  for (std::size_t k = 0; k < m_selection.size() && int(k) < kSelectionListed; ++k) {
    const auto& s = e.samples[m_points[std::size_t(m_selection[k])].sample];
    auto* item = new QListWidgetItem(m_selectionList);
    if (!s.picture.empty())
      item->setIcon(QPixmap::fromImage(toQImage(s.picture).scaled(
          m_selectionList->iconSize(), Qt::KeepAspectRatio, Qt::FastTransformation)));
    item->setToolTip(tr("#%1: true %2, predicted %3")
                         .arg(s.position)
                         .arg(className(e, s.label), className(e, s.predicted)));
    item->setData(Qt::UserRole, qlonglong(s.position));
  }
}

void EmbeddingPanel::setLassoMode(bool on) {
  m_chart->setInteraction(QCP::iRangeDrag, !on);
  m_chart->setCursor(on ? Qt::CrossCursor : Qt::ArrowCursor);
}

void EmbeddingPanel::drawLasso() {
  if (!m_loop) return;
  QVector<double> x, y;
  for (const auto& p : m_lassoPixels) {
    x << m_chart->xAxis->pixelToCoord(p.x());
    y << m_chart->yAxis->pixelToCoord(p.y());
  }
  if (!m_lassoPixels.isEmpty()) {
    x << x.front();
    y << y.front();
  }
  m_loop->setData(x, y);
  m_chart->layer(QStringLiteral("lasso"))->replot();
}

bool EmbeddingPanel::eventFilter(QObject* watched, QEvent* event) {
  if (watched != m_chart || m_points.empty()) return QWidget::eventFilter(watched, event);
  switch (event->type()) {
    // A press soon after another near it comes as a double click: it starts a click or a
    // lasso all the same.
    case QEvent::MouseButtonPress:
    case QEvent::MouseButtonDblClick: {
      auto* mouse = static_cast<QMouseEvent*>(event);
      if (mouse->button() != Qt::LeftButton) break;
      m_pressed = mouse->position();
      if (m_lasso->isChecked()) {
        m_drawing = true;
        m_lassoPixels = QPolygonF{mouse->position()};
        return true;
      }
      break;
    }
    case QEvent::MouseMove: {
      auto* mouse = static_cast<QMouseEvent*>(event);
      if (m_drawing) {
        m_lassoPixels << mouse->position();
        drawLasso();
        return true;
      }
      if (!(mouse->buttons() & Qt::LeftButton)) {
        const int point = pointAt(mouse->position());
        if (point != m_hovered) showHover(point);
      }
      break;
    }
    case QEvent::MouseButtonRelease: {
      auto* mouse = static_cast<QMouseEvent*>(event);
      if (mouse->button() != Qt::LeftButton) break;
      if (m_drawing) {
        m_drawing = false;
        m_lassoPixels << mouse->position();
        selectInside(m_lassoPixels);
        return true;
      }
      // A click (not a pan): the sample under the pointer opens.
      if ((mouse->position() - m_pressed).manhattanLength() < 4) {
        const int point = pointAt(mouse->position());
        if (point >= 0) Q_EMIT sampleRequested(m_points[std::size_t(point)].position);
      }
      break;
    }
    default:
      break;
  }
  return QWidget::eventFilter(watched, event);
}

}  // namespace netsmith::ui
