#pragma once

// One JSON type for the whole project: insertion-ordered, so that files we save keep the order a
// person wrote them in (diff-friendly, lossless round trips).
#include <nlohmann/json.hpp>

#include <string>

namespace netsmith {

using Json = nlohmann::ordered_json;

/// Short human name of a JSON value's type ("number", "string", ...), for error messages.
std::string jsonTypeName(const Json& value);

/// A compact one-line rendering of a value for messages, shortened past `maxChars`.
std::string jsonBrief(const Json& value, std::size_t maxChars = 40);

}  // namespace netsmith
