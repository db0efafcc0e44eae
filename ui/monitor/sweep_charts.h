#pragma once

// The Experiments page's charts of a sweep: a parallel-coordinates plot of every trial's
// settings against the objective (coloured low to high, styled by how the trial ended), a
// scatter of the objective against one setting, chosen above it, and (a sweep that measures
// its trials deployed: sweep.deploy_bench, sweep.max_latency_ms) the objective against batch-1
// latency or file size with the Pareto front (monitor/cost_plot.h).
#include <QWidget>

class QComboBox;
class QCustomPlot;

namespace netsmith::ui {

class CostPlot;
class SweepFollower;

class SweepCharts : public QWidget {
  Q_OBJECT

 public:
  /// Draws the sweep that `sweep` follows.
  explicit SweepCharts(const SweepFollower* sweep, QWidget* parent = nullptr);

  /// Draws the sweep again (its record or spec changed); the scatter's list of settings follows
  /// the spec, keeping the setting chosen.
  void redraw();
  QCustomPlot* parallelPlot() const { return m_parallel; }
  QCustomPlot* scatterPlot() const { return m_scatter; }
  CostPlot* costPlot() const { return m_cost; }

 private:
  void listSettings();
  void drawParallel();
  void drawScatter();
  void drawCosts();

  const SweepFollower* m_sweep;
  QCustomPlot* m_parallel;
  QCustomPlot* m_scatter;
  QComboBox* m_scatterParam;
  CostPlot* m_cost;
  bool m_scatterLegendPlaced = false;
};

}  // namespace netsmith::ui
