#include "common/resource_paths.h"

#include <cstdlib>
#include <filesystem>
#include <vector>

namespace netsmith {

namespace fs = std::filesystem;

std::string findTemplatesDir(const std::string& builtIn) {
  std::vector<fs::path> candidates;
  if (const char* env = std::getenv("NETSMITH_RESOURCES"); env && *env)
    candidates.push_back(fs::path(env) / "templates");
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) candidates.push_back(exe.parent_path() / ".." / "share" / "netsmith" / "templates");
  if (!builtIn.empty()) candidates.push_back(fs::path(builtIn) / "templates");
  for (const auto& dir : candidates)
    if (fs::is_directory(dir, ec)) return fs::weakly_canonical(dir, ec).string();
  return {};
}

std::string findGuideDir(const std::string& builtIn) {
  std::vector<fs::path> candidates;
  if (const char* env = std::getenv("NETSMITH_DOCS"); env && *env)
    candidates.push_back(fs::path(env) / "guide");
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) candidates.push_back(exe.parent_path() / ".." / "share" / "doc" / "netsmith" / "guide");
  if (!builtIn.empty()) candidates.push_back(fs::path(builtIn) / ".." / "docs" / "guide");
  for (const auto& dir : candidates)
    if (fs::is_regular_file(dir / "README.md", ec)) return fs::weakly_canonical(dir, ec).string();
  return {};
}

}  // namespace netsmith
