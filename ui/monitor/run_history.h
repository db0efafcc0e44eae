#pragma once

// A past run of a project as the studio draws it: core's run record (run/run_records.h, the
// one reader of run folders) in Qt's containers. Plain data: the Runs page lists these, the
// dashboard overlays them.
#include <QColor>
#include <QDateTime>
#include <QString>
#include <QStringList>
#include <QVector>

#include "common/json.h"
#include "run/run_records.h"

namespace netsmith::ui {

struct RunHistory {
  QString name;  ///< the folder name
  QString dir;
  QString project;  ///< project.json's name
  // One entry per training step.
  QVector<double> stepIndex, stepEpoch, stepSeconds, stepLoss, stepLr, stepGradNorm,
      stepImagesPerSecond, stepMemoryMiB;
  // One entry per epoch (epoch is 1-based, as displayed).
  // The figure columns are the task's headline figure (`headline`), as metrics.csv names it.
  QVector<double> epochIndex, epochStep, epochSeconds, epochTrainLoss, epochTrainFigure,
      epochValLoss, epochValFigure, epochLr;
  QString headline;  ///< "accuracy", "mae": the task's headline figure (run::RunRecord::headline)
  QStringList checkpoints;  ///< file names under checkpoints/, newest first
  Json settings;            ///< the project as the run used it (project.json)
  // From events.jsonl: where and when it ran, how it ended.
  QDateTime started;            ///< from the folder's name (<name>-yyyyMMdd-HHmmss)
  double durationSeconds = -1;  ///< the finished event's time; -1 while unknown
  QString device;               ///< "cpu, 2 compute threads, 1 loader thread"
  QString finishState;          ///< "completed", "stopped", "failed"; "" when unfinished
  double testFigure = -1;       ///< the headline on the test split; -1: no test figure
  qint64 testSamples = 0;
  // From deploy.json (export/run_deploy.h): what its model costs deployed; -1 unmeasured.
  double deployLatencyMs = -1;  ///< batch-1 median in `deployRuntime`
  qint64 deployBytes = -1;      ///< the exported file's size
  QString deployRuntime;        ///< "ONNX Runtime 1.31.1"

  int epochs() const { return epochIndex.size(); }
  /// The best validation headline figure, the highest or (`higherIsBetter` false) the lowest
  /// (NaN when none).
  double bestValFigure(bool higherIsBetter) const;
  /// checkpoints/best.safetensors, else last.safetensors, else empty.
  QString bestCheckpoint() const;
  QString checkpointPath(const QString& file) const;

  static RunHistory fromRecord(const run::RunRecord& record);
  /// Reads `dir`; false with `error` naming the file and line when metrics.csv is unreadable.
  static bool read(const QString& dir, RunHistory& out, QString* error = nullptr);
};

/// The colour of a run on every chart and in the Runs table (from its name, so it stays).
QColor runColor(const QString& runName);

/// The settings two runs differ in, one line each: "train.optimizer.lr: 0.001 -> 0.01"
/// (a missing key reads "(unset)"), what changes results first (optimizer, schedule, epochs,
/// batch, then the rest) and the sweep's record last; numbers to 4 significant digits.
QStringList settingDifferences(const Json& a, const Json& b);

/// The runs of `project` under `runsRoot` (folders whose project.json names it), newest first.
QVector<RunHistory> listRuns(const QString& runsRoot, const QString& project,
                             QStringList* errors = nullptr);

}  // namespace netsmith::ui
