#pragma once

#include <cstdint>
#include <cstdio>
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

/// Opens `path` for appending, creating it (0644) when missing, and never through a link: a
/// symbolic link, a FIFO, a device, a folder or a file with other hard links in its place is
/// refused by name (netsmith::Error), so a file planted in a folder someone sent cannot send the
/// write elsewhere. Other failures throw netsmith::IoError. `closeOnExec` false keeps the
/// descriptor open in child processes (lock files the children hold).
int openForAppendNoFollow(const std::string& path, bool closeOnExec = true);

/// As openForAppendNoFollow(), opened for reading and writing from the start (lock files).
int openForUpdateNoFollow(const std::string& path, bool closeOnExec = true);

/// openForAppendNoFollow() as a stdio stream.
std::FILE* fopenAppendNoFollow(const std::string& path);

/// Creates the folder `path` (its parent must exist), or checks that what is there is a real
/// folder: a symbolic link (even to a folder) or a file there is refused by name.
void makeRealFolder(const std::string& path);

/// Throws netsmith::Error naming `path` unless it is a real folder (not a link to one).
void requireRealFolder(const std::string& path);

/// Writes `content` to `path` so that readers see either the old file or the complete new one,
/// never a partial file: a temporary file in the same folder, flushed to disk, then renamed.
/// Throws netsmith::Error on failure, leaving any existing file untouched.
void writeFileAtomically(const std::string& path, const std::string& content);

/// Test hook: makes writeFileAtomically() fail as on a full disk (ENOSPC, half-way through the
/// data) for paths containing `pathPart`, after `allowedWrites` more successful writes of such
/// paths. An empty `pathPart` turns the fault off.
void setWriteFaultForTesting(const std::string& pathPart, int allowedWrites);

/// For writers that append (the run's records): true when the fault set above applies to this
/// write of `path` (it counts as one of the allowed writes otherwise).
bool writeFaultForTesting(const std::string& path);

/// `name` as one path component for run and sweep folders: letters, digits, '-' and '_' kept,
/// anything else '_', at most `maxLength` characters; `fallback` when nothing is left.
std::string fileNameSafe(const std::string& name, const std::string& fallback,
                         std::size_t maxLength = 64);

/// The local time now, formatted by strftime (e.g. "%Y%m%d-%H%M%S" for folder names).
std::string localTimeText(const char* format);

}  // namespace netsmith
