#include "run/run_records.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>

#include "common/error.h"
#include "common/file_util.h"
#include "common/line_tail.h"
#include "run/run_layout.h"

namespace netsmith::run {

namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t kMaxProjectBytes = std::uint64_t(16) << 20;  // project.json
/// metrics.csv: ~150 bytes a row, so a million steps; a larger file is read no further.
constexpr std::uint64_t kMaxMetricsBytes = std::uint64_t(256) << 20;
constexpr std::size_t kMaxLine = std::size_t(1) << 20;
constexpr std::uint64_t kChunk = std::uint64_t(4) << 20;  // bytes per read of a tail

const double kNaN = std::numeric_limits<double>::quiet_NaN();

/// A number as the writer prints it ("%.9g"); NaN when empty or not a whole number text.
double number(std::string_view text) {
  if (text.empty()) return kNaN;
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  return ec == std::errc() && end == text.data() + text.size() ? v : kNaN;
}

std::int64_t whole(std::string_view text) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  return ec == std::errc() && end == text.data() + text.size() ? v : 0;
}

std::vector<std::string_view> splitFields(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (;;) {
    const auto comma = line.find(',', start);
    out.push_back(line.substr(start, comma == std::string_view::npos ? line.npos : comma - start));
    if (comma == std::string_view::npos) return out;
    start = comma + 1;
  }
}

/// project.json when it is a regular file of a bounded size holding JSON; null otherwise.
Json readSettings(const std::string& path) {
  try {
    const std::string text = readTextFile(path, kMaxProjectBytes);
    checkJsonNesting(text, path);
    return Json::parse(text);
  } catch (const std::exception&) {
    return Json();
  }
}

using Dated = std::vector<std::pair<fs::file_time_type, std::string>>;

/// The names, latest modification first.
std::vector<std::string> newestFirst(Dated found) {
  std::stable_sort(found.begin(), found.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::string> out;
  for (auto& f : found)
    out.push_back(std::move(f.second));
  return out;
}

/// checkpoints/*.safetensors (regular files), newest first.
std::vector<std::string> listCheckpoints(const fs::path& folder) {
  Dated found;
  std::error_code ec;
  if (fs::is_symlink(fs::symlink_status(folder, ec))) return {};
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const auto name = it->path().filename().string();
    if (name.size() < 12 || name.compare(name.size() - 12, 12, ".safetensors") != 0) continue;
    std::error_code e2;
    if (!it->is_regular_file(e2)) continue;
    found.emplace_back(it->last_write_time(e2), name);
  }
  return newestFirst(std::move(found));
}

}  // namespace

struct RunRecordReader::State {
  RunRecord record;
  LineTail metrics, events;
  // metrics.csv's header: the column of each name (-1 when absent); `figure` and `valFigure`
  // are the task's headline figure's.
  bool haveHeader = false;
  int columns = 0;
  int kind = -1, epoch = -1, batch = -1, step = -1, loss = -1, figure = -1, lr = -1, valLoss = -1,
      valFigure = -1, seconds = -1, gradNorm = -1, throughput = -1, memory = -1;
  std::int64_t lineNo = 0;
  double lastStep = 0, lastSeconds = 0;
  bool metricsStopped = false;  // a bad row or the size bound: read no further
  bool caughtUp = true;
  bool listed = false;  // checkpoints/ listed once at least

  explicit State(const std::string& dir)
      : metrics(run_layout::runFile(dir, run_layout::kMetrics), kMaxLine, kChunk),
        events(run_layout::runFile(dir, run_layout::kEvents), kMaxLine, kChunk) {
    record.dir = dir;
    record.name = fs::path(dir).lexically_normal().filename().string();
    if (record.name.empty())
      record.name = fs::path(dir).lexically_normal().parent_path().filename().string();
  }

  void restartMetrics() {
    record.steps.clear();
    record.epochs.clear();
    record.error.clear();
    record.notice.clear();
    haveHeader = false;
    lineNo = 0;
    lastStep = lastSeconds = 0;
    metricsStopped = false;
  }

  void restartEvents() {
    record.epochEvents.clear();
    record.device.clear();
    record.durationSeconds = -1;
    record.finishState.clear();
    record.testFigures.clear();
    record.testSamples = 0;
  }

  void header(const std::string& line) {
    const auto names = splitFields(line);
    columns = static_cast<int>(names.size());
    auto column = [&](std::string_view name) {
      const auto it = std::find(names.begin(), names.end(), name);
      return it == names.end() ? -1 : static_cast<int>(it - names.begin());
    };
    for (const auto& [name, slot] : {std::pair{"kind", &State::kind},
                                     {"epoch", &State::epoch},
                                     {"batch", &State::batch},
                                     {"step", &State::step},
                                     {"loss", &State::loss},
                                     {"lr", &State::lr},
                                     {"val_loss", &State::valLoss},
                                     {"seconds", &State::seconds},
                                     {"grad_norm", &State::gradNorm},
                                     {"images_per_second", &State::throughput},
                                     {"memory_bytes", &State::memory}})
      this->*slot = column(name);
    // The task's headline figure follows the loss, and its validation column is val_<name>.
    record.headline.clear();
    figure = valFigure = -1;
    if (loss >= 0 && loss + 1 < columns) {
      const std::string headline(names[static_cast<std::size_t>(loss + 1)]);
      valFigure = headline.empty() ? -1 : column("val_" + headline);
      if (valFigure >= 0) {
        record.headline = headline;
        figure = loss + 1;
      }
    }
    haveHeader = true;
    if (kind < 0 || epoch < 0 || step < 0 || loss < 0 || valFigure < 0 || seconds < 0) {
      record.error = metrics.path() + ":1: not a Netsmith metrics file";
      metricsStopped = true;
    }
  }

  void row(const std::string& line) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) return;
    const auto f = splitFields(line);
    if (static_cast<int>(f.size()) != columns) {
      record.error = metrics.path() + ":" + std::to_string(lineNo) + ": expected " +
                     std::to_string(columns) + " fields, found " + std::to_string(f.size());
      metricsStopped = true;
      return;
    }
    auto field = [&f](int i) { return i >= 0 ? number(f[static_cast<std::size_t>(i)]) : kNaN; };
    const auto at = [&f](int i) { return f[static_cast<std::size_t>(i)]; };
    if (at(kind) == "step") {
      StepRecord s;
      s.epoch = whole(at(epoch));
      s.batch = batch >= 0 ? whole(at(batch)) : 0;
      s.step = lastStep = field(step);
      s.seconds = lastSeconds = field(seconds);
      s.loss = field(loss);
      s.lr = field(lr);
      s.gradNorm = field(gradNorm);
      s.imagesPerSecond = field(throughput);
      s.memoryBytes = field(memory);
      record.steps.push_back(s);
    } else if (at(kind) == "epoch") {
      EpochRecord e;
      e.epoch = whole(at(epoch));
      e.lastStep = lastStep;
      e.seconds = lastSeconds;
      e.trainLoss = field(loss);
      e.trainFigure = field(figure);
      e.valLoss = field(valLoss);
      e.valFigure = field(valFigure);
      e.lr = field(lr);
      record.epochs.push_back(e);
    }
  }

  /// metrics.csv: up to `budget` bytes, and no further than its bound. True when the record
  /// changed.
  bool readMetrics(std::uint64_t budget) {
    if (metricsStopped) return false;
    const std::uint64_t left = kMaxMetricsBytes - std::min(kMaxMetricsBytes, metrics.offset());
    const bool changed = drain(
        metrics, std::min(budget, left), [this] { restartMetrics(); },
        [this](const std::string& line) {
          ++lineNo;
          if (!haveHeader)
            header(line);
          else
            row(line);
          return !metricsStopped;
        });
    if (!metricsStopped && metrics.offset() >= kMaxMetricsBytes) {
      record.notice = metrics.path() + ": read up to " + std::to_string(kMaxMetricsBytes >> 20) +
                      " MiB (line " + std::to_string(lineNo) + "); the rest is not shown";
      metricsStopped = true;
      caughtUp = true;  // nothing more will be read
    }
    return changed;
  }

  void event(const std::string& line) {
    // Only the events the record keeps are parsed (a run writes one per step).
    const bool epochEnd = line.find("\"event\":\"epoch_end\"") != std::string::npos;
    const bool finished = !epochEnd && line.find("\"event\":\"finished\"") != std::string::npos;
    const bool deviceLog = !epochEnd && !finished && record.device.empty() &&
                           line.find("\"event\":\"log\"") != std::string::npos &&
                           line.find("\"message\":\"device ") != std::string::npos;
    if (!epochEnd && !finished && !deviceLog) return;
    Json e;
    try {
      checkJsonNesting(line, "events.jsonl");
      e = Json::parse(line);
    } catch (const std::exception&) {
      return;  // a line cut short by a kill
    }
    if (!e.is_object()) return;
    const std::string type =
        e.value("event", Json()).is_string() ? e["event"].get<std::string>() : std::string();
    if (type == "epoch_end") {
      record.epochEvents.push_back(std::move(e));
    } else if (type == "finished") {
      if (e.contains("time") && e["time"].is_number())
        record.durationSeconds = e["time"].get<double>();
      record.finishState = e.contains("state") && e["state"].is_string()
                               ? e["state"].get<std::string>()
                               : std::string();
      if (e.contains("test") && e["test"].is_object()) {
        const Json& t = e["test"];
        // The task's figures; the numbers beside them (the loss, and the accuracy a run written
        // before the figures were named still holds) where the figures do not name them.
        if (t.contains("figures") && t["figures"].is_object()) {
          for (const auto& [name, value] : t["figures"].items())
            if (value.is_number()) record.testFigures[name] = value.get<double>();
        }
        for (const auto& [name, value] : t.items())
          if (value.is_number_float()) record.testFigures.emplace(name, value.get<double>());
        if (t.contains("samples") && t["samples"].is_number_integer())
          record.testSamples = t["samples"].get<std::int64_t>();
      }
    } else if (type == "log" && e.contains("message") && e["message"].is_string()) {
      const std::string message = e["message"].get<std::string>();
      if (message.rfind("device ", 0) == 0) record.device = message.substr(7);
    }
  }

  bool readEvents(std::uint64_t budget) {
    return drain(
        events, budget, [this] { restartEvents(); },
        [this](const std::string& line) {
          event(line);
          return true;
        });
  }

  /// Hands `tail`'s new whole lines to `take` (false: read no further), at most `budget` bytes;
  /// `restart` when the file started over. Clears `caughtUp` when the budget ran out. True
  /// when a line was read or the file restarted.
  template <typename Restart, typename Take>
  bool drain(LineTail& tail, std::uint64_t budget, Restart restart, Take take) {
    bool changed = false;
    while (budget > 0) {
      const auto before = tail.offset();
      tail.setMaxBytesPerRead(std::min(kChunk, budget));
      const auto lines = tail.readNew();
      if (tail.restarted()) {
        restart();
        changed = true;
      }
      for (const auto& line : lines) {
        changed = true;
        if (!take(line)) return changed;
      }
      const auto read = tail.offset() - before;
      if (read == 0) return changed;
      budget -= std::min(read, budget);
    }
    caughtUp = false;
    return changed;
  }
};

Json readDeployRecord(const std::string& runDir) {
  Json deploy = readSettings(run_layout::runFile(runDir, run_layout::kDeploy));
  return deploy.is_object() ? deploy : Json();
}

double deployLatencyMs(const Json& deploy, std::string* runtime) {
  if (!deploy.is_object() || !deploy.contains("runtimes") || !deploy["runtimes"].is_array())
    return -1;
  for (const auto& r : deploy["runtimes"]) {
    if (!r.is_object() || r.contains("error") || !r.contains("batch1_p50_ms") ||
        !r["batch1_p50_ms"].is_number())
      continue;
    if (runtime) *runtime = r.value("runtime", std::string());
    return r["batch1_p50_ms"].get<double>();
  }
  return -1;
}

std::int64_t deployBytes(const Json& deploy) {
  return deploy.is_object() && deploy.contains("file_bytes") &&
                 deploy["file_bytes"].is_number_integer()
             ? deploy["file_bytes"].get<std::int64_t>()
             : -1;
}

RunRecordReader::RunRecordReader(std::string runDir) : m(std::make_unique<State>(runDir)) {}
RunRecordReader::~RunRecordReader() = default;
RunRecordReader::RunRecordReader(RunRecordReader&&) noexcept = default;
RunRecordReader& RunRecordReader::operator=(RunRecordReader&&) noexcept = default;

bool RunRecordReader::update(std::uint64_t maxBytes) {
  m->caughtUp = true;
  bool changed = false;
  auto& r = m->record;
  if (r.settings.is_null()) {
    r.settings = readSettings((fs::path(r.dir) / "project.json").string());
    if (r.settings.is_object() && r.settings.contains("name") && r.settings["name"].is_string())
      r.project = r.settings["name"].get<std::string>();
    changed = changed || !r.settings.is_null();
  }
  changed = m->readMetrics(maxBytes) || changed;
  changed = m->readEvents(maxBytes) || changed;
  // checkpoints/ is listed again only when the records moved, not on every poll of a quiet
  // run: a checkpoint's own event line follows its file into events.jsonl.
  if (changed || !m->listed) {
    m->listed = true;
    auto checkpoints = listCheckpoints(run_layout::checkpointIn(r.dir));
    if (checkpoints != r.checkpoints) {
      r.checkpoints = std::move(checkpoints);
      changed = true;
    }
  }
  // deploy.json, written whole (atomically) once measured, perhaps long after the run ended.
  if (r.deploy.is_null() || changed) {
    Json deploy = readDeployRecord(r.dir);
    if (deploy != r.deploy) {
      r.deploy = std::move(deploy);
      changed = true;
    }
  }
  // The metrics file must exist to be a run at all (a bad row or the size bound keeps its
  // own message). Once its header is read, a miss seen on an earlier poll is over.
  if (!m->metricsStopped) {
    std::string error;
    try {
      if (!m->haveHeader) requireRegularFile(m->metrics.path());  // there, header not yet
    } catch (const Error& e) {
      error = printable(e.what());
    }
    changed = changed || error != r.error;
    r.error = std::move(error);
  }
  return changed;
}

bool RunRecordReader::caughtUp() const {
  return m->caughtUp;
}

const RunRecord& RunRecordReader::record() const {
  return m->record;
}

const std::string& RunRecordReader::dir() const {
  return m->record.dir;
}

RunRecord readRunRecord(const std::string& runDir) {
  RunRecordReader reader(runDir);
  // The size bounds end this: metrics.csv stops at 256 MiB; events.jsonl at 1 GiB.
  for (int i = 0; i < 16; ++i) {
    reader.update();
    if (reader.caughtUp()) break;
  }
  return reader.record();
}

std::vector<std::string> runFolders(const std::string& root) {
  Dated found;
  std::error_code ec;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code e2;
    if (!run_layout::isRunFolder(it->path().string())) continue;
    found.emplace_back(it->last_write_time(e2), it->path().string());
  }
  return newestFirst(std::move(found));
}

std::string resumeRunFolder(const std::string& checkpoint) {
  std::error_code ec;
  const auto file = fs::absolute(checkpoint, ec).lexically_normal();
  if (ec) return {};
  const std::string run = run_layout::runOfCheckpoint(file.string());
  return !run.empty() && run_layout::isRunFolder(run) ? run : std::string();
}

}  // namespace netsmith::run
