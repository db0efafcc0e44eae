#pragma once

#include <string>

namespace netsmith {

/// Reads a whole file; throws netsmith::Error naming the path and the reason.
std::string readTextFile(const std::string& path);

/// Writes `content` to `path` so that readers see either the old file or the complete new one,
/// never a partial file: a temporary file in the same folder, flushed to disk, then renamed.
/// Throws netsmith::Error on failure, leaving any existing file untouched.
void writeFileAtomically(const std::string& path, const std::string& content);

}  // namespace netsmith
