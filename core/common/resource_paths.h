#pragma once

// Where the program's own files (templates, example projects) are: $NETSMITH_RESOURCES, else
// share/netsmith beside the installed program (<prefix>/bin/../share/netsmith), else the source
// tree's resources/ folder the program was built from. The CLI and the studio ask the same way.
#include <string>

namespace netsmith {

/// The templates folder (.../templates), or "" when none of the places holds one.
/// `builtIn`: the resources folder of the source tree (the build's NETSMITH_RESOURCE_DIR).
std::string findTemplatesDir(const std::string& builtIn);

}  // namespace netsmith
