#include "common/error.h"

namespace netsmith {

std::string Problem::toString() const {
  std::string out = path.empty() ? message : path + ": " + message;
  if (!fix.empty()) out += "; " + fix;
  return out;
}

std::string formatProblems(const Problems& problems) {
  std::string out;
  for (const auto& p : problems) {
    out += p.toString();
    out += '\n';
  }
  return out;
}

std::size_t controlCharacterAt(const std::string& text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto u = static_cast<unsigned char>(text[i]);
    if (u < 0x20 || u == 0x7f) return i;
  }
  return std::string::npos;
}

std::string controlCharacterProblem(const std::string& text) {
  const auto at = controlCharacterAt(text);
  if (at == std::string::npos) return {};
  return "contains a control character (" + printable(text.substr(at, 1)) + ") in \"" +
         printable(text.substr(0, 120)) + "\"; paths and names here are plain text";
}

std::string printable(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u != 0x7f) {
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      static const char hex[] = "0123456789abcdef";
      out += "\\x";
      out += hex[u >> 4];
      out += hex[u & 15];
    }
  }
  return out;
}

}  // namespace netsmith
