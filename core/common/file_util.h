#pragma once

#include <string>

namespace netsmith {

/// Reads a whole file; throws netsmith::Error naming the path and the reason.
std::string readTextFile(const std::string& path);

/// Writes `content` to `path` so that readers see either the old file or the complete new one,
/// never a partial file: a temporary file in the same folder, flushed to disk, then renamed.
/// Throws netsmith::Error on failure, leaving any existing file untouched.
void writeFileAtomically(const std::string& path, const std::string& content);

/// Test hook: makes writeFileAtomically() fail as on a full disk (ENOSPC, half-way through the
/// data) for paths containing `pathPart`, after `allowedWrites` more successful writes of such
/// paths. An empty `pathPart` turns the fault off.
void setWriteFaultForTesting(const std::string& pathPart, int allowedWrites);

}  // namespace netsmith
