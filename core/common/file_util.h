#pragma once

#include <cstdint>
#include <string>

namespace netsmith {

/// The largest file readTextFile() reads by default (project files, manifests, checkpoints'
/// callers pass their own limits).
constexpr std::uint64_t kMaxReadBytes = std::uint64_t(4) << 30;

/// Reads a whole regular file of at most `maxBytes`; throws netsmith::Error naming the path and
/// the reason. A FIFO, a device (/dev/zero) or a socket is refused before it is opened, so a
/// read never blocks or runs without end.
std::string readTextFile(const std::string& path, std::uint64_t maxBytes = kMaxReadBytes);

/// Throws netsmith::Error naming `path` unless it is a regular file (following symlinks):
/// "is a FIFO (named pipe), not a file".
void requireRegularFile(const std::string& path);

/// Writes `content` to `path` so that readers see either the old file or the complete new one,
/// never a partial file: a temporary file in the same folder, flushed to disk, then renamed.
/// Throws netsmith::Error on failure, leaving any existing file untouched.
void writeFileAtomically(const std::string& path, const std::string& content);

/// Test hook: makes writeFileAtomically() fail as on a full disk (ENOSPC, half-way through the
/// data) for paths containing `pathPart`, after `allowedWrites` more successful writes of such
/// paths. An empty `pathPart` turns the fault off.
void setWriteFaultForTesting(const std::string& pathPart, int allowedWrites);

/// `name` as one path component for run and sweep folders: letters, digits, '-' and '_' kept,
/// anything else '_', at most `maxLength` characters; `fallback` when nothing is left.
std::string fileNameSafe(const std::string& name, const std::string& fallback,
                         std::size_t maxLength = 64);

/// The local time now, formatted by strftime (e.g. "%Y%m%d-%H%M%S" for folder names).
std::string localTimeText(const char* format);

}  // namespace netsmith
