#pragma once

// The run folder on disk: runs/<project>-<yyyymmdd-hhmmss>/ with project.json, metrics.csv,
// events.jsonl, train.log (spdlog), checkpoints/ and exports/.
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>

#include "common/json.h"
#include "run/events.h"

namespace spdlog {
class logger;
}

namespace netsmith::run {

/// Creates `<root>/<name>-<yyyymmdd-hhmmss>` (with -2, -3... when it exists) and its
/// checkpoints/ and exports/ folders, and writes the project snapshot. Throws netsmith::Error
/// naming the folder when it cannot be created or written.
std::string createRunFolder(const std::string& root, const std::string& projectName,
                            const Json& projectSnapshot);

/// A sink writing metrics.csv (one row per step and one per epoch), events.jsonl (every event)
/// and train.log (log, warning, epoch, checkpoint and finish lines). Every write is checked: a
/// record that could not be written (a full disk) is reported by failure(), and the trainer
/// stops the run with a checkpoint rather than go on with records missing.
class RunWriter : public EventSink {
 public:
  /// Appends when the files exist (resume). `headline`: the task's headline figure
  /// (task::headlineOf), metrics.csv's figure column ("accuracy", "mae"; train and val_).
  RunWriter(const std::string& runDir, const std::string& headline);
  ~RunWriter() override;
  void onEvent(const TrainingEvent& event) override;
  /// "metrics.csv: No space left on device" once a write failed; "" while all is well.
  std::string failure() const;

 private:
  void check(std::FILE* file, const char* name, bool ok);

  std::string m_dir;
  std::string m_headline;
  std::FILE* m_metrics = nullptr;
  std::FILE* m_events = nullptr;
  std::shared_ptr<spdlog::logger> m_log;
  mutable std::mutex m_failureMutex;
  std::string m_failure;
};

/// The run folder's lock (flock on <run>/.lock, released when the process ends however it
/// ends): a second process that would write into the same run (two --resume of one run) is
/// refused with the holder's PID.
class RunFolderLock {
 public:
  explicit RunFolderLock(const std::string& runDir);  ///< throws netsmith::Error when held
  ~RunFolderLock();
  RunFolderLock(const RunFolderLock&) = delete;
  RunFolderLock& operator=(const RunFolderLock&) = delete;

 private:
  int m_fd = -1;
};

/// Removes the temporaries that killed checkpoint writes left in `folder` (".NAME.tmp-N").
/// Returns how many were removed. Call it while holding the run's lock.
int removeStaleTemporaries(const std::string& folder);

}  // namespace netsmith::run
