#include "monitor/epoch_table.h"

#include <QHeaderView>
#include <QScrollBar>
#include <cmath>

#include "monitor/dashboard_charts.h"
#include "run/events.h"
#include "train/callback.h"
#include "train/train_options.h"

namespace netsmith::ui {

EpochTable::EpochTable(QWidget* parent) : QTreeWidget(parent) {
  setObjectName(QStringLiteral("epochTable"));
  setRootIsDecorated(false);
  setAlternatingRowColors(true);
  setHeaderLabels({tr("Epoch"), tr("Train loss"), tr("Train acc"), tr("Val loss"), tr("Val acc"),
                   tr("LR"), tr("Time (s)")});
  header()->setSectionResizeMode(QHeaderView::ResizeToContents);
  header()->setStretchLastSection(false);  // its width is its columns' (fitColumns)
}

void EpochTable::forgetRun() {
  headerItem()->setText(1, tr("Train loss"));
  headerItem()->setToolTip(1, QString());
  headerItem()->setText(2, tr("Train acc"));
  headerItem()->setText(4, tr("Val acc"));
  setMonitor(QStringLiteral("val_accuracy"), true);  // the next run says what it monitors
  m_bestRow = -1;
  clear();
}

void EpochTable::setMonitor(const QString& metric, bool maximize) {
  m_monitor = metric;
  m_maximize = maximize;
  headerItem()->setToolTip(0, tr("The best epoch by %1 is marked").arg(metric));
}

int EpochTable::fitColumns() {
  header()->resizeSections(QHeaderView::ResizeToContents);
  return header()->length() + 2 * frameWidth() + verticalScrollBar()->sizeHint().width();
}

void EpochTable::addEpoch(const run::EpochMetrics& e, const QString& preferred) {
  auto* row = new QTreeWidgetItem(this);
  auto percent = [](double v) { return QString::number(100.0 * v, 'f', 2) + QLatin1Char('%'); };
  row->setText(0, QString::number(e.epoch + 1));
  row->setData(0, Qt::UserRole + 1, qint64(e.epoch + 1));  // as the run numbers it (resumed too)
  row->setText(1, QString::number(e.trainLoss, 'f', 4) +
                      (e.trainLabelSmoothing > 0 ? QStringLiteral(" *") : QString()));
  if (e.trainLabelSmoothing > 0) {
    const QString why = tr("* with label smoothing %1: validation's loss has none, so it reads "
                           "lower for the same predictions")
                            .arg(e.trainLabelSmoothing);
    row->setToolTip(1, why);
    headerItem()->setText(1, tr("Train loss *"));
    headerItem()->setToolTip(1, why);
  }
  // Accuracy, or the task's training figure (headlineFigure), in the header's name.
  QString figure;
  const double trainFigure = headlineFigure(e, false, &figure, preferred);
  const auto shown = [&figure, percent](double v) {
    if (!std::isfinite(v)) return QStringLiteral("-");
    return figure.isEmpty() ? percent(v) : QString::number(v, 'g', 4);
  };
  headerItem()->setText(2, figure.isEmpty() ? tr("Train acc") : tr("Train %1").arg(figure));
  headerItem()->setText(4, figure.isEmpty() ? tr("Val acc") : tr("Val %1").arg(figure));
  row->setText(2, shown(trainFigure));
  row->setText(3, e.hasValidation ? QString::number(e.validation.loss, 'f', 4) : QString());
  row->setText(4, e.hasValidation ? shown(headlineFigure(e, true, nullptr, preferred)) : QString());
  row->setText(5, formatChartValue(e.lr));
  row->setToolTip(5, tr("The LR of the epoch's last optimizer step"));
  row->setText(6, QString::number(e.seconds, 'f', 1));
  for (int c = 1; c < 7; ++c)
    row->setTextAlignment(c, Qt::AlignRight | Qt::AlignVCenter);
  // The monitored metric of this epoch, read as the run's "best" reads it (train::metricOf: any
  // figure of the task, a validation metric falling back to training without validation).
  bool found = false;
  const double value =
      train::metricOf(train::MetricChoice{m_monitor.toStdString(), m_maximize}, e, found);
  row->setData(0, Qt::UserRole, value);
  if (std::isfinite(value) &&
      (m_bestRow < 0 || (m_maximize ? value > m_bestValue : value < m_bestValue))) {
    m_bestValue = value;
    m_bestRow = topLevelItemCount() - 1;
    markBest();
  }
  scrollToItem(row);
}

void EpochTable::markBest() {
  for (int i = 0; i < topLevelItemCount(); ++i) {
    auto* item = topLevelItem(i);
    const bool best = i == m_bestRow;
    QFont f = item->font(0);
    f.setBold(best);
    const QString epoch = QString::number(item->data(0, Qt::UserRole + 1).toLongLong());
    item->setText(0, best ? epoch + QStringLiteral(" \u2605") : epoch);
    item->setToolTip(0, best ? tr("best %1").arg(m_monitor) : QString());
    for (int c = 0; c < columnCount(); ++c)
      item->setFont(c, f);
  }
}

}  // namespace netsmith::ui
