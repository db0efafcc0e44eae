#include "monitor/run_history.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTextStream>
#include <cmath>
#include <limits>

namespace netsmith::ui {

namespace {
double number(const QString& text) {
  if (text.isEmpty()) return std::numeric_limits<double>::quiet_NaN();
  bool ok = false;
  const double v = text.toDouble(&ok);
  return ok ? v : std::numeric_limits<double>::quiet_NaN();
}
}  // namespace

double RunHistory::bestValAccuracy() const {
  double best = std::numeric_limits<double>::quiet_NaN();
  for (double v : epochValAccuracy)
    if (std::isfinite(v) && !(v <= best)) best = v;
  return best;
}

QString RunHistory::checkpointPath(const QString& file) const {
  return QDir(dir).filePath(QStringLiteral("checkpoints/") + file);
}

QString RunHistory::bestCheckpoint() const {
  for (const auto& name : {QStringLiteral("best.safetensors"), QStringLiteral("last.safetensors")})
    if (checkpoints.contains(name)) return checkpointPath(name);
  return {};
}

bool RunHistory::read(const QString& dir, RunHistory& out, QString* error) {
  out = RunHistory();
  out.dir = QDir(dir).absolutePath();
  out.name = QFileInfo(out.dir).fileName();
  QFile projectFile(QDir(dir).filePath(QStringLiteral("project.json")));
  if (projectFile.open(QIODevice::ReadOnly))
    out.project = QJsonDocument::fromJson(projectFile.readAll()).object().value("name").toString();

  const QString csvPath = QDir(dir).filePath(QStringLiteral("metrics.csv"));
  QFile csv(csvPath);
  if (!csv.open(QIODevice::ReadOnly | QIODevice::Text)) {
    if (error) *error = csvPath + QStringLiteral(": cannot open");
    return false;
  }
  QTextStream in(&csv);
  const QStringList header = in.readLine().split(QLatin1Char(','));
  auto column = [&](const char* name) { return header.indexOf(QLatin1String(name)); };
  const int kind = column("kind"), epoch = column("epoch"), batch = column("batch"),
            step = column("step"), loss = column("loss"), acc = column("accuracy"),
            lr = column("lr"), valLoss = column("val_loss"), valAcc = column("val_accuracy"),
            seconds = column("seconds");
  if (kind < 0 || epoch < 0 || step < 0 || loss < 0 || valAcc < 0 || seconds < 0) {
    if (error) *error = csvPath + QStringLiteral(":1: not a Netsmith metrics file");
    return false;
  }
  // Per epoch, the batches seen (for fractional epochs on the x axis).
  QVector<int> stepRowEpoch;
  QVector<double> stepRowBatch;
  int lineNo = 1;
  double lastStep = 0, lastSeconds = 0;
  while (!in.atEnd()) {
    const QString line = in.readLine();
    ++lineNo;
    if (line.trimmed().isEmpty()) continue;
    const QStringList f = line.split(QLatin1Char(','));
    if (f.size() != header.size()) {
      if (error)
        *error = QStringLiteral("%1:%2: expected %3 fields, found %4")
                     .arg(csvPath)
                     .arg(lineNo)
                     .arg(header.size())
                     .arg(f.size());
      return false;
    }
    if (f[kind] == QLatin1String("step")) {
      lastStep = number(f[step]);
      lastSeconds = number(f[seconds]);
      out.stepIndex.push_back(lastStep);
      out.stepSeconds.push_back(lastSeconds);
      out.stepLoss.push_back(number(f[loss]));
      stepRowEpoch.push_back(f[epoch].toInt());
      stepRowBatch.push_back(batch >= 0 ? number(f[batch]) : 0);
    } else if (f[kind] == QLatin1String("epoch")) {
      out.epochIndex.push_back(f[epoch].toInt() + 1);
      out.epochStep.push_back(lastStep);
      out.epochSeconds.push_back(lastSeconds);
      out.epochTrainLoss.push_back(number(f[loss]));
      out.epochTrainAccuracy.push_back(acc >= 0 ? number(f[acc]) : NAN);
      out.epochValLoss.push_back(valLoss >= 0 ? number(f[valLoss]) : NAN);
      out.epochValAccuracy.push_back(number(f[valAcc]));
      out.epochLr.push_back(lr >= 0 ? number(f[lr]) : NAN);
    }
  }
  // Fractional epochs: epoch + (batch + 1) / batches in that epoch.
  QHash<int, double> batchesIn;
  for (int i = 0; i < stepRowEpoch.size(); ++i)
    batchesIn[stepRowEpoch[i]] = std::max(batchesIn.value(stepRowEpoch[i]), stepRowBatch[i] + 1);
  out.stepEpoch.resize(stepRowEpoch.size());
  for (int i = 0; i < stepRowEpoch.size(); ++i)
    out.stepEpoch[i] =
        stepRowEpoch[i] + (stepRowBatch[i] + 1) / batchesIn.value(stepRowEpoch[i], 1);

  QDir ckpts(QDir(dir).filePath(QStringLiteral("checkpoints")));
  out.checkpoints = ckpts.entryList({QStringLiteral("*.safetensors")}, QDir::Files, QDir::Time);
  return true;
}

QVector<RunHistory> listRuns(const QString& runsRoot, const QString& project, QStringList* errors) {
  QVector<RunHistory> runs;
  const QDir root(runsRoot);
  for (const auto& info :
       root.entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Time)) {  // newest first
    if (!QFileInfo::exists(QDir(info.filePath()).filePath(QStringLiteral("metrics.csv")))) continue;
    RunHistory run;
    QString error;
    if (!RunHistory::read(info.filePath(), run, &error)) {
      if (errors) errors->push_back(error);
      continue;
    }
    if (!project.isEmpty() && run.project != project) continue;
    runs.push_back(std::move(run));
  }
  return runs;
}

}  // namespace netsmith::ui
