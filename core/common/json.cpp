#include "common/json.h"

#include "common/error.h"

namespace netsmith {

std::string jsonTypeName(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::boolean:
      return "boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "integer";
    case Json::value_t::number_float:
      return "number";
    case Json::value_t::string:
      return "string";
    case Json::value_t::array:
      return "array";
    case Json::value_t::object:
      return "object";
    default:
      return "value";
  }
}

void checkJsonNesting(const std::string& text, const std::string& source, int maxDepth) {
  int depth = 0;
  bool inString = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;  // the escaped character
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > maxDepth) {
        std::size_t line = 1, column = 1;
        for (std::size_t k = 0; k < i; ++k) {
          if (text[k] == '\n') {
            ++line;
            column = 1;
          } else {
            ++column;
          }
        }
        throw Error(source + ":" + std::to_string(line) + ":" + std::to_string(column) +
                    ": nested deeper than " + std::to_string(maxDepth) + " levels");
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

std::string jsonBrief(const Json& value, std::size_t maxChars) {
  std::string text = value.dump();
  if (text.size() > maxChars) text = text.substr(0, maxChars) + "...";
  return text;
}

}  // namespace netsmith
