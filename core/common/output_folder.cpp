#include "common/output_folder.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/file_util.h"

namespace netsmith {

namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t kMaxMarkerBytes = std::uint64_t(64) << 20;

std::string withoutTrailingSlash(std::string path) {
  // "out/" names the folder itself (a trailing slash would let a link to a folder pass).
  while (path.size() > 1 && path.back() == '/')
    path.pop_back();
  return path;
}

/// True for a name the marker may list: relative, no "..", no empty part, plain text.
bool plainRelative(const std::string& name) {
  if (name.empty() || name.front() == '/' || controlCharacterAt(name) != std::string::npos)
    return false;
  std::size_t start = 0;
  for (;;) {
    const std::size_t end = name.find('/', start);
    const std::string part = name.substr(start, end == std::string::npos ? end : end - start);
    if (part.empty() || part == "." || part == "..") return false;
    if (end == std::string::npos) return true;
    start = end + 1;
  }
}

/// True when every folder between `root` and `relative`'s last part is a real folder (no link).
bool realFoldersOnTheWay(const std::string& root, const std::string& relative) {
  std::string at = root;
  std::size_t start = 0;
  for (std::size_t end; (end = relative.find('/', start)) != std::string::npos; start = end + 1) {
    at += "/" + relative.substr(start, end - start);
    struct stat st {};
    if (::lstat(at.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return false;
  }
  return true;
}

/// The first entry of the folder `path` other than the marker ("" when there is none).
std::string firstEntry(const std::string& path) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(path, ec)) {
    const std::string name = e.path().filename().string();
    if (name != OutputFolder::kMarker) return name;
  }
  if (ec) throw IoError(printable(path) + ": cannot list the folder (" + ec.message() + ")");
  return {};
}

}  // namespace

std::set<std::string> OutputFolder::readMarker(const std::string& path, const std::string& kind,
                                               bool& marked) {
  const std::string marker = path + "/" + kMarker;
  struct stat st {};
  marked = ::lstat(marker.c_str(), &st) == 0;
  if (!marked) return {};
  const std::string where = printable(marker);
  if (!S_ISREG(st.st_mode))
    throw Error(where + ": is not a regular file; give a new or empty folder for the " + kind);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(readTextFile(marker, kMaxMarkerBytes));
  } catch (const nlohmann::json::exception&) {
    throw Error(where +
                ": not a marker Netsmith wrote (not readable as JSON); give a new or "
                "empty folder for the " +
                kind);
  }
  if (!j.is_object() || j.value("format", "") != "netsmith-output" || !j.contains("files") ||
      !j["files"].is_array() || !j.contains("kind") || !j["kind"].is_string())
    throw Error(where + ": not a marker Netsmith wrote; give a new or empty folder for the " +
                kind);
  if (j["kind"].get<std::string>() != kind)
    throw Error(printable(path) + ": holds " + printable(j["kind"].get<std::string>()) + ", not " +
                kind + "; give a new or empty folder");
  std::set<std::string> files;
  for (const auto& f : j["files"]) {
    if (!f.is_string() || !plainRelative(f.get<std::string>()))
      throw Error(where + ": lists " + printable(f.dump().substr(0, 80)) +
                  ", not a file inside the folder; give a new or empty folder for the " + kind);
    files.insert(f.get<std::string>());
  }
  return files;
}

OutputFolder::OutputFolder(std::string path, std::string kind)
    : m_path(withoutTrailingSlash(std::move(path))), m_kind(std::move(kind)) {
  check(m_path, m_kind);
  makeRealFolder(m_path);
  bool marked = false;
  const auto earlier = readMarker(m_path, m_kind, marked);
  for (const auto& name : earlier) {
    // Only inside real folders: a folder of the output replaced by a link is never entered.
    if (!realFoldersOnTheWay(m_path, name)) continue;
    const std::string file = m_path + "/" + name;
    struct stat st {};
    if (::lstat(file.c_str(), &st) == 0 && !S_ISDIR(st.st_mode) && ::unlink(file.c_str()) != 0)
      throw IoError(printable(file) + ": cannot remove the earlier output (" +
                    std::strerror(errno) + ")");
  }
  // The folder is this output's from now on, even if the run stops before record().
  writeMarker({});
}

void OutputFolder::check(const std::string& rawPath, const std::string& kind) {
  const std::string path = withoutTrailingSlash(rawPath);
  if (path.empty()) throw Error("the folder for the " + kind + " is empty; name a folder");
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno != ENOENT)
      throw IoError(printable(path) + ": cannot use the folder (" + std::strerror(errno) + ")");
    const fs::path parent = fs::path(path).parent_path();
    std::error_code ec;
    if (!parent.empty() && !fs::is_directory(parent, ec))
      throw Error(printable(path) + ": its folder " + printable(parent.string()) +
                  " does not exist");
    return;
  }
  requireRealFolder(path);
  bool marked = false;
  readMarker(path, kind, marked);
  if (marked) return;
  const std::string entry = firstEntry(path);
  if (!entry.empty())
    throw Error(printable(path) + ": is not empty (it holds \"" + printable(entry) +
                "\") and no earlier " + kind +
                " were written there; nothing was changed: " + "give a new or empty folder");
}

void OutputFolder::folder(const std::string& relative) {
  makeRealFolder(m_path + "/" + relative);
}

std::string OutputFolder::claim(const std::string& relative) {
  const std::string file = m_path + "/" + relative;
  if (!plainRelative(relative) || !realFoldersOnTheWay(m_path, relative))
    throw Error(printable(file) + ": is not inside the output folder (a link on the way?)");
  struct stat st {};
  if (m_claimed.count(relative) == 0 && ::lstat(file.c_str(), &st) == 0)
    throw Error(printable(file) + ": is there already and no earlier " + m_kind +
                " wrote it; nothing is replaced: give a new or empty folder");
  m_claimed.insert(relative);
  return file;
}

void OutputFolder::record() {
  writeMarker(m_claimed);
}

void OutputFolder::writeMarker(const std::set<std::string>& files) const {
  nlohmann::json j{{"format", "netsmith-output"},
                   {"kind", m_kind},
                   {"files", nlohmann::json(std::vector<std::string>(files.begin(), files.end()))}};
  writeFileAtomically(m_path + "/" + kMarker, j.dump(1) + "\n");
}

void checkOutputFile(const std::string& path) {
  if (path.empty()) throw Error("an output file needs a name");
  const std::string where = printable(path);
  if (path.back() == '/') throw Error(where + ": names a folder; name a file");
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
    throw Error(where + ": is " + (S_ISDIR(st.st_mode) ? "a folder" : "not a regular file") +
                "; name a file");
  const fs::path parent = fs::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty() && !fs::is_directory(parent, ec))
    throw Error(where + ": its folder " + printable(parent.string()) + " does not exist");
  if (::access(parent.empty() ? "." : parent.c_str(), W_OK) != 0)
    throw IoError(where + ": cannot write in " + printable(parent.empty() ? "." : parent.string()) +
                  " (" + std::strerror(errno) + ")");
}

}  // namespace netsmith
