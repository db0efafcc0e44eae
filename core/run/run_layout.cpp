#include "run/run_layout.h"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <vector>

#include "common/file_util.h"

namespace netsmith::run_layout {

namespace fs = std::filesystem;

std::string runsRoot(const std::string& projectDir) {
  return (fs::path(projectDir) / kRunsFolder).string();
}

std::string runFile(const std::string& runDir, const char* name) {
  return (fs::path(runDir) / name).string();
}

std::string checkpointIn(const std::string& runDir, const char* file) {
  const fs::path dir = fs::path(runDir) / kCheckpoints;
  return (*file ? dir / file : dir).string();
}

std::string runNamePrefix(const std::string& projectName) {
  return fileNameSafe(projectName, "run") + "-";
}

bool isRunFolder(const std::string& dir) {
  std::error_code ec;
  const auto status = fs::symlink_status(dir, ec);
  if (ec || !fs::is_directory(status)) return false;
  // Any entry named metrics.csv, a link too: the writer then refuses the link by name, where
  // taking the folder for no run would hide what was planted in it.
  return fs::exists(fs::symlink_status(fs::path(dir) / kMetrics, ec)) && !ec;
}

std::string runOfCheckpoint(const std::string& checkpoint) {
  const fs::path folder = fs::path(checkpoint).parent_path();
  return folder.filename() == kCheckpoints ? folder.parent_path().string() : std::string();
}

std::string latestCheckpoint(const std::string& root, const std::string& projectName,
                             bool lastOnly) {
  const std::string prefix = runNamePrefix(projectName);
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.compare(0, prefix.size(), prefix) == 0) names.push_back(name);
  }
  std::sort(names.rbegin(), names.rend());  // newest first: the names end in their time
  for (const auto& name : names) {
    const std::string run = (fs::path(root) / name).string();
    std::error_code e1;
    if (!fs::is_directory(fs::symlink_status(run, e1))) continue;  // a link is no run here
    for (const char* file :
         lastOnly ? std::vector<const char*>{kLast} : std::vector<const char*>{kBest, kLast}) {
      const fs::path path = checkpointIn(run, file);
      std::error_code e2;
      // Only real files count: a folder from elsewhere may hold links.
      if (fs::is_regular_file(fs::symlink_status(path, e2)) && !e2)
        return fs::absolute(path, e2).lexically_normal().string();
    }
  }
  return {};
}

}  // namespace netsmith::run_layout
