#pragma once

// The run folder on disk: runs/<project>-<yyyymmdd-hhmmss>/ with project.json, metrics.csv,
// events.jsonl, train.log (spdlog), checkpoints/ and exports/.
#include <cstdio>
#include <memory>
#include <string>

#include "common/json.h"
#include "train/events.h"

namespace spdlog {
class logger;
}

namespace netsmith::train {

/// Creates `<root>/<name>-<yyyymmdd-hhmmss>` (with -2, -3... when it exists) and its
/// checkpoints/ and exports/ folders, and writes the project snapshot. Throws netsmith::Error
/// naming the folder when it cannot be created or written.
std::string createRunFolder(const std::string& root, const std::string& projectName,
                            const Json& projectSnapshot);

/// A sink writing metrics.csv (one row per step and one per epoch), events.jsonl (every event)
/// and train.log (log, warning, epoch, checkpoint and finish lines).
class RunWriter : public EventSink {
 public:
  explicit RunWriter(const std::string& runDir);  ///< appends when the files exist (resume)
  ~RunWriter() override;
  void onEvent(const TrainingEvent& event) override;

 private:
  std::string m_dir;
  std::FILE* m_metrics = nullptr;
  std::FILE* m_events = nullptr;
  std::shared_ptr<spdlog::logger> m_log;
};

}  // namespace netsmith::train
