#pragma once

// The dashboard's charts, one class per kind behind DashboardChart: each kind knows which
// metrics it draws and how (the smoothed loss, the clip line of the gradient norm, the CUDA
// memory series). The Dashboard owns what the charts share: the x axis, the overlays of past
// runs, the epoch table and the replot schedule.
#include <QCoreApplication>
#include <QString>
#include <QStringList>
#include <QVector>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "run/events.h"

class QColor;
class QCPGraph;
class QCPItemStraightLine;
class QCPItemText;
class QCustomPlot;
class QWidget;

namespace netsmith::ui {

/// A value as the dashboard shows it: 5 significant digits, scientific when tiny or huge.
QString formatChartValue(double v);

/// The debiased exponential moving average of the step loss (what TensorBoard draws).
class LossEma {
 public:
  explicit LossEma(double weight = 0) : m_weight(weight) {}
  /// Adds one step's loss (a non-finite loss leaves the average as it is) and returns the
  /// smoothed value at that step.
  double add(double value);

 private:
  double m_weight;
  double m_value = 0;
  std::int64_t m_count = 0;
};

/// One line of a chart and the range of its values so far (fitting the axes makes no pass over
/// a million points).
struct DashboardSeries {
  QString id;
  QCPGraph* graph = nullptr;
  bool perEpoch = false;  ///< one point per epoch; else one per batch
  double minValue = 0, maxValue = 0, minPositive = 0;
  bool hasRange = false;

  /// Appends at the end of the graph's data (keys arrive in order).
  void append(double key, double value);
  void clear();
};

/// One chart of the dashboard: a QCustomPlot and the series it draws from the trainer's metrics.
class DashboardChart {
  Q_DECLARE_TR_FUNCTIONS(DashboardChart)

 public:
  /// Creates the plot (a child of `parent`) with its title and y axis label.
  DashboardChart(const QString& id, const QString& title, const QString& yLabel, QWidget* parent);
  virtual ~DashboardChart() = default;
  DashboardChart(const DashboardChart&) = delete;
  DashboardChart& operator=(const DashboardChart&) = delete;

  /// "loss", "accuracy", "lr", "grad_norm", "memory" or "throughput".
  const QString& id() const { return m_id; }
  QCustomPlot* plot() const { return m_plot; }
  QVector<DashboardSeries>& series() { return m_series; }
  const QVector<DashboardSeries>& series() const { return m_series; }
  /// The series `id`, or nullptr when this chart does not draw it.
  DashboardSeries* findSeries(const QString& id);

  /// Draws `batches`, the i-th at x = `keys[i]`.
  virtual void addBatches(const QVector<run::BatchMetrics>& batches, const QVector<double>& keys);
  /// Draws one epoch's metrics at x = `key`.
  virtual void addEpoch(const run::EpochMetrics& epoch, double key);
  /// Forgets every point.
  virtual void clear();
  /// Widens [lo, hi] to the visible series (their positive values on a log axis) and to what
  /// the kind of chart adds (the clip line).
  virtual void extendYRange(double& lo, double& hi) const;
  /// One line per visible series with points: its point nearest to `key` on the x axis,
  /// "name: value (at key)".
  QStringList valuesAt(double key) const;
  /// The chart as a PNG of at least 640 x 400 pixels.
  bool savePng(const QString& path, QString* error) const;
  /// Every series as CSV (series,<xName>,value), written atomically.
  bool saveCsv(const QString& path, const QString& xName, QString* error) const;
  /// Shows "Press F5 to train" in the middle while no series has a point; hides it after.
  void updateHint();
  bool hintShown() const;
  /// A dashed line of a past run, drawn over this chart's series; its points are set by the
  /// caller. The legend says "<run>: <series>" with the run's name elided in the middle (its
  /// time kept) and the whole name in the tooltip.
  QCPGraph* addOverlayGraph(const QString& run, const QString& series, const QColor& color,
                            bool markers);

 protected:
  DashboardSeries& addSeries(const QString& id, const QString& name, const QColor& color,
                             bool perEpoch, bool markers);

 private:
  QString m_id;
  QCustomPlot* m_plot;
  QVector<DashboardSeries> m_series;
  QCPItemText* m_hint = nullptr;
};

/// The step loss, its smoothed curve and the validation loss of every epoch.
class LossChart : public DashboardChart {
 public:
  LossChart(double smoothing, QWidget* parent);
  void addBatches(const QVector<run::BatchMetrics>& batches, const QVector<double>& keys) override;
  void addEpoch(const run::EpochMetrics& epoch, double key) override;
  void clear() override;
  /// EMA weight of the smoothed curve, which is recomputed from the step losses.
  void setSmoothing(double weight);

 private:
  enum { kStep, kSmoothed, kValidation };
  double m_smoothing;
  LossEma m_ema;
};

/// Training and validation accuracy of every epoch, and the training accuracy of the epoch so
/// far at every step. A task without accuracy: the figure the run monitors (val_map: map) when
/// the epoch reports it, else the first of its training figures, in training and validation,
/// the chart titled by it.
class AccuracyChart : public DashboardChart {
 public:
  explicit AccuracyChart(QWidget* parent);
  void addBatches(const QVector<run::BatchMetrics>& batches, const QVector<double>& keys) override;
  void addEpoch(const run::EpochMetrics& epoch, double key) override;
  /// Forgets the points and the figure (the next run may be of another task).
  void clear() override;
  /// The figure drawn in place of accuracy ("" : accuracy).
  const QString& figure() const { return m_figure; }
  /// The figure to prefer (the run's monitor without val_ / train_; "" : none).
  void setPreferredFigure(const QString& figure) { m_preferred = figure; }
  const QString& preferredFigure() const { return m_preferred; }

 private:
  void setTitle(const QString& figure);
  QString m_figure;
  QString m_preferred;
};

/// The figure an epoch table or chart shows for `epoch`: its accuracy where the task has one,
/// else `preferred` when the epoch reports it (in training or validation), else its first
/// training figure. `name` gets that figure's name ("" for accuracy); NaN where the epoch has
/// no value of it.
double headlineFigure(const run::EpochMetrics& epoch, bool validation, QString* name,
                      const QString& preferred = {});

/// One value of every batch: the learning rate, the throughput.
class BatchValueChart : public DashboardChart {
 public:
  using Value = std::function<double(const run::BatchMetrics&)>;
  /// A chart `id` with one series `id` named `name`, drawing `value` of every batch.
  BatchValueChart(const QString& id, const QString& title, const QString& yLabel,
                  const QString& name, const QColor& color, Value value, QWidget* parent);
  /// The learning rate of every step ("lr").
  static std::unique_ptr<BatchValueChart> learningRate(QWidget* parent);
  /// Images per second of every step ("throughput").
  static std::unique_ptr<BatchValueChart> throughput(QWidget* parent);
  void addBatches(const QVector<run::BatchMetrics>& batches, const QVector<double>& keys) override;

 private:
  Value m_value;
};

/// The gradient norm of every step, on a linear or log axis, with the clip threshold as a line.
class GradNormChart : public DashboardChart {
 public:
  explicit GradNormChart(QWidget* parent);
  void addBatches(const QVector<run::BatchMetrics>& batches, const QVector<double>& keys) override;
  void extendYRange(double& lo, double& hi) const override;
  /// The clip threshold drawn (0: none).
  void setClip(double clip);
  void setLogScale(bool on);

 private:
  double m_clip = 0;
  QCPItemStraightLine* m_clipLine;
};

/// Process RSS, or on CUDA the allocator's allocated, reserved and peak bytes.
class MemoryChart : public DashboardChart {
 public:
  explicit MemoryChart(QWidget* parent);
  void addBatches(const QVector<run::BatchMetrics>& batches, const QVector<double>& keys) override;

 private:
  enum { kAllocated, kReserved, kPeak };
  void setKind(const std::string& kind);

  std::string m_kind;
};

}  // namespace netsmith::ui
