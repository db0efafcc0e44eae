#pragma once

// A past run of a project, read back from its folder (runs/<name>-<time>/metrics.csv and
// checkpoints/). Plain data: the Runs page lists these, the dashboard overlays them.
#include <QString>
#include <QStringList>
#include <QVector>

namespace netsmith::ui {

struct RunHistory {
  QString name;  ///< the folder name
  QString dir;
  QString project;  ///< project.json's name
  // One entry per training step.
  QVector<double> stepIndex, stepEpoch, stepSeconds, stepLoss;
  // One entry per epoch (epoch is 1-based, as displayed).
  QVector<double> epochIndex, epochStep, epochSeconds, epochTrainLoss, epochTrainAccuracy,
      epochValLoss, epochValAccuracy, epochLr;
  QStringList checkpoints;  ///< file names under checkpoints/, newest first

  int epochs() const { return epochIndex.size(); }
  /// The highest validation accuracy (NaN when none).
  double bestValAccuracy() const;
  /// checkpoints/best.safetensors, else last.safetensors, else empty.
  QString bestCheckpoint() const;
  QString checkpointPath(const QString& file) const;

  /// Reads `dir`; false with `error` naming the file and line when metrics.csv is unreadable.
  static bool read(const QString& dir, RunHistory& out, QString* error = nullptr);
};

/// The runs of `project` under `runsRoot` (folders whose project.json names it), newest first.
QVector<RunHistory> listRuns(const QString& runsRoot, const QString& project,
                             QStringList* errors = nullptr);

}  // namespace netsmith::ui
