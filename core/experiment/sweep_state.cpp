#include "experiment/sweep_state.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <type_traits>

#include "common/error.h"
#include "common/file_util.h"

namespace netsmith::experiment {

namespace {

constexpr std::uint64_t kMaxStateBytes = 64ull << 20;
constexpr std::int64_t kMaxTrials = 100000;

const std::pair<TrialStatus, const char*> kStatusNames[] = {{TrialStatus::Running, "running"},
                                                            {TrialStatus::Paused, "paused"},
                                                            {TrialStatus::Completed, "completed"},
                                                            {TrialStatus::Stopped, "stopped"},
                                                            {TrialStatus::Failed, "failed"}};

Json scoreJson(double v) {
  return std::isfinite(v) ? Json(v) : Json();
}

/// Reads `j[key]` as T, or throws naming the place.
template <typename T>
T field(const Json& j, const char* key, const std::string& at, bool required, T fallback) {
  if (!j.contains(key)) {
    if (required) throw Error(at + "." + key + ": missing");
    return fallback;
  }
  const Json& v = j.at(key);
  bool ok = false;
  if constexpr (std::is_same_v<T, bool>)
    ok = v.is_boolean();
  else if constexpr (std::is_integral_v<T>)  // whole numbers only: no float converted
    ok = v.is_number_integer() &&
         (v.is_number_unsigned() ? v.get<std::uint64_t>() <= std::uint64_t(1) << 53
                                 : std::llabs(v.get<std::int64_t>()) <= std::int64_t(1) << 53);
  else if constexpr (std::is_floating_point_v<T>)
    ok = v.is_number();
  else if constexpr (std::is_same_v<T, std::string>)
    ok = v.is_string();
  else {  // a list of strings
    ok = v.is_array() && v.size() <= 64;
    for (const auto& e : v)
      ok = ok && e.is_string();
  }
  if (!ok) throw Error(at + "." + key + ": has the wrong type or size (" + jsonTypeName(v) + ")");
  return v.get<T>();
}

Trial trialFromJson(const Json& j, const std::string& at) {
  if (!j.is_object()) throw Error(at + ": must be an object");
  Trial t;
  t.id = field<std::int64_t>(j, "id", at, true, 0);
  if (t.id < 0 || t.id >= kMaxTrials) throw Error(at + ".id: out of range");
  const Json params = j.value("params", Json::object());
  if (!params.is_object()) throw Error(at + ".params: must be an object");
  for (const auto& [path, value] : params.items())
    t.params[path] = value;
  const auto status = field<std::string>(j, "status", at, true, "");
  bool known = false;
  for (const auto& [s, name] : kStatusNames) {
    if (status == name) {
      t.status = s;
      known = true;
    }
  }
  if (!known) throw Error(at + ".status: unknown status \"" + status + "\"");
  t.maxEpochs = field<std::int64_t>(j, "max_epochs", at, true, 1);
  if (t.maxEpochs < 1 || t.maxEpochs > 100000) throw Error(at + ".max_epochs: out of range");
  const Json scores = j.value("scores", Json::object());
  if (!scores.is_object()) throw Error(at + ".scores: must be an object of epoch: score");
  for (const auto& [epoch, v] : scores.items()) {
    std::int64_t e = 0;
    try {
      std::size_t used = 0;
      e = std::stoll(epoch, &used);
      if (used != epoch.size()) throw std::invalid_argument(epoch);
    } catch (const std::exception&) {
      throw Error(at + ".scores: \"" + epoch + "\" is not an epoch number");
    }
    if (e < 1 || e > t.maxEpochs) throw Error(at + ".scores." + epoch + ": out of range");
    if (!v.is_null() && !v.is_number()) throw Error(at + ".scores." + epoch + ": not a number");
    t.scores[e] = v.is_number() ? v.get<double>() : std::numeric_limits<double>::quiet_NaN();
  }
  t.epochsDone = t.scores.empty() ? 0 : t.scores.rbegin()->first;
  t.runDir = field<std::string>(j, "run_dir", at, false, "");
  // A trial's run lies in its own folder: trials/tNNNN/NAME, nothing else (a record from
  // elsewhere must not point the sweep at files outside it).
  if (!t.runDir.empty()) {
    const std::string own = trialFolderName(t.id) + "/";
    const std::string name = t.runDir.substr(std::min(own.size(), t.runDir.size()));
    if (t.runDir.rfind(own, 0) != 0 || name.empty() || name == "." || name == ".." ||
        name.find('/') != std::string::npos || controlCharacterAt(name) != std::string::npos)
      throw Error(at + ".run_dir: \"" + printable(t.runDir.substr(0, 200)) +
                  "\" is not a folder of this trial (" + own + "NAME)");
  }
  t.error = field<std::string>(j, "error", at, false, "");
  t.note = field<std::string>(j, "note", at, false, "");
  t.seconds = field<double>(j, "seconds", at, false, 0.0);
  t.segments = field<std::int64_t>(j, "segments", at, false, 0);
  t.segmentStarted = field<double>(j, "segment_started", at, false, 0.0);
  t.latencyMs = field<double>(j, "latency_ms", at, false, -1.0);
  t.fileBytes = field<std::int64_t>(j, "file_bytes", at, false, -1);
  return t;
}

}  // namespace

std::string trialStatusName(TrialStatus s) {
  for (const auto& [status, name] : kStatusNames)
    if (status == s) return name;
  return "running";
}

double Trial::objective() const {
  return scores.empty() ? std::numeric_limits<double>::quiet_NaN() : scores.rbegin()->second;
}

Json sweepStateToJson(const SweepState& s) {
  Json trials = Json::array();
  for (const auto& t : s.trials) {
    Json scores = Json::object();
    for (const auto& [e, v] : t.scores)
      scores[std::to_string(e)] = scoreJson(v);
    Json tj{{"id", t.id},
            {"params", assignmentJson(t.params)},
            {"status", trialStatusName(t.status)},
            {"max_epochs", t.maxEpochs},
            {"epochs_done", t.epochsDone},
            {"objective", scoreJson(t.objective())},
            {"scores", scores},
            {"seconds", t.seconds},
            {"segments", t.segments},
            {"segment_started", t.segmentStarted}};
    if (!t.runDir.empty()) tj["run_dir"] = t.runDir;
    if (!t.error.empty()) tj["error"] = t.error;
    if (!t.note.empty()) tj["note"] = t.note;
    if (t.latencyMs >= 0) tj["latency_ms"] = t.latencyMs;
    if (t.fileBytes >= 0) tj["file_bytes"] = t.fileBytes;
    trials.push_back(tj);
  }
  return Json{{"format", "netsmith-sweep"},
              {"version", 1},
              {"name", s.name},
              {"created", s.created},
              {"base_project", s.baseProject},
              {"parallel", s.parallel},
              {"threads_per_trial", s.threadsPerTrial},
              {"sampler_lag", s.samplerLag},
              {"train_args", s.trainArgs},
              {"elapsed_seconds", s.elapsedSeconds},
              {"finished", s.finished},
              {"trials", trials}};
}

SweepState sweepStateFromJson(const Json& j, const std::string& source) {
  if (!j.is_object() || !j.contains("format") || j["format"] != "netsmith-sweep")
    throw Error(source + ": not a Netsmith sweep record (no \"format\": \"netsmith-sweep\")");
  if (!j.contains("version") || j["version"] != 1)
    throw Error(source + ": sweep record version " + j.value("version", Json()).dump() +
                " is not one this Netsmith reads (1)");
  SweepState s;
  s.name = field<std::string>(j, "name", source, true, "");
  s.created = field<std::string>(j, "created", source, false, "");
  s.baseProject = field<std::string>(j, "base_project", source, false, "");
  s.parallel = field<std::int64_t>(j, "parallel", source, true, 1);
  if (s.parallel < 1 || s.parallel > 64) throw Error(source + ".parallel: must be 1 to 64");
  const auto threads = field<std::int64_t>(j, "threads_per_trial", source, false, 1);
  if (threads < 1 || threads > 4096) throw Error(source + ".threads_per_trial: must be 1 to 4096");
  s.threadsPerTrial = static_cast<int>(threads);
  s.samplerLag = field<std::int64_t>(j, "sampler_lag", source, false, s.parallel);
  if (s.samplerLag < 1 || s.samplerLag > 64) throw Error(source + ".sampler_lag: must be 1 to 64");
  s.trainArgs = field<std::vector<std::string>>(j, "train_args", source, false, {});
  for (const auto& a : s.trainArgs) {
    static const char* const kAllowed[] = {"--limit-train", "--limit-val", "--device",
                                           "--init-from"};
    bool flag = a.rfind("--", 0) == 0, ok = !flag;
    for (const char* k : kAllowed)
      ok = ok || a == k;
    if (!ok) throw Error(source + ".train_args: \"" + a + "\" is not a flag a sweep passes on");
  }
  s.elapsedSeconds = field<double>(j, "elapsed_seconds", source, false, 0.0);
  s.finished = field<bool>(j, "finished", source, false, false);
  if (!j.contains("trials") || !j["trials"].is_array())
    throw Error(source + ".trials: missing or not a list");
  if (j["trials"].size() > std::size_t(kMaxTrials)) throw Error(source + ".trials: too many");
  for (std::size_t i = 0; i < j["trials"].size(); ++i) {
    auto t = trialFromJson(j["trials"][i], source + ".trials[" + std::to_string(i) + "]");
    if (t.id != static_cast<std::int64_t>(i))
      throw Error(source + ".trials[" + std::to_string(i) +
                  "].id: trials must be numbered 0, 1, ...");
    s.trials.push_back(std::move(t));
  }
  return s;
}

SweepState parseSweepState(const std::string& text, const std::string& source) {
  if (text.size() > kMaxStateBytes) throw Error(source + ": larger than a sweep record can be");
  checkJsonNesting(text, source);
  Json j;
  try {
    j = Json::parse(text);
  } catch (const std::exception& e) {
    throw Error(source + ": not valid JSON (" + e.what() + ")");
  }
  return sweepStateFromJson(j, source);
}

SweepState loadSweepState(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / "sweep.json").string();
  if (!std::filesystem::exists(path))
    throw Error(dir + ": not a sweep folder (no sweep.json in it)");
  return parseSweepState(readTextFile(path, kMaxStateBytes), path);
}

void saveSweepState(const std::string& dir, const SweepState& s) {
  writeFileAtomically((std::filesystem::path(dir) / "sweep.json").string(),
                      sweepStateToJson(s).dump(1) + "\n");
}

std::string trialFolderName(std::int64_t id) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "t%04lld", static_cast<long long>(id));
  return std::string("trials/") + buf;
}

Json withAbsolutePaths(Json project, const std::string& baseDir) {
  namespace fs = std::filesystem;
  const auto absolute = [&](Json& v) {
    if (!v.is_string()) return;
    fs::path p(v.get<std::string>());
    if (p.is_relative()) v = (fs::absolute(fs::path(baseDir)) / p).lexically_normal().string();
  };
  if (project.contains("init_from")) absolute(project["init_from"]);
  if (!project.contains("data") || !project["data"].is_object()) return project;
  for (const char* split : {"train", "validation", "test"}) {
    if (!project["data"].contains(split) || !project["data"][split].is_object()) continue;
    Json& source = project["data"][split];
    for (const char* key : {"images", "labels", "root", "manifest"})
      if (source.contains(key)) absolute(source[key]);
    if (source.contains("files") && source["files"].is_array())
      for (auto& f : source["files"])
        absolute(f);
  }
  return project;
}

bool sweepInUse(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / "sweep.lock").string();
  // Not created, not followed through a link, not waited on (a FIFO planted there).
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st {};
  bool inUse = false;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    // A shared lock is refused only while a sweep holds its exclusive one.
    if (::flock(fd, LOCK_SH | LOCK_NB) == 0)
      ::flock(fd, LOCK_UN);
    else
      inUse = errno == EWOULDBLOCK;
  }
  ::close(fd);
  return inUse;
}

}  // namespace netsmith::experiment
