#pragma once

// One JSON type for the whole project: insertion-ordered, so that files we save keep the order a
// person wrote them in (diff-friendly, lossless round trips).
#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

namespace netsmith {

using Json = nlohmann::ordered_json;

/// Short human name of a JSON value's type ("number", "string", ...), for error messages.
std::string jsonTypeName(const Json& value);

/// The deepest nesting of arrays and objects a file from elsewhere may have (a real project is
/// under 10 deep; a hostile one of 100,000 levels would overflow the stack of whatever walks it).
constexpr int kMaxJsonDepth = 128;

/// Scans JSON text (strings skipped) and throws netsmith::Error "SOURCE:LINE:COLUMN: nested
/// deeper than 128 levels" before anything parses or walks it.
void checkJsonNesting(const std::string& text, const std::string& source,
                      int maxDepth = kMaxJsonDepth);

/// A compact one-line rendering of a value for messages, shortened past `maxChars`.
std::string jsonBrief(const Json& value, std::size_t maxChars = 40);

/// An object of one member per name, built in linear time (the ordered object's operator[]
/// searches its keys one by one: 100,000 COCO categories took 90 s).
Json namedMembers(std::vector<std::pair<std::string, Json>> members);

}  // namespace netsmith
