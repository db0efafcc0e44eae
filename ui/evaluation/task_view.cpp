#include "evaluation/task_view.h"

#include <qcustomplot.h>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QSlider>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>

#include <limits>

#include "eval/evaluation.h"
#include "util/chart_fit.h"
#include "util/image_convert.h"
#include "util/theme_colors.h"

namespace netsmith::ui {

std::shared_ptr<const TaskViewRegistry> TaskViewRegistry::builtins() {
  auto r = std::make_shared<TaskViewRegistry>();
  addBuiltinTaskViews(*r);
  return r;
}

void TaskViewRegistry::add(const std::string& task, TaskViewFactory make) {
  m_views[task] = std::move(make);
}

TaskView* TaskViewRegistry::make(const std::string& task, QWidget* parent) const {
  const auto it = m_views.find(task);
  return it != m_views.end() ? it->second(parent) : nullptr;
}

QString TaskView::summaryLine(const eval::Evaluation& e, const QString& headline) const {
  return taskSummaryLine(e, headline);
}

QString TaskView::taskSummaryLine(const eval::Evaluation& e, const QString& headline) {
  return tr("<b>%1</b>; task %2, loss %3%4")
      .arg(headline.toHtmlEscaped(), QString::fromStdString(e.task).toHtmlEscaped())
      .arg(e.metrics.loss, 0, 'f', 4)
      .arg(e.cancelled ? tr(" (cancelled: partial)") : QString());
}

double perClassFigure(const std::map<std::string, std::vector<double>>& perClass, const char* name,
                      std::size_t k) {
  const auto it = perClass.find(name);
  return it != perClass.end() && k < it->second.size() ? it->second[k]
                                                       : std::numeric_limits<double>::quiet_NaN();
}

void TaskView::setUpFigureTable(QTableWidget* table, const QString& name,
                                const QStringList& headers) {
  table->setObjectName(name);
  table->setColumnCount(int(headers.size()));
  table->setHorizontalHeaderLabels(headers);
  table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table->verticalHeader()->hide();
  table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
}

void TaskView::setFigureRow(QTableWidget* table, int row, const QStringList& cells) {
  for (int col = 0; col < cells.size(); ++col) {
    auto* item = new QTableWidgetItem(cells[col]);
    if (col) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    table->setItem(row, col, item);
  }
}

void TaskView::setUpGallery(QListWidget* gallery, const QString& name, QSize icon, QSize grid) {
  gallery->setObjectName(name);
  gallery->setViewMode(QListView::IconMode);
  gallery->setIconSize(icon);
  gallery->setGridSize(grid);
  gallery->setResizeMode(QListView::Adjust);
  gallery->setMovement(QListView::Static);
  gallery->setWordWrap(true);
  connect(gallery, &QListWidget::itemClicked, this, [this](QListWidgetItem* item) {
    Q_EMIT sampleRequested(item->data(Qt::UserRole).toLongLong());
  });
}

void TaskView::setUpPrCurve(QCustomPlot* plot, const QString& name, const QString& recallLabel) {
  plot->setObjectName(name);
  plot->setMinimumHeight(200);
  plot->xAxis->setLabel(recallLabel);
  plot->yAxis->setLabel(tr("precision"));
  plot->xAxis->setRange(0, 1.02);
  plot->yAxis->setRange(0, 1.05);
  followTheme(plot);
  fitTicksToSize(plot);
}

void TaskView::setUpThresholdSlider(QSlider* slider, const QString& name, const QString& tip) {
  slider->setObjectName(name);
  slider->setRange(0, kThresholdSteps);
  slider->setSingleStep(5);
  slider->setPageStep(50);
  slider->setToolTip(tip);
}

void TaskView::drawPrCurve(QCustomPlot* plot, std::vector<std::pair<float, bool>> scored,
                           double positives, const QString& name) {
  plot->clearGraphs();
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  QVector<double> recall, precision;
  double tp = 0, fp = 0;
  for (std::size_t i = 0; i < scored.size(); ++i) {
    (scored[i].second ? tp : fp) += 1;
    if (i + 1 < scored.size() && scored[i + 1].first == scored[i].first) continue;
    recall << (positives > 0 ? tp / positives : 0);
    precision << tp / (tp + fp);
  }
  auto* graph = plot->addGraph();
  graph->setName(name);
  graph->setPen(QPen(QColor(31, 119, 180), 2));
  graph->setData(recall, precision, true);
  auto* point = plot->addGraph();
  point->setName(tr("threshold"));
  point->setLineStyle(QCPGraph::lsNone);
  point->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, QColor(214, 39, 40), 10));
  plot->replot();
}

void TaskView::markPrPoint(QCustomPlot* plot, double recall, double precision, bool any) {
  if (plot->graphCount() < 2) return;
  plot->graph(1)->data()->clear();
  if (any) plot->graph(1)->addData(recall, precision);
  plot->replot(QCustomPlot::rpQueuedReplot);
}

QWidget* TaskView::curvePanel(QCustomPlot* curve, const QString& sliderLabel, QSlider* slider,
                              QLabel* counts) {
  auto* box = new QWidget(this);
  auto* layout = new QVBoxLayout(box);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(curve, 1);
  auto* sliderRow = new QHBoxLayout;
  sliderRow->addWidget(new QLabel(sliderLabel, box));
  sliderRow->addWidget(slider, 1);
  layout->addLayout(sliderRow);
  // Wrapped: a long counts line must not widen the page past the window.
  counts->setWordWrap(true);
  layout->addWidget(counts);
  return box;
}

QWidget* TaskView::galleryPanel(const QString& title, QListWidget* gallery, QComboBox* order) {
  auto* box = new QWidget(this);
  auto* layout = new QVBoxLayout(box);
  layout->setContentsMargins(0, 0, 0, 0);
  auto* head = new QHBoxLayout;
  head->addWidget(new QLabel(title, box));
  head->addStretch(1);
  if (order) head->addWidget(order);
  layout->addLayout(head);
  layout->addWidget(gallery, 1);
  return box;
}

void TaskView::layOutSplit(Qt::Orientation orientation, QWidget* first, QWidget* second,
                           int firstStretch, int secondStretch) {
  auto* split = new QSplitter(orientation, this);
  split->addWidget(first);
  split->addWidget(second);
  split->setStretchFactor(0, firstStretch);
  split->setStretchFactor(1, secondStretch);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(split);
}

QPixmap TaskView::largePicture(const cv::Mat& picture) {
  const QImage image = toQImage(picture);
  // Small pictures keep their pixels sharp; larger ones are scaled down smoothly.
  return QPixmap::fromImage(
      image.scaled(280, 280, Qt::KeepAspectRatio,
                   image.width() < 280 ? Qt::FastTransformation : Qt::SmoothTransformation));
}

QDialog* TaskView::sampleDialog(const QString&, const RegistriesPtr&,
                                const eval::SampleOutcome& sample, const eval::Evaluation&) {
  return pictureDialog(sample.position, largePicture(sample.picture),
                       tr("<b>#%1</b>: score %2").arg(sample.position).arg(sample.loss, 0, 'g', 4));
}

QDialog* TaskView::pictureDialog(qint64 position, const QPixmap& picture, const QString& caption) {
  auto* dialog = new QDialog(this);
  dialog->setObjectName(QStringLiteral("sampleDialog"));
  dialog->setWindowTitle(tr("Sample #%1").arg(position));
  auto* text = new QLabel(caption, dialog);
  text->setObjectName(QStringLiteral("sampleCaption"));
  text->setWordWrap(true);
  text->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* image = new QLabel(dialog);
  image->setObjectName(QStringLiteral("samplePicture"));
  image->setPixmap(picture);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, dialog);
  connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::reject);
  auto* layout = new QVBoxLayout(dialog);
  layout->addWidget(text);
  layout->addWidget(image, 1, Qt::AlignCenter);
  layout->addWidget(buttons);
  return dialog;
}

}  // namespace netsmith::ui
