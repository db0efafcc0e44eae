#include "common/json.h"

#include <iterator>

#include "common/json_text.h"

#include "common/error.h"

namespace netsmith {

namespace {

// nlohmann reports a byte offset; people want line and column.
std::string lineColumn(const std::string& text, std::size_t byte) {
  std::size_t line = 1, col = 1;
  for (std::size_t i = 0; i < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return std::to_string(line) + ":" + std::to_string(col);
}

// nlohmann reports the position after the offending token; people expect its start.
std::size_t tokenStart(const std::string& text, std::size_t byte) {
  if (byte == 0 || text.empty()) return 0;
  std::size_t i = std::min(byte - 1, text.size() - 1);
  if (text[i] == '"') {
    // Back to the opening quote of the string literal (skipping escaped quotes).
    while (i > 0) {
      --i;
      if (text[i] == '"' && (i == 0 || text[i - 1] != '\\')) break;
    }
    return i;
  }
  auto wordChar = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '+';
  };
  while (i > 0 && wordChar(text[i]) && wordChar(text[i - 1]))
    --i;
  return i;
}

std::string parseErrorReason(const std::string& what) {
  // "[json.exception.parse_error.101] parse error at line 3, column 5: syntax error while
  // parsing object - unexpected '}'; expected string literal" -> the part after the last ": ".
  const auto pos = what.find(": ");
  std::string reason = pos == std::string::npos ? what : what.substr(pos + 2);
  const auto at = reason.find(" at line ");
  if (at != std::string::npos) {
    const auto colon = reason.find(": ", at);
    if (colon != std::string::npos) reason = reason.substr(colon + 2);
  }
  return reason;
}

}  // namespace

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

namespace netsmith {

std::string jsonErrorMessage(const std::string& source, const std::string& place,
                             const std::exception& e) {
  const std::string what = e.what();
  const auto* json = dynamic_cast<const nlohmann::json::exception*>(&e);
  if (json != nullptr && json->id == 406) {
    // "number overflow parsing '1e309'": the one value a double cannot hold.
    const auto quote = what.find('\'');
    return source + ": a number too large for a double (" +
           printable(quote == std::string::npos ? what : what.substr(quote)) + ")";
  }
  // "...; last read: '"<the bytes>'": the bytes can be anything (invalid UTF-8 among them),
  // and the place already says where.
  std::string reason = parseErrorReason(what);
  if (const auto last = reason.find("; last read: "); last != std::string::npos) reason.erase(last);
  return source + (place.empty() ? "" : ":" + place) + ": JSON syntax error: " + printable(reason);
}

Json parseJsonText(const std::string& text, const std::string& source) {
  checkJsonNesting(text, source);
  try {
    return Json::parse(text);
  } catch (const Json::parse_error& e) {
    throw Error(jsonErrorMessage(source, lineColumn(text, tokenStart(text, e.byte)), e));
  } catch (const Json::exception& e) {
    throw Error(jsonErrorMessage(source, "", e));
  }
}

Json namedMembers(std::vector<std::pair<std::string, Json>> members) {
  return Json(Json::object_t(std::make_move_iterator(members.begin()),
                             std::make_move_iterator(members.end())));
}

}  // namespace netsmith
