#pragma once

// The dashboard's epoch table: one row per epoch (loss, the task's headline figure on both
// splits, LR, time), the best epoch by the run's monitored metric marked with a star.
#include <QString>
#include <QTreeWidget>

namespace netsmith::run {
struct EpochMetrics;
}

namespace netsmith::ui {

class EpochTable : public QTreeWidget {
  Q_OBJECT

 public:
  explicit EpochTable(QWidget* parent = nullptr);

  /// Forgets every row and the best epoch; the headers say accuracy until a run says more.
  void forgetRun();
  /// The metric that makes an epoch "best" (val_accuracy, val_mae, train_loss...), read from
  /// each epoch as the run reads it (train::metricOf).
  void setMonitor(const QString& metric, bool maximize);
  /// A row for `e`; `figure` is the headline figure the charts draw ("" : accuracy).
  void addEpoch(const run::EpochMetrics& e, const QString& figure);
  /// The row of the best epoch so far (-1: none yet).
  int bestRow() const { return m_bestRow; }
  /// Sizes its columns to their contents and returns the width they need; kLeastWidth is the
  /// least it takes (past it, it scrolls sideways).
  int fitColumns();
  static constexpr int kLeastWidth = 240;

 private:
  void markBest();

  QString m_monitor = QStringLiteral("val_accuracy");
  bool m_maximize = true;
  double m_bestValue = 0;
  int m_bestRow = -1;
};

}  // namespace netsmith::ui
