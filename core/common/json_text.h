#pragma once

// JSON text from files someone else wrote, read with messages that name the place.
#include <exception>
#include <string>

#include "common/json.h"

namespace netsmith {

/// Parses JSON text read from `source` (a file's path): the nesting is checked first, then any
/// error of the parser becomes one netsmith::Error naming the source and the place, never the
/// library's own text: "SOURCE:3:5: JSON syntax error: unexpected '}'; expected string literal",
/// "SOURCE: a number too large for a double ('1e400')".
Json parseJsonText(const std::string& text, const std::string& source);

/// The message parseJsonText() gives for a parser error `e` at `place` ("LINE:COLUMN", or "")
/// of `source`: for readers that parse with nlohmann's SAX interface.
std::string jsonErrorMessage(const std::string& source, const std::string& place,
                             const std::exception& e);

}  // namespace netsmith
