#pragma once

// Models weighed on their figure and what they cost deployed: each run (or sweep trial) a point
// at its batch-1 latency or file size (chosen above the plot) against its headline figure, the
// Pareto front (experiment/pareto.h) drawn through the points no other beats on both. The Runs
// and Experiments pages show one; a point without deploy figures is left out and counted.
#include <QColor>
#include <QString>
#include <QVector>
#include <QWidget>
#include <limits>

#include "task/figures.h"

class QComboBox;
class QCustomPlot;
class QLabel;

namespace netsmith::ui {

struct CostPlotPoint {
  QString name;                                             ///< the run's folder name, "trial 3"
  double latencyMs = -1;                                    ///< batch-1 median; -1: not measured
  double mebibytes = -1;                                    ///< the exported file; -1: not measured
  double score = std::numeric_limits<double>::quiet_NaN();  ///< the headline figure
  QColor color;
};

class CostPlot : public QWidget {
  Q_OBJECT

 public:
  explicit CostPlot(QWidget* parent = nullptr);

  /// Draws `points`; `figure` says what the score is and which way it is better.
  void setPoints(QVector<CostPlotPoint> points, const task::FigureSpec& figure);
  QCustomPlot* plot() const { return m_plot; }
  /// The names of the points on the front, by rising cost (for tests and the tooltip).
  QStringList frontNames() const { return m_front; }
  /// A latency limit (a sweep's max_latency_ms) drawn on the latency axis; 0: none. Takes effect
  /// at the next setPoints().
  void setLimit(double latencyMs) { m_limitMs = latencyMs; }
  /// "latency" or "size": the cost on the x axis.
  QString costAxis() const;

 private:
  void draw();

  QComboBox* m_axis;
  QCustomPlot* m_plot;
  QLabel* m_note;
  QVector<CostPlotPoint> m_points;
  task::FigureSpec m_figure;
  QStringList m_front;
  double m_limitMs = 0;
};

}  // namespace netsmith::ui
