#pragma once

// Reading a run folder back: the one reader of what RunWriter writes (metrics.csv,
// events.jsonl, project.json, checkpoints/). The studio's Runs page, its dashboard overlays and
// Experiments page and the sweep runner all read runs through it. It follows a run while it is
// written: each update() reads only what was appended since the last one (offset tailing), at
// most a stated number of bytes, so polling a long run costs what it wrote since. Files from
// elsewhere are bounded: regular files only (a FIFO or a device planted in a folder is not
// read), lines of at most 1 MiB, metrics.csv up to 256 MiB, project.json up to 16 MiB.
// No LibTorch here.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/json.h"

namespace netsmith::run {

/// A `step` row of metrics.csv. Numbers that are empty in the file are NaN.
struct StepRecord {
  std::int64_t epoch = 0;  ///< from 0, as the file numbers it
  std::int64_t batch = 0;  ///< in the epoch, from 0
  double step = 0;         ///< from 1
  double seconds = 0, loss = 0, lr = 0, gradNorm = 0, imagesPerSecond = 0, memoryBytes = 0;
};

/// An `epoch` row of metrics.csv.
struct EpochRecord {
  std::int64_t epoch = 0;  ///< from 0, as the file numbers it
  double lastStep = 0;     ///< the step of the last `step` row before it (0 when none)
  double seconds = 0;      ///< that row's time since the run started
  /// The losses, the headline figure (RunRecord::headline) on each split, and the LR.
  double trainLoss = 0, trainFigure = 0, valLoss = 0, valFigure = 0, lr = 0;
};

/// What a run folder holds, as far as it has been read.
/// `runDir`/deploy.json (export/run_deploy.h) when it is a regular file of a bounded size
/// holding a JSON object; null otherwise.
Json readDeployRecord(const std::string& runDir);
/// Of a deploy record: the batch-1 median latency in milliseconds of its first runtime that ran
/// the model (ONNX Runtime where it was found), and that runtime's name; -1 when unmeasured.
double deployLatencyMs(const Json& deploy, std::string* runtime = nullptr);
/// Of a deploy record: the exported file's size in bytes; -1 when unmeasured.
std::int64_t deployBytes(const Json& deploy);

struct RunRecord {
  std::string dir;      ///< the folder, as given
  std::string name;     ///< its last component
  Json settings;        ///< project.json (null until read, or when it is not readable)
  std::string project;  ///< settings' "name"
  /// The task's headline figure, metrics.csv's figure column ("accuracy", "mae"): what
  /// EpochRecord's trainFigure and valFigure, and testFigure(), are.
  std::string headline;
  std::vector<StepRecord> steps;
  std::vector<EpochRecord> epochs;
  std::vector<Json> epochEvents;  ///< events.jsonl's epoch_end events, in order
  // From events.jsonl: where it ran and how it ended.
  std::string device;           ///< "cpu, 2 compute threads, 1 loader thread"
  double durationSeconds = -1;  ///< the finished event's time; -1 while unknown
  std::string finishState;      ///< "completed", "stopped", "failed"; "" while unfinished
  std::map<std::string, double> testFigures;  ///< the finished event's test figures, by name
  std::int64_t testSamples = 0;
  std::vector<std::string> checkpoints;  ///< file names under checkpoints/, newest first
  /// deploy.json (export/run_deploy.h): what its model costs deployed; null until measured.
  Json deploy;
  /// Why metrics.csv cannot be read ("<path>:<line>: expected 14 fields, found 3"); the run
  /// is not one to show when set. Empty while all is well.
  std::string error;
  /// What was left unread ("read up to 256 MiB (line 1000001); the rest is not shown").
  std::string notice;

  /// run::deployLatencyMs and run::deployBytes of `deploy`.
  double deployLatencyMs(std::string* runtime = nullptr) const {
    return run::deployLatencyMs(deploy, runtime);
  }
  std::int64_t deployBytes() const { return run::deployBytes(deploy); }

  /// The headline figure on the test split; -1 when there is none.
  double testFigure() const {
    const auto it = testFigures.find(headline);
    return it == testFigures.end() ? -1 : it->second;
  }
};

class RunRecordReader {
 public:
  explicit RunRecordReader(std::string runDir);
  ~RunRecordReader();
  RunRecordReader(RunRecordReader&&) noexcept;
  RunRecordReader& operator=(RunRecordReader&&) noexcept;

  /// Reads what was appended since the last call, at most `maxBytes` of each file, and lists
  /// checkpoints/ again. A file that got shorter (replaced) is read again from its start.
  /// Returns true when the record changed.
  bool update(std::uint64_t maxBytes = std::uint64_t(64) << 20);
  /// False while the last update() left bytes unread (call it again).
  bool caughtUp() const;
  const RunRecord& record() const;
  const std::string& dir() const;

 private:
  struct State;
  std::unique_ptr<State> m;
};

/// The folder as it is now, read whole (within the bounds above).
RunRecord readRunRecord(const std::string& runDir);

/// The run folders under `root` (folders, not links, that hold a metrics.csv), newest first.
std::vector<std::string> runFolders(const std::string& root);

/// The run folder a resumed run goes on in: the one holding the checkpoint's folder
/// (<run>/checkpoints/last.safetensors), absolute, when it is a run (has events.jsonl); ""
/// otherwise (the resumed run starts a folder of its own). The studio and `train --resume`.
std::string resumeRunFolder(const std::string& checkpoint);

}  // namespace netsmith::run
