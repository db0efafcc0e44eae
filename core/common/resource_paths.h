#pragma once

// Where the program's own files (templates, example projects) are: $NETSMITH_RESOURCES, else
// share/netsmith beside the installed program (<prefix>/bin/../share/netsmith), else the source
// tree's resources/ folder the program was built from. The CLI and the studio ask the same way.
#include <string>

namespace netsmith {

/// The templates folder (.../templates), or "" when none of the places holds one.
/// `builtIn`: the resources folder of the source tree (the build's NETSMITH_RESOURCE_DIR).
std::string findTemplatesDir(const std::string& builtIn);

/// The user guide's folder (.../guide, holding README.md and a page per topic):
/// $NETSMITH_DOCS/guide, share/doc/netsmith/guide beside the installed program, or the source
/// tree's docs/guide (beside `builtIn`, its resources folder); "" when none holds it.
std::string findGuideDir(const std::string& builtIn);

}  // namespace netsmith
