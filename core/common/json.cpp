#include "common/json.h"

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

std::string jsonBrief(const Json& value, std::size_t maxChars) {
  std::string text = value.dump();
  if (text.size() > maxChars) text = text.substr(0, maxChars) + "...";
  return text;
}

}  // namespace netsmith
