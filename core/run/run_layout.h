#pragma once
// The run folder's layout, known here only: the run writer makes it, the run records read it,
// the sweep runner, the doctor, export, the data paths' rules and the studio find things in it.
//
//   <root>/<project>-<yyyyMMdd-HHmmss>[-N]/     root: the project's runs/ (train --out)
//     project.json  metrics.csv  events.jsonl  train.log
//     checkpoints/  best.safetensors, last.safetensors, epoch-N.safetensors
//     exports/
//
// No LibTorch, no other room: core/data, core/train, core/experiment and ui all ask it.
#include <string>

namespace netsmith::run_layout {

inline constexpr const char* kProject = "project.json";
inline constexpr const char* kMetrics = "metrics.csv";
inline constexpr const char* kEvents = "events.jsonl";
inline constexpr const char* kLog = "train.log";
inline constexpr const char* kCheckpoints = "checkpoints";
inline constexpr const char* kExports = "exports";
/// What the run's model costs deployed (export/run_deploy.h), when measured.
inline constexpr const char* kDeploy = "deploy.json";
inline constexpr const char* kBest = "best.safetensors";
inline constexpr const char* kLast = "last.safetensors";
inline constexpr const char* kRunsFolder = "runs";

/// Where the studio keeps a project's runs: `<projectDir>/runs`.
std::string runsRoot(const std::string& projectDir);
/// `<runDir>/<name>` (name: one of the files above).
std::string runFile(const std::string& runDir, const char* name);
/// `<runDir>/checkpoints/<file>`; `<runDir>/checkpoints` when `file` is empty.
std::string checkpointIn(const std::string& runDir, const char* file = "");
/// What a run folder's name starts with for a project of this name: its file-safe form and "-".
std::string runNamePrefix(const std::string& projectName);
/// A run folder: a real folder (not a link) holding an entry named metrics.csv (the writer's
/// first file; a link there is refused when written to, not passed over).
bool isRunFolder(const std::string& dir);
/// The run a checkpoint sits in (`<run>/checkpoints/<file>`), as the path was given; "" when
/// the checkpoint is not in a checkpoints folder.
std::string runOfCheckpoint(const std::string& checkpoint);
/// The newest run of `projectName` under `root` (folder names sort by their time; folders, not
/// links) holding a best checkpoint (or, with `lastOnly` or none, a last one) as a real file:
/// its absolute path, or "".
std::string latestCheckpoint(const std::string& root, const std::string& projectName,
                             bool lastOnly);

}  // namespace netsmith::run_layout
