#include "monitor/run_history.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QTextStream>
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>

#include "common/error.h"
#include "common/file_util.h"

namespace netsmith::ui {

namespace {
double number(const QString& text) {
  if (text.isEmpty()) return std::numeric_limits<double>::quiet_NaN();
  bool ok = false;
  const double v = text.toDouble(&ok);
  return ok ? v : std::numeric_limits<double>::quiet_NaN();
}

constexpr qint64 kMaxProjectBytes = 16 << 20;  // a run's project.json
constexpr qint64 kEventsWindow = 64 << 10;     // events.jsonl is read at its two ends only
/// metrics.csv: ~150 bytes a row, so a million steps; a larger file is read no further.
constexpr qint64 kMaxMetricsBytes = qint64(256) << 20;

/// Opens a file of a run folder for reading: only a regular file (a FIFO planted there would
/// block the studio, /dev/zero fill its memory). False, with the reason in `error`, otherwise.
bool openRegular(QFile& f, const QString& path, QString* error = nullptr) {
  try {
    requireRegularFile(path.toStdString());
  } catch (const Error& e) {
    if (error) *error = QString::fromStdString(printable(e.what()));
    return false;
  }
  f.setFileName(path);
  if (f.open(QIODevice::ReadOnly)) return true;
  if (error) *error = path + QStringLiteral(": cannot open");
  return false;
}

/// A JSON file from a run folder, bounded in size and depth; null when it cannot be read.
Json readBoundedJson(const QString& path) {
  QFile f;
  if (!openRegular(f, path) || f.size() > kMaxProjectBytes) return Json();
  const std::string text = f.readAll().toStdString();
  try {
    checkJsonNesting(text, path.toStdString());
    return Json::parse(text);
  } catch (const std::exception&) {
    return Json();
  }
}

/// The complete lines of `bytes` parsed as JSON objects (others skipped).
std::vector<Json> jsonLines(const QByteArray& bytes) {
  std::vector<Json> out;
  for (const QByteArray& line : bytes.split('\n')) {
    if (line.isEmpty() || line.front() != '{' || line.back() != '}') continue;
    const std::string text = line.toStdString();
    try {
      checkJsonNesting(text, "events.jsonl");
      Json j = Json::parse(text);
      if (j.is_object()) out.push_back(std::move(j));
    } catch (const std::exception&) {
    }
  }
  return out;
}

/// Device, duration, end state and test figure from the first and last 64 KiB of events.jsonl.
void readEvents(const QString& path, RunHistory& out) {
  QFile f;
  if (!openRegular(f, path)) return;
  const QByteArray head = f.read(kEventsWindow);
  QByteArray tail;
  if (f.size() > kEventsWindow) {
    f.seek(std::max<qint64>(kEventsWindow, f.size() - kEventsWindow));
    tail = f.read(kEventsWindow);
  }
  const std::vector<Json> first = jsonLines(head);
  for (const Json& e : first) {
    const std::string message = e.value("message", std::string());
    if (e.value("event", std::string()) == "log" && message.rfind("device ", 0) == 0) {
      out.device = QString::fromStdString(message.substr(7));
      break;
    }
  }
  const std::vector<Json> last = jsonLines(tail);
  for (const auto* part : {&first, &last})
    for (const Json& e : *part) {
      if (e.value("event", std::string()) != "finished") continue;
      if (e.contains("time") && e["time"].is_number())
        out.durationSeconds = e["time"].get<double>();
      out.finishState = QString::fromStdString(e.value("state", std::string()));
      if (e.contains("test") && e["test"].is_object()) {
        const Json& t = e["test"];
        if (t.contains("accuracy") && t["accuracy"].is_number())
          out.testAccuracy = t["accuracy"].get<double>();
        if (t.contains("samples") && t["samples"].is_number_integer())
          out.testSamples = t["samples"].get<qint64>();
      }
    }
}

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
  out.settings = readBoundedJson(QDir(dir).filePath(QStringLiteral("project.json")));
  if (out.settings.is_object() && out.settings.contains("name") && out.settings["name"].is_string())
    out.project = QString::fromStdString(out.settings["name"].get<std::string>());
  // <project>-yyyyMMdd-HHmmss
  out.started = QDateTime::fromString(out.name.right(15), QStringLiteral("yyyyMMdd-HHmmss"));
  readEvents(QDir(dir).filePath(QStringLiteral("events.jsonl")), out);

  const QString csvPath = QDir(dir).filePath(QStringLiteral("metrics.csv"));
  QFile csv;
  if (!openRegular(csv, csvPath, error)) return false;
  QTextStream in(&csv);
  const QStringList header = in.readLine().split(QLatin1Char(','));
  auto column = [&](const char* name) { return header.indexOf(QLatin1String(name)); };
  const int kind = column("kind"), epoch = column("epoch"), batch = column("batch"),
            step = column("step"), loss = column("loss"), acc = column("accuracy"),
            lr = column("lr"), valLoss = column("val_loss"), valAcc = column("val_accuracy"),
            seconds = column("seconds"), gradNorm = column("grad_norm"),
            throughput = column("images_per_second"), memory = column("memory_bytes");
  auto field = [](const QStringList& f, int i) {
    return i >= 0 ? number(f[i]) : std::numeric_limits<double>::quiet_NaN();
  };
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
    if (csv.pos() > kMaxMetricsBytes) {
      if (error)
        *error = csvPath + QStringLiteral(": read up to %1 MiB (line %2); the rest is not shown")
                               .arg(kMaxMetricsBytes >> 20)
                               .arg(lineNo);
      break;
    }
    const QString line = in.readLine(4096);  // a row is ~150 characters
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
      out.stepLr.push_back(field(f, lr));
      out.stepGradNorm.push_back(field(f, gradNorm));
      out.stepImagesPerSecond.push_back(field(f, throughput));
      out.stepMemoryMiB.push_back(field(f, memory) / double(1 << 20));
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
