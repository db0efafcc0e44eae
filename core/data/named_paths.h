#pragma once

// Which data a checkpoint may send `eval` and `export` to read. A checkpoint carries a snapshot
// of its project and the folder its relative paths were resolved from (`base_dir`): true on the
// machine that wrote it, but a file from someone else must not make us read wherever it says.
// Its data is read without asking only inside the folder the checkpoint was found in (links out
// of it count as outside) or from the data packages install for everyone (/usr/share/datasets).
// A project file beside the checkpoint names nothing: it may have come with it. Anything else
// needs --data (the user's own project or folder), or an explicit yes.
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"
#include "common/json.h"

namespace netsmith::data {

/// The folder a checkpoint's own data is looked for from, decided by where the file is (never by
/// what it says): the project folder of the run it sits in (P for P/runs/RUN/checkpoints/x), else
/// the checkpoint's own folder. Absolute.
std::string checkpointHome(const std::string& checkpointPath);

/// Every file or folder `data` (a project's data section) reads, resolved against `baseDir`.
/// Entries with problems are left out (opening the data reports them).
std::vector<std::string> dataSectionPaths(const Json& data, const std::string& baseDir);

/// The paths of `data` (resolved against `baseDir`) that the user did not name: outside `home`
/// and outside /usr/share/datasets. Symbolic links are followed, so a link inside `home` that
/// leads out counts as outside.
std::vector<std::string> unnamedDataPaths(const Json& data, const std::string& baseDir,
                                          const std::string& home);

/// Thrown by evaluation when the checkpoint's data is not named: the message is
/// unnamedDataMessage(); paths() lets a UI ask instead.
class UnnamedDataError : public Error {
 public:
  UnnamedDataError(const std::string& message, std::vector<std::string> paths)
      : Error(message), m_paths(std::move(paths)) {}
  const std::vector<std::string>& paths() const { return m_paths; }

 private:
  std::vector<std::string> m_paths;
};

/// The refusal: names the checkpoint, its folder, the paths and the two ways on (--data, or
/// --data-from-checkpoint).
std::string unnamedDataMessage(const std::string& checkpointPath, const std::string& home,
                               const std::vector<std::string>& paths);

/// The folder a checkpoint's relative data paths resolve from: the absolute `base_dir` it
/// records, else checkpointHome().
std::string checkpointBaseDir(const Json& meta, const std::string& checkpointPath);

}  // namespace netsmith::data
