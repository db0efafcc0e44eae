#include "data/named_paths.h"
#include "data/source_formats.h"
#include "run/run_layout.h"

#include <algorithm>
#include <filesystem>

#include "data/data_config.h"

namespace netsmith::data {

namespace fs = std::filesystem;

namespace {

/// Data that packages install for everyone (Debian's dataset packages): read-only, public,
/// readable whatever a checkpoint says.
const char* const kPublicDataFolders[] = {"/usr/share/datasets"};

std::string canonicalPath(const std::string& path) {
  std::error_code ec;
  auto p = fs::weakly_canonical(fs::absolute(path), ec);
  if (ec) p = fs::absolute(path).lexically_normal();
  return p.string();
}

bool isInside(const std::string& path, const std::string& folder) {
  const fs::path p(path), f(folder);
  auto pi = p.begin();
  for (auto fi = f.begin(); fi != f.end(); ++fi, ++pi) {
    if (fi->empty()) continue;  // a trailing separator
    if (pi == p.end() || *pi != *fi) return false;
  }
  return true;
}

void addSpecPaths(const SourceSpec& s, std::vector<std::string>& out) {
  const auto paths = sourcePaths(s);
  out.insert(out.end(), paths.begin(), paths.end());
}

}  // namespace

std::string checkpointHome(const std::string& checkpointPath) {
  const fs::path file = fs::absolute(checkpointPath).lexically_normal();
  const fs::path run = run_layout::runOfCheckpoint(file.string());
  if (!run.empty() && run.parent_path().filename() == run_layout::kRunsFolder)
    return run.parent_path().parent_path().string();
  return file.parent_path().string();
}

std::vector<std::string> dataSectionPaths(const Json& data, const std::string& baseDir) {
  Problems ignored;
  const auto config = parseDataConfig(data, baseDir, ignored);
  std::vector<std::string> out;
  addSpecPaths(config.train, out);
  if (config.validation) addSpecPaths(*config.validation, out);
  if (config.test) addSpecPaths(*config.test, out);
  return out;
}

std::vector<std::string> unnamedDataPaths(const Json& data, const std::string& baseDir,
                                          const std::string& home) {
  const std::string homeReal = canonicalPath(home);
  std::vector<std::string> outside;
  for (const auto& p : dataSectionPaths(data, baseDir)) {
    // Links followed: one inside the folder that leads out of it is outside.
    const std::string real = canonicalPath(p);
    bool fine = isInside(real, homeReal);
    for (const char* folder : kPublicDataFolders)
      fine = fine || isInside(real, folder);
    if (!fine && std::find(outside.begin(), outside.end(), p) == outside.end())
      outside.push_back(p);
  }
  return outside;
}

std::string checkpointBaseDir(const Json& meta, const std::string& checkpointPath) {
  if (meta.is_object() && meta.contains("base_dir") && meta["base_dir"].is_string()) {
    const std::string recorded = meta["base_dir"].get<std::string>();
    if (!recorded.empty() && fs::path(recorded).is_absolute()) return recorded;
  }
  return checkpointHome(checkpointPath);
}

std::string unnamedDataMessage(const std::string& checkpointPath, const std::string& home,
                               const std::vector<std::string>& paths) {
  std::string list;
  for (std::size_t i = 0; i < paths.size() && i < 4; ++i)
    list += (i ? ", " : "") + paths[i];
  if (paths.size() > 4) list += " and " + std::to_string(paths.size() - 4) + " more";
  return checkpointPath + ": its project reads data from " + list +
         ", outside the checkpoint's folder " + home +
         " (a checkpoint, or a project file beside it, may have come from someone else); name "
         "the data with --data (your project file, or a folder of class folders), or pass "
         "--data-from-checkpoint to read these paths";
}

}  // namespace netsmith::data
