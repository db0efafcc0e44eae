#include "common/file_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <sstream>

#include "common/error.h"

namespace netsmith {

void requireRegularFile(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (ec || status.type() == fs::file_type::not_found) {
    if (fs::is_symlink(fs::symlink_status(path, ec)))
      throw Error(path + ": cannot open (a broken or looping symbolic link)");
    throw Error(path + ": cannot open (No such file or directory)");
  }
  switch (status.type()) {
    case fs::file_type::regular:
      return;
    case fs::file_type::directory:
      throw Error(path + ": is a folder, not a file");
    case fs::file_type::fifo:
      throw Error(path + ": is a FIFO (named pipe), not a file");
    case fs::file_type::character:
    case fs::file_type::block:
      throw Error(path + ": is a device, not a file");
    case fs::file_type::socket:
      throw Error(path + ": is a socket, not a file");
    default:
      throw Error(path + ": is not a regular file");
  }
}

std::string readTextFile(const std::string& path, std::uint64_t maxBytes) {
  requireRegularFile(path);
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec && size > maxBytes) {
    throw Error(path + ": is " + std::to_string(size >> 20) + " MiB; at most " +
                std::to_string(maxBytes >> 20) + " MiB is read from a file of this kind");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open (" + std::strerror(errno) + ")");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw Error(path + ": read failed");
  return ss.str();
}

namespace {

[[noreturn]] void refuseLink(const std::string& path) {
  throw Error(printable(path) +
              ": is a symbolic link where Netsmith writes a file or folder of its own; it does "
              "not write through links in a run or sweep folder (remove the link)");
}

int openNoFollow(const std::string& path, int flags, bool closeOnExec) {
  // O_NONBLOCK: a FIFO planted here must not block the open; cleared again below.
  const int fd =
      ::open(path.c_str(),
             flags | O_CREAT | O_NOFOLLOW | O_NONBLOCK | (closeOnExec ? O_CLOEXEC : 0), 0644);
  if (fd < 0) {
    const int err = errno;
    if (err == ELOOP) refuseLink(path);
    if (err == ENXIO || err == EISDIR)
      throw Error(printable(path) +
                  ": is not a regular file; Netsmith writes only to its own files");
    throw IoError(printable(path) + ": cannot write (" + std::strerror(err) + ")");
  }
  struct stat st {};
  std::string refusal;
  if (::fstat(fd, &st) != 0)
    refusal = std::string("cannot be examined (") + std::strerror(errno) + ")";
  else if (!S_ISREG(st.st_mode))
    refusal = "is not a regular file; Netsmith writes only to its own files";
  else if (st.st_nlink > 1)
    refusal = "has other hard links; Netsmith does not write to a file shared with another place";
  if (!refusal.empty()) {
    ::close(fd);
    throw Error(printable(path) + ": " + refusal);
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

}  // namespace

int openForAppendNoFollow(const std::string& path, bool closeOnExec) {
  return openNoFollow(path, O_WRONLY | O_APPEND, closeOnExec);
}

int openForUpdateNoFollow(const std::string& path, bool closeOnExec) {
  return openNoFollow(path, O_RDWR, closeOnExec);
}

std::FILE* fopenAppendNoFollow(const std::string& path) {
  const int fd = openForAppendNoFollow(path);
  std::FILE* f = ::fdopen(fd, "a");
  if (!f) {
    const int err = errno;
    ::close(fd);
    throw IoError(printable(path) + ": cannot write (" + std::strerror(err) + ")");
  }
  return f;
}

void requireRealFolder(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0)
    throw Error(printable(path) + ": cannot open the folder (" + std::strerror(errno) + ")");
  if (S_ISLNK(st.st_mode)) refuseLink(path);
  if (!S_ISDIR(st.st_mode)) throw Error(printable(path) + ": is not a folder");
}

void makeRealFolder(const std::string& path) {
  if (::mkdir(path.c_str(), 0755) == 0) return;
  const int err = errno;
  if (err != EEXIST)
    throw IoError(printable(path) + ": cannot create the folder (" + std::strerror(err) + ")");
  requireRealFolder(path);
}

namespace {
std::mutex g_faultMutex;
std::string g_faultPath;
int g_faultAllowed = 0;

// True when this write should fail as on a full disk (see setWriteFaultForTesting).
bool injectDiskFull(const std::string& path) {
  std::lock_guard<std::mutex> lock(g_faultMutex);
  if (g_faultPath.empty() || path.find(g_faultPath) == std::string::npos) return false;
  if (g_faultAllowed > 0) {
    --g_faultAllowed;
    return false;
  }
  return true;
}
}  // namespace

bool writeFaultForTesting(const std::string& path) {
  return injectDiskFull(path);
}

void setWriteFaultForTesting(const std::string& pathPart, int allowedWrites) {
  std::lock_guard<std::mutex> lock(g_faultMutex);
  g_faultPath = pathPart;
  g_faultAllowed = allowedWrites;
}

// The new file keeps the permission bits of the regular file it replaces (0644 when new); a link
// in its place is replaced, never followed.
void writeFileAtomically(const std::string& path, const std::string& content) {
  namespace fs = std::filesystem;
  const bool diskFull = injectDiskFull(path);
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::random_device rd;
  const fs::path tmp = dir / ("." + target.filename().string() + ".tmp-" + std::to_string(rd()));
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw IoError(path + ": cannot write (" + std::strerror(errno) + ")");
  auto fail = [&](const std::string& what) {
    const std::string reason = std::strerror(errno);
    ::close(fd);
    ::unlink(tmp.c_str());
    throw IoError(path + ": " + what + " failed (" + reason + "); the existing file is unchanged");
  };
  // The new file keeps the permissions of the one it replaces (a private 0600 manifest stays
  // private); a link in its place is replaced, not followed, so only a regular file counts.
  struct stat old {};
  if (::lstat(path.c_str(), &old) == 0 && S_ISREG(old.st_mode) &&
      ::fchmod(fd, old.st_mode & 07777) != 0)
    fail("keeping the file's permissions");
  std::size_t done = 0;
  while (done < content.size()) {
    if (diskFull && done >= content.size() / 2) {
      errno = ENOSPC;
      fail("write");
    }
    const std::size_t chunk =
        diskFull ? std::max<std::size_t>(1, content.size() / 2 - done) : content.size() - done;
    const ssize_t n = ::write(fd, content.data() + done, chunk);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("write");
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) fail("flush");
  if (::close(fd) != 0) {
    const std::string reason = std::strerror(errno);
    ::unlink(tmp.c_str());
    throw IoError(path + ": close failed (" + reason + ")");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    ::unlink(tmp.c_str());
    throw IoError(path + ": cannot replace the file (" + reason + ")");
  }
  // Make the rename itself durable.
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

std::string fileNameSafe(const std::string& name, const std::string& fallback,
                         std::size_t maxLength) {
  std::string out;
  for (const char c : name) {
    if (out.size() == maxLength) break;
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '_';
  }
  return out.empty() ? fallback : out;
}

std::string localTimeText(const char* format) {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[64];
  if (std::strftime(buf, sizeof buf, format, &tm) == 0) return {};
  return buf;
}

}  // namespace netsmith
