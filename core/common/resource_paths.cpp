#include "common/resource_paths.h"

#include <cstdlib>
#include <filesystem>
#include <vector>

namespace netsmith {

namespace fs = std::filesystem;

namespace {

/// The first of the three places that holds `marker` (a file, or a folder when it is ""):
/// $`env`/`leaf`, `installed`/`leaf` beside the program (<prefix>/bin/..), `builtIn`/`leaf`.
std::string firstPlace(const char* env, const fs::path& installed, const std::string& builtIn,
                       const fs::path& builtInPart, const fs::path& leaf, const char* marker) {
  std::vector<fs::path> candidates;
  if (const char* value = std::getenv(env); value && *value)
    candidates.push_back(fs::path(value) / leaf);
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) candidates.push_back(exe.parent_path() / ".." / installed / leaf);
  if (!builtIn.empty()) candidates.push_back(fs::path(builtIn) / builtInPart / leaf);
  for (const auto& dir : candidates) {
    const bool there = *marker ? fs::is_regular_file(dir / marker, ec) : fs::is_directory(dir, ec);
    if (there) return fs::weakly_canonical(dir, ec).string();
  }
  return {};
}

}  // namespace

std::string findTemplatesDir(const std::string& builtIn) {
  return firstPlace("NETSMITH_RESOURCES", fs::path("share") / "netsmith", builtIn, ".", "templates",
                    "");
}

std::string findGuideDir(const std::string& builtIn) {
  return firstPlace("NETSMITH_DOCS", fs::path("share") / "doc" / "netsmith", builtIn,
                    fs::path("..") / "docs", "guide", "README.md");
}

}  // namespace netsmith
