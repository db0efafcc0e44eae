#pragma once

// The live training dashboard: six QCustomPlot charts on a shared x axis (loss, accuracy,
// learning rate, gradient norm, memory, throughput) and the epoch table. Points are appended to
// the plots' own data containers (no copies of whole series), so a chart holds a million
// points per series and still replots in milliseconds (adaptive sampling).
#include <QElapsedTimer>
#include <QHash>
#include <QPointer>
#include <QString>
#include <QStringList>
#include <QTimer>
#include <QVector>
#include <QWidget>
#include <cstdint>
#include <memory>
#include <vector>

#include "monitor/point_keys.h"
#include "monitor/run_history.h"
#include "run/events.h"

class QCheckBox;
class QHBoxLayout;
class QComboBox;
class QCPGraph;
class QCPItemStraightLine;
class QCustomPlot;
class QLabel;
class QSlider;

namespace netsmith::run {
struct RunRecord;
}
class QSplitter;
class QTreeWidget;

namespace netsmith::ui {

class DashboardChart;
class DashboardControls;
class EpochTable;
class ReplotScheduler;
class GradNormChart;
class LossChart;

class Dashboard : public QWidget {
  Q_OBJECT

 public:
  explicit Dashboard(QWidget* parent = nullptr);
  ~Dashboard() override;

  /// Forgets every point (a new run starts).
  void clear();
  /// The project's setting that changes what is drawn: the clip threshold of the gradient norm
  /// (0: none).
  void configure(double clipGradNorm);
  /// The metric that makes an epoch "best" (val_accuracy, val_mae, train_loss...), as the run
  /// resolved it (TrainerSession::monitorChosen); read from each epoch as the run reads it.
  void setMonitor(const QString& metric, bool maximize);

  void addBatches(const QVector<run::BatchMetrics>& batches);
  void addEpoch(const run::EpochMetrics& epoch);
  /// A resumed run's history, read from its run folder before it goes on: drawn as the run's own
  /// points (table rows numbered as the run numbers its epochs, step points, epoch points)
  /// when the run's first point arrives, up to where that point says the run goes on (what the
  /// folder holds past it, or what an earlier resume replaced, is left out). clear() drops it.
  void setHistory(const run::RunRecord& record);

  /// A warning about batch `batch` of `epoch` (the run diverging): a red dashed line on the loss
  /// chart at that batch (placed once the batch's point is there).
  void markWarning(std::int64_t epoch, std::int64_t batch, const QString& text);
  /// The marked warnings' texts and x keys on the current axis (NaN while not placed).
  QStringList warningTexts() const;
  QVector<double> warningKeys() const;
  /// Past runs drawn dashed on the loss and accuracy charts.
  void addOverlay(const RunHistory& run);
  void clearOverlays();
  /// Removes the overlay named `name` (a sweep's trial that ended), if shown.
  void removeOverlay(const QString& name);
  QStringList overlayNames() const;
  /// Steps drawn for the overlay `name` (its smoothed training loss); 0 when there is none.
  int overlayPointCount(const QString& name) const;

  // Controls (also reachable from the dashboard's own widgets).
  void setXAxisMode(XAxisMode mode);
  XAxisMode xAxisMode() const { return m_mode; }
  /// EMA smoothing of the step loss, 0 (none) to 0.999.
  void setSmoothing(double weight);
  double smoothing() const { return m_smoothing; }
  void setGradNormLogScale(bool on);
  /// Follow the newest points (re-fit the axes on every update) until the user zooms or pans.
  void setFollow(bool on);
  bool follows() const { return m_follow; }

  /// Chart ids: "loss", "accuracy", "lr", "grad_norm", "memory", "throughput".
  static QStringList chartIds();
  QCustomPlot* chart(const QString& id) const;
  /// Series ids: train_loss, train_loss_ema, val_loss, train_accuracy, val_accuracy, lr,
  /// grad_norm, memory, memory_reserved, memory_peak, throughput.
  int pointCount(const QString& series) const;
  QCPGraph* series(const QString& id) const;
  /// The hover text at `key` on the chart's x axis: the nearest point of every series.
  QString tooltipAt(const QString& chartId, double key) const;
  bool saveChartPng(const QString& chartId, const QString& path, QString* error = nullptr);
  /// The chart's series as CSV (series,x,value), written atomically.
  bool saveChartCsv(const QString& chartId, const QString& path, QString* error = nullptr);
  /// The epoch whose monitored metric is best (-1: none yet).
  int bestEpoch() const;
  QTreeWidget* epochTable() const;
  QString memoryLabel() const;
  /// Re-fit the axes and queue a replot (what every update does while following).
  void refit();
  /// Schedule a replot of every chart. Charts are replotted one per event-loop pass (so input
  /// and timers run in between) and a new round starts no sooner than 3x the last round's
  /// duration (at least 40 ms); nothing is drawn while the dashboard is hidden.
  void replotAll();

 private:
  struct OverlayData {
    QString name;
    /// Train loss (smoothed), val loss, val accuracy, then lr, gradient norm, memory and
    /// throughput per step.
    QVector<QCPGraph*> graphs;
    RunHistory run;
  };

  void fitEpochTable();
  void connectChart(DashboardChart* chart);
  DashboardChart* findChart(const QString& id) const;
  void rekey();
  /// Draws the pending history up to step `firstStep` (exclusive) and epoch `firstEpoch`
  /// (exclusive): where the resumed run's first live point is.
  void drawHistory(std::int64_t firstStep, std::int64_t firstEpoch, std::int64_t batchesPerEpoch,
                   double firstSeconds);
  void chartContextMenu(const QString& chartId, const QPoint& pos);
  void showTooltip(const QString& chartId, QMouseEvent* event);
  void redrawOverlay(OverlayData& o);

 protected:
  void showEvent(QShowEvent* event) override;
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  std::vector<std::unique_ptr<DashboardChart>> m_charts;
  LossChart* m_lossChart = nullptr;
  GradNormChart* m_gradNormChart = nullptr;
  QVector<OverlayData> m_overlays;
  struct WarningMark {
    std::int64_t epoch = 0, batch = 0;
    QString text;
    long index = -1;  ///< into the batch keys; -1 until the batch's point arrives
    QCPItemStraightLine* line = nullptr;
  };
  void placeWarnings();
  std::vector<WarningMark> m_warnings;
  PointKeys m_keys;  ///< where every point lies on each x axis
  XAxisMode m_mode = XAxisMode::Step;
  double m_smoothing = 0.6;
  bool m_follow = true;
  bool m_syncingRange = false;
  /// A resumed run's history not drawn yet (setHistory); its live points go on after it on
  /// the time axis (PointKeys::continueAfter).
  std::unique_ptr<run::RunRecord> m_history;

  ReplotScheduler* m_replots = nullptr;

  DashboardControls* m_controls = nullptr;
  EpochTable* m_table = nullptr;
  QSplitter* m_splitter = nullptr;  ///< the charts and the epoch table
};

}  // namespace netsmith::ui
