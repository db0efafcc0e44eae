#include "run/run_writer.h"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <regex>

#include "common/error.h"
#include "common/file_util.h"
#include "netsmith/version.h"
#include "run/run_layout.h"

namespace netsmith::run {

namespace fs = std::filesystem;

namespace {

/// train.log, opened without following a link (spdlog's own file sink opens by name).
class LogFileSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit LogFileSink(std::FILE* file) : m_file(file) {}
  ~LogFileSink() override { std::fclose(m_file); }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t line;
    formatter_->format(msg, line);
    std::fwrite(line.data(), 1, line.size(), m_file);
  }
  void flush_() override { std::fflush(m_file); }

 private:
  std::FILE* m_file;
};

std::string csvNumber(double v) {
  if (!std::isfinite(v)) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

}  // namespace

std::string createRunFolder(const std::string& root, const std::string& projectName,
                            const Json& projectSnapshot) {
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec) throw Error(root + ": cannot create the runs folder (" + ec.message() + ")");
  const std::string base =
      (fs::path(root) / (run_layout::runNamePrefix(projectName) + localTimeText("%Y%m%d-%H%M%S")))
          .string();
  std::string dir = base;
  for (int i = 2; fs::exists(dir); ++i)
    dir = base + "-" + std::to_string(i);
  if (!fs::create_directory(dir, ec) || ec) {
    throw Error(dir + ": cannot create the run folder (" +
                (ec ? ec.message() : std::string("it exists")) + ")");
  }
  for (const char* sub : {run_layout::kCheckpoints, run_layout::kExports})
    makeRealFolder(run_layout::runFile(dir, sub));
  writeFileAtomically(run_layout::runFile(dir, run_layout::kProject),
                      projectSnapshot.dump(2) + "\n");
  return dir;
}

RunWriter::RunWriter(const std::string& runDir, const std::string& headline)
    : m_dir(runDir), m_headline(headline.empty() ? "figure" : headline) {
  const fs::path dir(runDir);
  m_metrics = fopenAppendNoFollow(run_layout::runFile(runDir, run_layout::kMetrics));
  // A new file, or one a killed run left empty, gets the header.
  struct stat st {};
  const bool newMetrics = ::fstat(fileno(m_metrics), &st) == 0 && st.st_size == 0;
  try {
    m_events = fopenAppendNoFollow(run_layout::runFile(runDir, run_layout::kEvents));
  } catch (...) {
    std::fclose(m_metrics);
    throw;
  }
  const std::string header = "kind,epoch,batch,step,loss," + m_headline +
                             ",lr,grad_norm,images_per_second,memory_kind,memory_bytes,val_loss,"
                             "val_" +
                             m_headline + ",seconds\n";
  if (newMetrics && (std::fputs(header.c_str(), m_metrics) < 0 || std::fflush(m_metrics) != 0)) {
    const std::string why = std::strerror(errno);
    std::fclose(m_metrics);
    std::fclose(m_events);
    throw IoError(run_layout::runFile(runDir, run_layout::kMetrics) +
                  ": cannot write the header (" + why + ")");
  }
  std::FILE* log = nullptr;
  try {
    log = fopenAppendNoFollow(run_layout::runFile(runDir, run_layout::kLog));
  } catch (...) {
    std::fclose(m_metrics);
    std::fclose(m_events);
    throw;
  }
  m_log = std::make_shared<spdlog::logger>("run", std::make_shared<LogFileSink>(log));
  m_log->set_pattern("%Y-%m-%d %H:%M:%S.%e %l %v");
  m_log->flush_on(spdlog::level::info);
}

RunWriter::~RunWriter() {
  if (m_metrics) std::fclose(m_metrics);
  if (m_events) std::fclose(m_events);
}

std::string RunWriter::failure() const {
  std::lock_guard<std::mutex> lock(m_failureMutex);
  return m_failure;
}

void RunWriter::check(std::FILE* file, const char* name, bool ok) {
  if (writeFaultForTesting((fs::path(m_dir) / name).string())) {
    ok = false;
    errno = ENOSPC;
  }
  if (ok && std::ferror(file) == 0) return;
  const int err = errno;
  std::lock_guard<std::mutex> lock(m_failureMutex);
  if (m_failure.empty())
    m_failure = (fs::path(m_dir) / name).string() + ": " + std::strerror(err ? err : EIO);
  std::clearerr(file);
}

void RunWriter::onEvent(const TrainingEvent& e) {
  errno = 0;
  const bool wrote = std::fputs((e.toJson().dump() + "\n").c_str(), m_events) >= 0;
  check(m_events, "events.jsonl", wrote && std::fflush(m_events) == 0);
  switch (e.type) {
    case EventType::BatchEnd: {
      const auto& b = e.batch;
      const int n = std::fprintf(m_metrics, "step,%lld,%lld,%lld,%s,%s,%s,%s,%s,%s,%lld,,,%s\n",
                                 (long long)b.epoch, (long long)b.batch, (long long)b.step,
                                 csvNumber(b.loss).c_str(), csvNumber(b.headlineValue).c_str(),
                                 csvNumber(b.lr).c_str(), csvNumber(b.gradNorm).c_str(),
                                 csvNumber(b.imagesPerSecond).c_str(), b.memory.kind.c_str(),
                                 (long long)b.memory.bytes, csvNumber(e.time).c_str());
      check(m_metrics, "metrics.csv", n >= 0);
      break;
    }
    case EventType::EpochEnd: {
      const auto& m = e.epoch;
      const double nan = std::nan("");
      const auto figure = [this](const std::map<std::string, double>& figures) {
        const auto it = figures.find(m_headline);
        return it == figures.end() ? std::nan("") : it->second;
      };
      std::fprintf(m_metrics, "epoch,%lld,,,%s,%s,%s,,,,,%s,%s,%s\n", (long long)m.epoch,
                   csvNumber(m.trainLoss).c_str(), csvNumber(figure(m.trainFigures)).c_str(),
                   csvNumber(m.lr).c_str(),
                   csvNumber(m.hasValidation ? m.validation.loss : nan).c_str(),
                   csvNumber(m.hasValidation ? figure(m.validation.figures) : nan).c_str(),
                   csvNumber(m.seconds).c_str());
      check(m_metrics, "metrics.csv", std::fflush(m_metrics) == 0);
      m_log->info(describeEpoch(m));
      break;
    }
    case EventType::Started:
      m_log->info("Netsmith {}: run started in {}: {}", NETSMITH_VERSION, printable(e.path),
                  printable(e.message));
      break;
    case EventType::Checkpoint:
      m_log->info("checkpoint {} written: {}", printable(e.tag), printable(e.path));
      break;
    case EventType::Log:
      if (e.level == "debug")
        m_log->debug(printable(e.message));
      else
        m_log->info(printable(e.message));
      break;
    case EventType::Warning:
      m_log->warn(printable(e.message));
      break;
    case EventType::Finished:
      check(m_metrics, "metrics.csv", std::fflush(m_metrics) == 0);
      if (e.state == FinishState::Failed)
        m_log->error("run failed: {}", printable(e.message));
      else
        m_log->info("run {}: {}", finishStateName(e.state), printable(e.message));
      m_log->flush();
      break;
  }
}

RunFolderLock::RunFolderLock(const std::string& runDir) {
  const std::string path = (fs::path(runDir) / ".lock").string();
  m_fd = openForUpdateNoFollow(path);
  if (::flock(m_fd, LOCK_EX | LOCK_NB) != 0) {
    char buf[32] = {};
    const auto n = ::pread(m_fd, buf, sizeof buf - 1, 0);
    ::close(m_fd);
    m_fd = -1;
    const std::string pid = n > 0 ? std::string(buf, std::size_t(n)) : std::string("?");
    throw Error(runDir + ": the run is in use by process " +
                printable(pid.substr(0, pid.find('\n'))) +
                " (another training of this run); wait for it to end, or stop it");
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(m_fd, 0) != 0 || ::pwrite(m_fd, pid.data(), pid.size(), 0) < 0) {
    // The lock holds without the PID in it; only a refused second process would miss it.
  }
}

RunFolderLock::~RunFolderLock() {
  if (m_fd >= 0) ::close(m_fd);  // releases the flock
}

int removeStaleTemporaries(const std::string& folder) {
  static const std::regex pattern(R"(\..+\.tmp-[0-9]+)");
  int removed = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    if (!std::regex_match(entry.path().filename().string(), pattern)) continue;
    // A link of that name is removed itself (remove never follows it), not what it names.
    if (fs::remove(entry.path(), ec)) ++removed;
  }
  return removed;
}

}  // namespace netsmith::run
