#include "monitor/run_history.h"

#include <QDir>
#include <QFileInfo>
#include <QHash>
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>

#include "common/error.h"
#include "common/file_util.h"
#include "run/run_layout.h"

namespace netsmith::ui {

namespace {

/// Every leaf of a JSON value by its dotted path ("train.optimizer.lr"); arrays are leaves.
void flatten(const Json& v, const std::string& path, std::map<std::string, Json>& out) {
  if (v.is_object() && !v.empty()) {
    for (auto it = v.begin(); it != v.end(); ++it)
      flatten(it.value(), path.empty() ? it.key() : path + "." + it.key(), out);
  } else {
    out[path] = v;
  }
}

}  // namespace

QColor runColor(const QString& runName) {
  static const QColor palette[] = {
      QColor(23, 190, 207),  QColor(188, 189, 34),  QColor(227, 119, 194), QColor(140, 86, 75),
      QColor(148, 103, 189), QColor(255, 152, 150), QColor(127, 127, 127), QColor(174, 199, 232)};
  return palette[qHash(runName) % 8];
}

QStringList settingDifferences(const Json& a, const Json& b) {
  std::map<std::string, Json> fa, fb;
  flatten(a, "", fa);
  flatten(b, "", fb);
  std::set<std::string> keys;
  for (const auto& [k, v] : fa)
    keys.insert(k);
  for (const auto& [k, v] : fb)
    keys.insert(k);
  // The settings that change results first (optimizer, schedule, epochs and batch, the rest
  // of training, augmentation, model, data); the sweep's own record last.
  const auto rank = [](const std::string& k) {
    static const char* order[] = {
        "train.optimizer", "train.schedule", "train.epochs", "train.batch_size",
        "train.",          "augment",        "model",        "data"};
    if (k.rfind("sweep", 0) == 0) return int(std::size(order)) + 1;
    for (int i = 0; i < int(std::size(order)); ++i)
      if (k.rfind(order[i], 0) == 0) return i;
    return int(std::size(order));
  };
  std::vector<std::string> sorted(keys.begin(), keys.end());
  std::stable_sort(
      sorted.begin(), sorted.end(),
      [&rank](const std::string& x, const std::string& y) { return rank(x) < rank(y); });
  QStringList out;
  for (const auto& k : sorted) {
    if (k == "name") continue;  // the run folder says it
    const auto ia = fa.find(k), ib = fb.find(k);
    const Json va = ia == fa.end() ? Json() : ia->second, vb = ib == fb.end() ? Json() : ib->second;
    if (va == vb) continue;
    auto text = [](const Json& v) {
      if (v.is_null()) return QStringLiteral("(unset)");
      if (v.is_number_float()) return QString::number(v.get<double>(), 'g', 4);  // rounded
      return QString::fromStdString(jsonBrief(v, 60));
    };
    out << QStringLiteral("%1: %2 -> %3").arg(QString::fromStdString(k), text(va), text(vb));
  }
  return out;
}

double RunHistory::bestValFigure(bool higherIsBetter) const {
  double best = std::numeric_limits<double>::quiet_NaN();
  for (double v : epochValFigure)
    if (std::isfinite(v) && (std::isnan(best) || (higherIsBetter ? v > best : v < best))) best = v;
  return best;
}

QString RunHistory::checkpointPath(const QString& file) const {
  return QString::fromStdString(
      run_layout::checkpointIn(dir.toStdString(), file.toUtf8().constData()));
}

QString RunHistory::bestCheckpoint() const {
  for (const char* file : {run_layout::kBest, run_layout::kLast}) {
    const QString name = QString::fromLatin1(file);
    if (checkpoints.contains(name)) return checkpointPath(name);
  }
  return {};
}

RunHistory RunHistory::fromRecord(const run::RunRecord& r) {
  RunHistory out;
  const QString dir = QString::fromStdString(r.dir);
  out.dir = QDir(dir).absolutePath();
  out.name = QFileInfo(out.dir).fileName();
  out.settings = r.settings;
  out.project = QString::fromStdString(r.project);
  // <project>-yyyyMMdd-HHmmss
  out.started = QDateTime::fromString(out.name.right(15), QStringLiteral("yyyyMMdd-HHmmss"));
  out.device = QString::fromStdString(r.device);
  out.durationSeconds = r.durationSeconds;
  out.finishState = QString::fromStdString(r.finishState);
  out.headline = QString::fromStdString(r.headline);
  out.testFigure = r.testFigure();
  out.testSamples = r.testSamples;
  std::string runtime;
  out.deployLatencyMs = r.deployLatencyMs(&runtime);
  out.deployRuntime = QString::fromStdString(runtime);
  out.deployBytes = r.deployBytes();
  // Fractional epochs on the x axis: epoch + (batch + 1) / batches seen in that epoch.
  QHash<qint64, double> batchesIn;
  for (const auto& s : r.steps)
    batchesIn[s.epoch] = std::max(batchesIn.value(s.epoch), double(s.batch) + 1);
  for (const auto& s : r.steps) {
    out.stepIndex.push_back(s.step);
    out.stepEpoch.push_back(double(s.epoch) + (double(s.batch) + 1) / batchesIn.value(s.epoch, 1));
    out.stepSeconds.push_back(s.seconds);
    out.stepLoss.push_back(s.loss);
    out.stepLr.push_back(s.lr);
    out.stepGradNorm.push_back(s.gradNorm);
    out.stepImagesPerSecond.push_back(s.imagesPerSecond);
    out.stepMemoryMiB.push_back(s.memoryBytes / double(1 << 20));
  }
  for (const auto& e : r.epochs) {
    out.epochIndex.push_back(double(e.epoch) + 1);
    out.epochStep.push_back(e.lastStep);
    out.epochSeconds.push_back(e.seconds);
    out.epochTrainLoss.push_back(e.trainLoss);
    out.epochTrainFigure.push_back(e.trainFigure);
    out.epochValLoss.push_back(e.valLoss);
    out.epochValFigure.push_back(e.valFigure);
    out.epochLr.push_back(e.lr);
  }
  for (const auto& c : r.checkpoints)
    out.checkpoints << QString::fromStdString(c);
  return out;
}

bool RunHistory::read(const QString& dir, RunHistory& out, QString* error) {
  const auto record = run::readRunRecord(dir.toStdString());
  if (!record.error.empty()) {
    out = RunHistory();
    if (error) *error = QString::fromStdString(record.error);
    return false;
  }
  out = fromRecord(record);
  if (error && !record.notice.empty()) *error = QString::fromStdString(record.notice);
  return true;
}

QVector<RunHistory> listRuns(const QString& runsRoot, const QString& project, QStringList* errors) {
  QVector<RunHistory> runs;
  for (const auto& dir : run::runFolders(runsRoot.toStdString())) {  // newest first
    RunHistory run;
    QString error;
    if (!RunHistory::read(QString::fromStdString(dir), run, &error)) {
      if (errors) errors->push_back(error);
      continue;
    }
    if (!project.isEmpty() && run.project != project) continue;
    runs.push_back(std::move(run));
  }
  return runs;
}

}  // namespace netsmith::ui
