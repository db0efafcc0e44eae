// Box annotations: YOLO label files and names, COCO instances JSON and Pascal VOC XML read from
// text. Files from elsewhere are hostile until read: every loop moves forward through the text
// (linear time), nothing is allocated from a number in a file, and the XML reader keeps its own
// stack of open elements instead of recursing.
#include "data/box_formats.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <system_error>
#include <utility>

#include "common/error.h"
#include "common/file_util.h"
#include "common/json.h"
#include "common/json_text.h"

namespace netsmith::data {

namespace {
// Named as well as anonymous: core compiles in unity batches, where another file's anonymous
// helpers (parseNumber, trimmed...) share this translation unit.
namespace boxfmt {

constexpr std::size_t kMaxLabelBytes = std::size_t(64) << 20;
constexpr std::size_t kMaxNamesBytes = std::size_t(16) << 20;
constexpr std::size_t kMaxXmlBytes = std::size_t(16) << 20;
constexpr std::size_t kMaxXmlDepth = 64;
constexpr std::size_t kMaxXmlElements = 1'000'000;  // a VOC file with 20,000 objects has 300,000
constexpr std::size_t kMaxClassNames = 100'000;
constexpr std::size_t kMaxCocoItems = 10'000'000;
constexpr std::size_t kMaxCocoCategories = 100'000;
constexpr std::size_t kMaxFileNameBytes = 4096;
constexpr std::size_t kNone = static_cast<std::size_t>(-1);

bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}

std::string_view trimmed(std::string_view s) {
  std::size_t b = 0, e = s.size();
  while (b < e && isSpace(s[b]))
    ++b;
  while (e > b && isSpace(s[e - 1]))
    --e;
  return s.substr(b, e - b);
}

bool startsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

/// A value from a file in a message: quoted, printable, at most 60 characters.
std::string inQuotes(std::string_view s) {
  const bool longer = s.size() > 60;
  return "\"" + printable(std::string(s.substr(0, 60))) + (longer ? "...\"" : "\"");
}

std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

/// A finite decimal number that is the whole of `s` ("." as the decimal point whatever the
/// locale; a leading "+" allowed).
bool parseReal(std::string_view s, double& out) {
  const bool plus = !s.empty() && s[0] == '+';
  if (plus) s.remove_prefix(1);
  if (s.empty() || s.size() > 64 || (plus && s[0] == '-')) return false;
  const char* end = s.data() + s.size();
  const auto r = std::from_chars(s.data(), end, out);
  return r.ec == std::errc() && r.ptr == end && std::isfinite(out);
}

/// A whole number that is the whole of `s` (a leading "+" allowed).
bool parseWhole(std::string_view s, std::int64_t& out) {
  const bool plus = !s.empty() && s[0] == '+';
  if (plus) s.remove_prefix(1);
  if (s.empty() || s.size() > 32 || (plus && s[0] == '-')) return false;
  const char* end = s.data() + s.size();
  const auto r = std::from_chars(s.data(), end, out);
  return r.ec == std::errc() && r.ptr == end;
}

/// The lines of a text, one at a time ("\r\n" or "\n"; a last line without an end counts).
struct Lines {
  std::string_view text;
  std::size_t pos = 0;
  std::size_t number = 0;  ///< of the line `next` gave last, from 1

  bool next(std::string_view& line) {
    if (pos >= text.size()) return false;
    const std::size_t nl = text.find('\n', pos);
    const std::size_t end = nl == std::string_view::npos ? text.size() : nl;
    line = text.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    ++number;
    return true;
  }
};

std::string sizeText(int width, int height) {
  return std::to_string(width) + "x" + std::to_string(height);
}

/// "" when the box from (x0, y0) to (x1, y1) keeps some area inside a width x height image, and
/// `box` then holds it clipped there; else what is wrong with it. Clipped in doubles, so a
/// coordinate beyond a float's range is never cast.
std::string clipInto(target::Box& box, double x0, double y0, double x1, double y1, int width,
                     int height) {
  if (!std::isfinite(x0) || !std::isfinite(y0) || !std::isfinite(x1) || !std::isfinite(y1))
    return "a box coordinate is not a finite number";
  if (width < 1 || height < 1 || width > kMaxBoxImageSide || height > kMaxBoxImageSide)
    return "the image size " + sizeText(width, height) + " is not one a box can lie in";
  const auto boxText = [&] {
    return "box (" + num(x0) + ", " + num(y0) + ")-(" + num(x1) + ", " + num(y1) + ")";
  };
  if (!(x1 > x0 && y1 > y0)) return boxText() + " has zero area";
  const double cx0 = std::clamp(x0, 0.0, double(width));
  const double cy0 = std::clamp(y0, 0.0, double(height));
  const double cx1 = std::clamp(x1, 0.0, double(width));
  const double cy1 = std::clamp(y1, 0.0, double(height));
  box.x0 = static_cast<float>(cx0);
  box.y0 = static_cast<float>(cy0);
  box.x1 = static_cast<float>(cx1);
  box.y1 = static_cast<float>(cy1);
  if (!(box.x1 > box.x0 && box.y1 > box.y0))
    return boxText() + " lies outside the " + sizeText(width, height) +
           " image (zero area once clipped)";
  return "";
}

/// Up to 10 of `classes`, quoted, for a message about a name that is none of them.
std::string knownClasses(const std::vector<std::string>& classes) {
  if (classes.empty()) return "the project names no classes";
  std::string text = "known: ";
  const std::size_t shown = std::min<std::size_t>(classes.size(), 10);
  for (std::size_t i = 0; i < shown; ++i)
    text += (i ? ", " : "") + inQuotes(classes[i]);
  if (classes.size() > shown) text += ", and " + std::to_string(classes.size() - shown) + " more";
  return text;
}

// ---- YOLO names -------------------------------------------------------------------------------

/// `line` without a YAML comment (a "#" at the start or after a space, outside quotes).
std::string_view withoutComment(std::string_view line) {
  char quote = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quote) {
      if (quote == '"' && c == '\\')
        ++i;
      else if (quote == '\'' && c == '\'' && i + 1 < line.size() && line[i + 1] == '\'')
        ++i;
      else if (c == quote)
        quote = 0;
    } else if (c == '"' || c == '\'') {
      // A quote opens a quoted scalar only where one starts: "it's" is a plain name.
      const char before = i ? line[i - 1] : ' ';
      if (isSpace(before) || before == ':' || before == '-' || before == '[' || before == '{' ||
          before == ',')
        quote = c;
    } else if (c == '#' && (i == 0 || isSpace(line[i - 1]))) {
      return line.substr(0, i);
    }
  }
  return line;
}

/// The value of a YAML scalar: quotes removed ('' in single quotes; \" \\ \n \t \/ in double
/// quotes), a plain one as written. "" on success, else the problem.
std::string scalarValue(std::string_view s, std::string& out) {
  s = trimmed(s);
  out.clear();
  if (s.empty()) return "";
  const char q = s[0];
  if (q != '\'' && q != '"') {
    out = std::string(s);
    return "";
  }
  if (s.size() < 2 || s.back() != q) return "the quoted name " + inQuotes(s) + " is not closed";
  const std::string_view inner = s.substr(1, s.size() - 2);
  for (std::size_t i = 0; i < inner.size(); ++i) {
    const char c = inner[i];
    if (q == '\'') {
      if (c == '\'') {
        if (i + 1 >= inner.size() || inner[i + 1] != '\'')
          return "text after the quoted name in " + inQuotes(s);
        ++i;
      }
      out += c;
      continue;
    }
    if (c == '"') return "text after the quoted name in " + inQuotes(s);
    if (c != '\\') {
      out += c;
      continue;
    }
    if (i + 1 >= inner.size()) return "the quoted name " + inQuotes(s) + " is not closed";
    const char e = inner[++i];
    out += e == 'n' ? '\n' : e == 't' ? '\t' : e;
  }
  return "";
}

/// Splits "KEY: VALUE" at the first ":" outside a quoted key that a space or the end follows.
bool splitEntry(std::string_view s, std::string_view& key, std::string_view& value) {
  s = trimmed(s);
  char quote = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (quote) {
      if (quote == '"' && c == '\\')
        ++i;
      else if (quote == '\'' && c == '\'' && i + 1 < s.size() && s[i + 1] == '\'')
        ++i;
      else if (c == quote)
        quote = 0;
      continue;
    }
    if (i == 0 && (c == '"' || c == '\'')) {
      quote = c;
      continue;
    }
    if (c == ':' && (i + 1 == s.size() || isSpace(s[i + 1]))) {
      key = trimmed(s.substr(0, i));
      value = trimmed(s.substr(i + 1));
      return true;
    }
  }
  return false;
}

struct NamedIndex {
  std::int64_t index = 0;
  std::string name;
  std::size_t line = 0;
};

/// One entry of `names`: a list item (its index is its place) or an "INDEX: NAME" entry.
void addEntry(std::string_view raw, bool mapping, std::size_t line,
              std::vector<NamedIndex>& entries, const std::string& where) {
  const auto fail = [&](const std::string& problem) {
    return Error(where + " line " + std::to_string(line) + ": " + problem);
  };
  if (entries.size() >= kMaxClassNames)
    throw fail("more than " + std::to_string(kMaxClassNames) + " class names");
  std::string_view nameText = raw;
  auto index = static_cast<std::int64_t>(entries.size());
  std::string key;
  if (mapping) {
    std::string_view keyText;
    if (!splitEntry(raw, keyText, nameText))
      throw fail("expected INDEX: NAME in names, found " + inQuotes(trimmed(raw)));
    const std::string problem = scalarValue(keyText, key);
    if (!problem.empty()) throw fail(problem);
    if (!parseWhole(key, index) || index < 0)
      throw fail("the index " + inQuotes(key) + " in names is not a whole number 0 or above");
  }
  std::string name;
  const std::string problem = scalarValue(nameText, name);
  if (!problem.empty()) throw fail(problem);
  if (name.empty())
    throw fail(mapping ? "index " + std::to_string(index) + " has an empty name"
                       : std::string("an empty name in names"));
  entries.push_back({index, std::move(name), line});
}

/// Gathers the raw items of a YAML flow collection ([a, 'b'] or {0: a, 1: b}), fed line by
/// line, up to its closing bracket.
class FlowItems {
 public:
  struct Item {
    std::string text;
    std::size_t line = 0;
  };

  FlowItems(char close, const std::string& where) : m_close(close), m_where(where) {}

  /// Feeds one line (the first: what follows the opening bracket). True once the closing
  /// bracket is found; `after` is then the rest of its line.
  bool feed(std::string_view line, std::size_t number, std::string_view& after) {
    for (std::size_t i = 0; i < line.size(); ++i) {
      const char c = line[i];
      if (m_quote) {
        m_current += c;
        if (m_quote == '"' && c == '\\' && i + 1 < line.size())
          m_current += line[++i];
        else if (m_quote == '\'' && c == '\'' && i + 1 < line.size() && line[i + 1] == '\'')
          m_current += line[++i];  // '' is a quote inside single quotes
        else if (c == m_quote)
          m_quote = 0;
        continue;
      }
      if (c == '#' && (i == 0 || isSpace(line[i - 1]))) break;  // a comment to the line's end
      if (c == ',' || c == m_close) {
        finishItem(number, c == m_close);
        if (c == m_close) {
          after = line.substr(i + 1);
          return true;
        }
        continue;
      }
      if (c == '[' || c == ']' || c == '{' || c == '}')
        throw Error(m_where + " line " + std::to_string(number) +
                    ": nested or mismatched brackets in names; write the names as [a, b, c]");
      if (m_current.empty()) {
        if (isSpace(c)) continue;
        m_itemLine = number;
      }
      if ((c == '"' || c == '\'') &&
          (m_current.empty() || isSpace(m_current.back()) || m_current.back() == ':'))
        m_quote = c;
      m_current += c;
    }
    if (!m_current.empty()) m_current += ' ';  // a line break inside an item reads as a space
    return false;
  }

  std::vector<Item> items;

 private:
  void finishItem(std::size_t number, bool last) {
    if (trimmed(m_current).empty()) {
      // "[a, b, ]" ends with an empty item; "[a, , b]" holds one.
      if (!last)
        throw Error(m_where + " line " + std::to_string(number) + ": an empty entry in names");
    } else {
      if (items.size() >= kMaxClassNames)
        throw Error(m_where + " line " + std::to_string(number) + ": more than " +
                    std::to_string(kMaxClassNames) + " class names");
      items.push_back({std::string(trimmed(m_current)), m_itemLine});
    }
    m_current.clear();
  }

  char m_close;
  const std::string& m_where;
  char m_quote = 0;
  std::string m_current;
  std::size_t m_itemLine = 0;
};

/// Whether `line` is the top-level key `names:`; `rest` is then what follows the colon.
bool isNamesKey(std::string_view line, std::string_view& rest) {
  std::string_view s = line;
  if (startsWith(s, "\"names\"") || startsWith(s, "'names'"))
    s.remove_prefix(7);
  else if (startsWith(s, "names"))
    s.remove_prefix(5);
  else
    return false;
  while (!s.empty() && (s[0] == ' ' || s[0] == '\t'))
    s.remove_prefix(1);
  if (s.empty() || s[0] != ':') return false;
  s.remove_prefix(1);
  if (!s.empty() && !isSpace(s[0])) return false;
  rest = s;
  return true;
}

/// The names in index order: indices 0..n-1, each once.
std::vector<std::string> namesInOrder(std::vector<NamedIndex> entries, const std::string& where) {
  if (entries.empty()) throw Error(where + ": names lists no classes");
  std::stable_sort(entries.begin(), entries.end(),
                   [](const NamedIndex& a, const NamedIndex& b) { return a.index < b.index; });
  std::vector<std::string> names;
  names.reserve(entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].index != static_cast<std::int64_t>(i)) {
      if (i > 0 && entries[i].index == entries[i - 1].index)
        throw Error(where + " line " + std::to_string(entries[i].line) + ": index " +
                    std::to_string(entries[i].index) + " in names is given twice (also on line " +
                    std::to_string(entries[i - 1].line) + ")");
      throw Error(where + ": index " + std::to_string(i) +
                  " is missing from names (indices run from 0 to " +
                  std::to_string(entries.size() - 1) + ", one name each)");
    }
    names.push_back(std::move(entries[i].name));
  }
  return names;
}

std::vector<std::string> namesFromYaml(const std::string& text, const std::string& where) {
  Lines lines{text};
  Lines after{text};
  std::string_view line, rest;
  std::size_t keyLine = 0;
  while (lines.next(line)) {
    std::string_view r;
    if (!isNamesKey(line, r)) continue;
    if (keyLine)
      throw Error(where + " line " + std::to_string(lines.number) +
                  ": a second names key (the first is on line " + std::to_string(keyLine) + ")");
    keyLine = lines.number;
    rest = r;
    after = lines;
  }
  if (!keyLine)
    throw Error(where +
                ": no top-level names key; a YOLO data.yaml lists its classes as "
                "`names: [a, b]` or as `names:` followed by indented `0: a` lines");

  std::vector<NamedIndex> entries;
  const std::string_view value = trimmed(withoutComment(rest));
  if (value.empty()) {
    // The block form: indented "0: a" entries or "- a" items up to the next top-level key.
    bool mapping = false, sequence = false;
    while (after.next(line)) {
      const std::string_view content = trimmed(withoutComment(line));
      if (content.empty()) continue;
      const bool item = content[0] == '-' && (content.size() == 1 || isSpace(content[1]));
      if (!isSpace(line[0]) && !item) break;
      (item ? sequence : mapping) = true;
      if (mapping && sequence)
        throw Error(where + " line " + std::to_string(after.number) +
                    ": names mixes list items (- a) with numbered entries (0: a)");
      addEntry(item ? content.substr(1) : content, !item, after.number, entries, where);
    }
  } else if (value[0] == '[' || value[0] == '{') {
    const bool mapping = value[0] == '{';
    FlowItems flow(mapping ? '}' : ']', where);
    std::string_view tail;
    const std::size_t bracket = rest.find(value[0]);
    bool closed = flow.feed(rest.substr(bracket + 1), keyLine, tail);
    std::size_t closeLine = keyLine;
    while (!closed && after.next(line)) {
      closed = flow.feed(line, after.number, tail);
      closeLine = after.number;
    }
    if (!closed)
      throw Error(where + " line " + std::to_string(keyLine) + ": the names " +
                  (mapping ? "mapping" : "list") + " is never closed (no '" +
                  (mapping ? "}" : "]") + "')");
    if (!trimmed(withoutComment(tail)).empty())
      throw Error(where + " line " + std::to_string(closeLine) + ": text after the names " +
                  (mapping ? "mapping" : "list") + ": " + inQuotes(trimmed(tail)));
    for (const auto& item : flow.items)
      addEntry(item.text, mapping, item.line, entries, where);
  } else {
    throw Error(where + " line " + std::to_string(keyLine) +
                ": names must be a list ([a, b]) or a mapping (0: a), found " + inQuotes(value));
  }
  return namesInOrder(std::move(entries), where);
}

// ---- COCO -------------------------------------------------------------------------------------

// Not the project's ordered Json: its objects find a key by a linear search, so reading an
// object with n keys costs n^2; std::map's costs n log n.
using CocoJson = nlohmann::json;

[[noreturn]] void cocoFail(const std::string& where, const char* array, std::size_t i,
                           const char* key, const std::string& problem) {
  std::string path = std::string(array) + "[" + std::to_string(i) + "]";
  if (key) path += std::string(".") + key;
  throw Error(where + ": " + path + ": " + problem);
}

std::string brief(const CocoJson& value) {
  std::string text = value.dump();
  if (text.size() > 40) text = text.substr(0, 40) + "...";
  return printable(text);
}

/// Member `key` of element `i` of `array` as a whole number; `fallback` when it is missing and
/// `optional`.
std::int64_t wholeMember(const CocoJson& object, const char* array, std::size_t i, const char* key,
                         const std::string& where, bool optional = false,
                         std::int64_t fallback = 0) {
  const auto it = object.find(key);
  if (it == object.end()) {
    if (optional) return fallback;
    cocoFail(where, array, i, key, "missing");
  }
  if (it->is_number_unsigned()) {
    if (it->get<std::uint64_t>() > std::uint64_t(std::numeric_limits<std::int64_t>::max()))
      cocoFail(where, array, i, key, "the number " + brief(*it) + " is too large");
    return static_cast<std::int64_t>(it->get<std::uint64_t>());
  }
  if (it->is_number_integer()) return it->get<std::int64_t>();
  cocoFail(where, array, i, key, "expected a whole number, found " + brief(*it));
}

const std::string& stringMember(const CocoJson& object, const char* array, std::size_t i,
                                const char* key, const std::string& where) {
  const auto it = object.find(key);
  if (it == object.end()) cocoFail(where, array, i, key, "missing");
  if (!it->is_string()) cocoFail(where, array, i, key, "expected a string, found " + brief(*it));
  return it->get_ref<const std::string&>();
}

/// "" for a file name that stays inside the images folder, else what is wrong with it.
std::string fileNameProblem(const std::string& name) {
  if (name.empty()) return "an empty file name";
  if (name.size() > kMaxFileNameBytes)
    return "a file name longer than " + std::to_string(kMaxFileNameBytes) + " bytes";
  if (name.find('\0') != std::string::npos)
    return "the file name " + inQuotes(name) + " holds a NUL";
  if (controlCharacterAt(name) != std::string::npos)
    return "the file name " + inQuotes(name) +
           " holds a control character; file names here are plain text";
  const bool drive =
      name.size() >= 2 && name[1] == ':' && std::isalpha(static_cast<unsigned char>(name[0]));
  if (name[0] == '/' || name[0] == '\\' || drive)
    return "the file name " + inQuotes(name) +
           " is an absolute path; file names are relative to the images folder";
  std::size_t start = 0;
  for (;;) {
    const std::size_t end = name.find_first_of("/\\", start);
    const std::string_view part = std::string_view(name).substr(
        start, end == std::string::npos ? std::string::npos : end - start);
    if (part == "..")
      return "the file name " + inQuotes(name) + " climbs out of the images folder (\"..\")";
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return "";
}

/// An id and the place in the file's array of what has it, sorted by id for lookups.
struct IdPlace {
  std::int64_t id = 0;
  std::size_t place = 0;
  bool operator<(const IdPlace& o) const { return id != o.id ? id < o.id : place < o.place; }
};

/// Sorts `ids` and refuses an id given twice, naming the later place.
void sortUnique(std::vector<IdPlace>& ids, const char* array, const std::string& where) {
  std::sort(ids.begin(), ids.end());
  for (std::size_t k = 1; k < ids.size(); ++k)
    if (ids[k].id == ids[k - 1].id)
      cocoFail(where, array, ids[k].place, "id",
               "the id " + std::to_string(ids[k].id) + " is also " + array + "[" +
                   std::to_string(ids[k - 1].place) + "]'s");
}

/// The place of `id` in sorted `ids`, or kNone.
std::size_t placeOf(const std::vector<IdPlace>& ids, std::int64_t id) {
  const auto it = std::lower_bound(ids.begin(), ids.end(), IdPlace{id, 0});
  return it != ids.end() && it->id == id ? it->place : kNone;
}

// ---- XML --------------------------------------------------------------------------------------

struct XmlElement {
  std::string name;
  std::string
      text;  ///< its own character data (CDATA included, entities replaced), not its children's
  std::size_t line = 0;
  std::vector<std::size_t> children;
};

bool isNameChar(char c) {
  return !isSpace(c) && c != '/' && c != '>' && c != '<' && c != '=' && c != '"' && c != '\'' &&
         c != '&';
}

void appendUtf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

/// A small XML reader for annotation files: elements and their text, nothing expanded.
class XmlReader {
 public:
  XmlReader(std::string_view text, const std::string& where) : m_text(text), m_where(where) {}

  /// The elements in document order; [0] is the root.
  std::vector<XmlElement> read() {
    if (m_text.size() > kMaxXmlBytes)
      throw SampleError(m_where + ": larger than 16 MiB; not a Pascal VOC annotation");
    if (startsWith(m_text, "\xEF\xBB\xBF")) moveTo(3);  // a UTF-8 byte order mark
    while (m_pos < m_text.size()) {
      const std::string_view rest = m_text.substr(m_pos);
      if (rest[0] != '<')
        characterData();
      else if (startsWith(rest, "<?"))
        skipPast(2, "?>", "processing instruction");
      else if (startsWith(rest, "<!--"))
        skipPast(4, "-->", "comment");
      else if (startsWith(rest, "<![CDATA["))
        cdata();
      else if (startsWith(rest, "<!"))
        failAt(m_pos,
               "DOCTYPE and ENTITY declarations are refused (an annotation needs none, and "
               "nothing is expanded)");
      else if (startsWith(rest, "</"))
        endTag();
      else
        startTag();
    }
    if (!m_open.empty()) {
      const XmlElement& e = m_elements[m_open.back()];
      failAt(m_pos, "unbalanced tags: <" + printable(e.name) + "> opened on line " +
                        std::to_string(e.line) + " is never closed");
    }
    if (m_elements.empty()) throw SampleError(m_where + ": no XML element in the file");
    return std::move(m_elements);
  }

 private:
  /// The line of `pos` (at or after m_pos): counted only for a message.
  std::size_t lineAt(std::size_t pos) const {
    return m_line +
           static_cast<std::size_t>(std::count(m_text.begin() + m_pos, m_text.begin() + pos, '\n'));
  }

  [[noreturn]] void failAt(std::size_t pos, const std::string& problem) const {
    throw SampleError(m_where + " line " + std::to_string(lineAt(pos)) + ": " + problem);
  }

  /// Moves forward to `pos`, counting lines on the way.
  void moveTo(std::size_t pos) {
    m_line = lineAt(pos);
    m_pos = pos;
  }

  void skipPast(std::size_t opening, std::string_view end, const char* what) {
    const std::size_t at = m_text.find(end, m_pos + opening);
    if (at == std::string_view::npos)
      failAt(m_pos, std::string("a ") + what + " that is never closed");
    moveTo(at + end.size());
  }

  void addText(std::string_view raw, std::size_t start) {
    if (m_open.empty()) {
      if (!trimmed(raw).empty()) failAt(start, "text outside the root element");
      return;
    }
    m_elements[m_open.back()].text.append(raw.data(), raw.size());
  }

  void cdata() {
    const std::size_t start = m_pos + 9;
    const std::size_t end = m_text.find("]]>", start);
    if (end == std::string_view::npos) failAt(m_pos, "a CDATA section that is never closed");
    if (m_open.empty()) failAt(m_pos, "text outside the root element");
    addText(m_text.substr(start, end - start), m_pos);
    moveTo(end + 3);
  }

  /// Text up to the next '<', its entities and character references replaced.
  void characterData() {
    std::size_t end = m_text.find('<', m_pos);
    if (end == std::string_view::npos) end = m_text.size();
    const std::string_view raw = m_text.substr(m_pos, end - m_pos);
    if (m_open.empty() || raw.find('&') == std::string_view::npos) {
      addText(raw, m_pos);
      moveTo(end);
      return;
    }
    std::string decoded;
    decoded.reserve(raw.size());
    for (std::size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] != '&') {
        decoded += raw[i];
        continue;
      }
      const std::size_t semi = raw.substr(i, 12).find(';');
      if (semi == std::string_view::npos)
        failAt(m_pos + i, "a '&' that starts no entity (write &amp; for a '&')");
      const std::string_view name = raw.substr(i + 1, semi - 1);
      if (name == "lt")
        decoded += '<';
      else if (name == "gt")
        decoded += '>';
      else if (name == "amp")
        decoded += '&';
      else if (name == "apos")
        decoded += '\'';
      else if (name == "quot")
        decoded += '"';
      else if (startsWith(name, "#"))
        decoded += characterReference(name, m_pos + i);
      else
        failAt(m_pos + i, "the entity &" + printable(std::string(name)) +
                              "; is not one of XML's five (&lt; &gt; &amp; &apos; &quot;)");
      i += semi;
    }
    addText(decoded, m_pos);
    moveTo(end);
  }

  /// "#65" or "#x41" as UTF-8.
  std::string characterReference(std::string_view name, std::size_t pos) const {
    const bool hex = name.size() > 1 && (name[1] == 'x' || name[1] == 'X');
    const std::string_view digits = name.substr(hex ? 2 : 1);
    std::uint32_t cp = 0;
    const char* end = digits.data() + digits.size();
    const auto r = std::from_chars(digits.data(), end, cp, hex ? 16 : 10);
    const bool valid = !digits.empty() && r.ec == std::errc() && r.ptr == end && cp != 0 &&
                       cp <= 0x10FFFF && (cp < 0xD800 || cp > 0xDFFF);
    if (!valid)
      failAt(pos,
             "the character reference &" + printable(std::string(name)) + "; names no character");
    std::string out;
    appendUtf8(out, cp);
    return out;
  }

  void startTag() {
    const std::size_t start = m_pos;
    std::size_t i = start + 1;
    while (i < m_text.size() && isNameChar(m_text[i]))
      ++i;
    if (i == start + 1) failAt(start, "a '<' that starts no tag (write &lt; for a '<')");
    const std::string_view name = m_text.substr(start + 1, i - start - 1);
    // Attributes are skipped; a '>' inside a quoted value does not end the tag.
    char quote = 0;
    for (; i < m_text.size(); ++i) {
      const char c = m_text[i];
      if (quote) {
        if (c == quote) quote = 0;
      } else if (c == '"' || c == '\'') {
        quote = c;
      } else if (c == '<') {
        failAt(i, "the tag <" + printable(std::string(name)) + "> is not finished with '>'");
      } else if (c == '>') {
        break;
      }
    }
    if (i >= m_text.size())
      failAt(start, "the tag <" + printable(std::string(name)) + "> is not finished with '>'");
    const bool selfClosing = m_text[i - 1] == '/';
    if (m_open.empty() && !m_elements.empty())
      failAt(start, "a second root element <" + printable(std::string(name)) + ">");
    if (m_open.size() >= kMaxXmlDepth)
      failAt(start, "elements nested deeper than " + std::to_string(kMaxXmlDepth) + " levels");
    if (m_elements.size() >= kMaxXmlElements)
      failAt(start, "more than " + std::to_string(kMaxXmlElements) + " elements");
    const std::size_t index = m_elements.size();
    XmlElement e;
    e.name = std::string(name);
    e.line = m_line;
    if (!m_open.empty()) m_elements[m_open.back()].children.push_back(index);
    m_elements.push_back(std::move(e));
    if (!selfClosing) m_open.push_back(index);
    moveTo(i + 1);
  }

  void endTag() {
    const std::size_t start = m_pos;
    std::size_t i = start + 2;
    while (i < m_text.size() && isNameChar(m_text[i]))
      ++i;
    const std::string name(m_text.substr(start + 2, i - start - 2));
    while (i < m_text.size() && isSpace(m_text[i]))
      ++i;
    if (i >= m_text.size() || m_text[i] != '>')
      failAt(start, "the end tag </" + printable(name) + "> is not finished with '>'");
    if (m_open.empty()) failAt(start, "unbalanced tags: </" + printable(name) + "> closes nothing");
    const XmlElement& top = m_elements[m_open.back()];
    if (top.name != name)
      failAt(start, "unbalanced tags: </" + printable(name) + "> closes <" + printable(top.name) +
                        "> opened on line " + std::to_string(top.line));
    m_open.pop_back();
    moveTo(i + 1);
  }

  std::string_view m_text;
  const std::string& m_where;
  std::size_t m_pos = 0;
  std::size_t m_line = 1;
  std::vector<XmlElement> m_elements;
  std::vector<std::size_t> m_open;  ///< the elements whose end tag is still to come
};

/// The first child of `parent` named `name`, or nullptr.
const XmlElement* childOf(const std::vector<XmlElement>& elements, const XmlElement& parent,
                          std::string_view name) {
  for (const std::size_t c : parent.children)
    if (elements[c].name == name) return &elements[c];
  return nullptr;
}

}  // namespace boxfmt
}  // namespace

target::Box clipBox(target::Box box, int width, int height, const std::string& where) {
  const std::string problem = boxfmt::clipInto(box, box.x0, box.y0, box.x1, box.y1, width, height);
  if (!problem.empty()) throw SampleError(where + ": " + problem);
  return box;
}

std::vector<target::Box> parseYoloLabels(const std::string& text, int width, int height,
                                         std::int64_t classes, const std::string& where) {
  if (text.size() > boxfmt::kMaxLabelBytes)
    throw SampleError(where + ": larger than 64 MiB; not a YOLO label file");
  if (width < 1 || height < 1 || width > kMaxBoxImageSide || height > kMaxBoxImageSide)
    throw SampleError(where + ": the image size " + boxfmt::sizeText(width, height) +
                      " is not one a box can lie in");
  std::vector<target::Box> boxes;
  boxfmt::Lines lines{text};
  std::string_view line;
  while (lines.next(line)) {
    const auto fail = [&](const std::string& problem) {
      return SampleError(where + " line " + std::to_string(lines.number) + ": " + problem);
    };
    // Up to five fields kept; the rest only counted, so a long line costs no memory.
    std::string_view fields[5];
    std::size_t count = 0;
    for (std::size_t i = 0; i < line.size();) {
      while (i < line.size() && boxfmt::isSpace(line[i]))
        ++i;
      if (i == line.size()) break;
      const std::size_t start = i;
      while (i < line.size() && !boxfmt::isSpace(line[i]))
        ++i;
      if (count < 5) fields[count] = line.substr(start, i - start);
      ++count;
    }
    if (count == 0) continue;
    if (count != 5) {
      if (count >= 7 && (count - 1) % 2 == 0)
        throw fail(std::to_string(count) +
                   " values: a YOLO segmentation polygon (class, then x y pairs); only boxes "
                   "(class cx cy w h) are read, so convert the polygons to boxes");
      throw fail(std::to_string(count) + " fields; a YOLO box line is `class cx cy w h`");
    }
    std::int64_t cls = 0;
    if (!boxfmt::parseWhole(fields[0], cls))
      throw fail("the class " + boxfmt::inQuotes(fields[0]) + " is not a whole number");
    if (cls < 0 || cls >= classes)
      throw fail("class " + std::to_string(cls) + " is not one of the " + std::to_string(classes) +
                 " classes (0 to " + std::to_string(classes - 1) + ")");
    static const char* const kNames[4] = {"cx", "cy", "w", "h"};
    double v[4] = {0, 0, 0, 0};
    for (int k = 0; k < 4; ++k)
      if (!boxfmt::parseReal(fields[k + 1], v[k]))
        throw fail(std::string(kNames[k]) + " " + boxfmt::inQuotes(fields[k + 1]) +
                   " is not a number");
    target::Box box;
    box.cls = cls;
    const std::string problem =
        boxfmt::clipInto(box, (v[0] - v[2] / 2) * width, (v[1] - v[3] / 2) * height,
                         (v[0] + v[2] / 2) * width, (v[1] + v[3] / 2) * height, width, height);
    if (!problem.empty()) {
      const bool pixels = v[0] > 1 || v[1] > 1 || v[2] > 1 || v[3] > 1;
      throw fail(problem +
                 (pixels ? " (YOLO values are fractions of the image's size, 0 to 1)" : ""));
    }
    boxes.push_back(box);
  }
  return boxes;
}

std::vector<std::string> parseYoloNames(const std::string& text, bool yaml,
                                        const std::string& where) {
  if (text.size() > boxfmt::kMaxNamesBytes)
    throw Error(where + ": larger than 16 MiB; not a list of class names");
  if (yaml) return boxfmt::namesFromYaml(text, where);
  std::vector<std::string> names;
  boxfmt::Lines lines{text};
  std::string_view line;
  while (lines.next(line)) {
    const std::string_view name = boxfmt::trimmed(line);
    if (name.empty()) continue;
    if (names.size() >= boxfmt::kMaxClassNames)
      throw Error(where + " line " + std::to_string(lines.number) + ": more than " +
                  std::to_string(boxfmt::kMaxClassNames) + " class names");
    names.emplace_back(name);
  }
  if (names.empty()) throw Error(where + ": holds no class names (one name per line)");
  return names;
}

namespace {
namespace boxfmt {

/// What a COCO annotation holds, kept compact until images and categories are all read (a COCO
/// file may list annotations before images).
struct CocoAnnotation {
  std::int64_t id = 0, imageId = 0, categoryId = 0;
  double bbox[4] = {0, 0, 0, 0};
  std::size_t place = 0;
  bool hasId = false, crowd = false;
};

/// The arrays of a COCO file as read, each element checked on its own.
struct CocoParts {
  std::vector<CocoImage> images;
  std::vector<IdPlace> imageIds;
  std::vector<IdPlace> categoryIds;
  std::vector<std::string> categoryNames;
  std::vector<CocoAnnotation> annotations;
  bool seen[3] = {false, false, false};  ///< images, annotations, categories
};

/// The most values one element of a COCO array may hold (an image or a category is a handful;
/// the segmentation polygons an annotation may carry are skipped unread).
constexpr std::size_t kMaxCocoElementValues = std::size_t(1) << 16;

/// Reads a COCO file as a stream of parser events (nlohmann's SAX interface): each element of
/// images, annotations and categories is built alone, checked, kept in a compact form and
/// dropped; everything else (info, licenses, segmentation polygons) is skipped unbuilt. So the
/// memory is that of what is kept, not of a document tree (a 400 MB file of empty arrays took
/// 7 GB as a tree).
class CocoReader : public nlohmann::json_sax<CocoJson> {
 public:
  CocoReader(CocoParts& parts, std::string where) : m_parts(parts), m_where(std::move(where)) {}

  bool null() override {
    return value([&] { return m_dom->null(); });
  }
  bool boolean(bool v) override {
    return value([&] { return m_dom->boolean(v); });
  }
  bool number_integer(number_integer_t v) override {
    return value([&] { return m_dom->number_integer(v); });
  }
  bool number_unsigned(number_unsigned_t v) override {
    return value([&] { return m_dom->number_unsigned(v); });
  }
  bool number_float(number_float_t v, const string_t& t) override {
    return value([&] { return m_dom->number_float(v, t); });
  }
  bool string(string_t& v) override {
    return value([&] { return m_dom->string(v); });
  }
  bool binary(binary_t& v) override {
    return value([&] { return m_dom->binary(v); });
  }

  bool start_object(std::size_t) override { return open(true); }
  bool start_array(std::size_t) override { return open(false); }
  bool end_object() override { return close(true); }
  bool end_array() override { return close(false); }

  bool key(string_t& k) override {
    if (m_depth == 1) {
      m_topKey = k;
      return true;
    }
    if (m_skipFrom > 0) return true;
    if (m_dom && m_depth == 3 && m_array == 1 && k == "segmentation") {
      // Polygons or RLE: not read (boxes only), and skipped without being built.
      m_skipFrom = m_depth + 1;
      return true;
    }
    if (m_dom) return count() && m_dom->key(k);
    return true;
  }

  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception& e) override {
    throw Error(jsonErrorMessage(m_where, "", e) + " (at byte " + std::to_string(position) + ")");
  }

 private:
  static constexpr const char* kArrays[3] = {"images", "annotations", "categories"};

  /// A scalar value: the root (not an object), a top-level member, or part of an element.
  template <class F>
  bool value(F&& toDom) {
    if (m_depth == 0) notAnObject("a single value");
    if (m_skipFrom > 0) return endSkippedValue(m_depth + 1);
    if (m_depth == 1) {
      topMember(false);  // a plain member is skipped; a kept array's name is refused
      return true;
    }
    if (m_depth == 2 && m_array >= 0) {
      // A scalar element of a kept array: built as a one-value element and checked.
      CocoJson element;
      nlohmann::detail::json_sax_dom_parser<CocoJson> dom(element, false);
      m_dom = &dom;
      toDom();
      m_dom = nullptr;
      consume(element);
      return true;
    }
    if (!m_dom) return true;
    return count() && toDom();
  }

  bool open(bool object) {
    if (m_depth == 0) {
      if (!object) notAnObject("an array");
      m_depth = 1;
      return true;
    }
    if (++m_depth > kMaxJsonDepth)
      throw Error(m_where + ": nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    if (m_skipFrom > 0) return true;
    if (m_depth == 2) {  // a top-level member's value
      if (!topMember(true)) return true;
      if (object) arrayExpected("an object");
      return true;  // a kept array starts
    }
    if (m_depth == 3 && m_array >= 0) {  // an element of a kept array
      if (m_counts[m_array] >= limit()) tooMany();
      m_element = CocoJson();
      m_domHolder.emplace(m_element, false);
      m_dom = &*m_domHolder;
      m_values = 0;
    }
    if (!m_dom) return true;
    return count() &&
           (object ? m_dom->start_object(std::size_t(-1)) : m_dom->start_array(std::size_t(-1)));
  }

  bool close(bool object) {
    const int depth = m_depth--;
    if (m_skipFrom > 0) {
      if (depth == m_skipFrom) endSkippedValue(depth);
      return true;
    }
    if (depth == 2) {  // a kept array ends
      m_array = -1;
      return true;
    }
    if (!m_dom) return true;
    const bool ok = object ? m_dom->end_object() : m_dom->end_array();
    if (depth == 3) {
      m_dom = nullptr;
      m_domHolder.reset();
      consume(m_element);
      m_element = CocoJson();
    }
    return ok;
  }

  /// A value of the top-level key m_topKey starts (`container`: an array or object): true when
  /// it is one of the kept arrays; other members are skipped.
  bool topMember(bool container) {
    int which = -1;
    for (int k = 0; k < 3; ++k)
      if (m_topKey == kArrays[k]) which = k;
    if (which < 0) {
      if (container) m_skipFrom = m_depth;
      return false;
    }
    if (!container) {
      m_array = which;
      arrayExpected("a single value");
    }
    if (m_parts.seen[which]) throw Error(m_where + ": \"" + kArrays[which] + "\" is given twice");
    m_parts.seen[which] = true;
    m_array = which;
    return true;
  }

  /// A skipped member's value or a skipped key's value at `depth` ended.
  bool endSkippedValue(int depth) {
    if (depth == m_skipFrom) m_skipFrom = 0;
    return true;
  }

  bool count() {
    if (m_dom && ++m_values > kMaxCocoElementValues)
      cocoFail(m_where, kArrays[m_array], m_counts[m_array], nullptr,
               "more than " + std::to_string(kMaxCocoElementValues) + " values in one entry");
    return true;
  }

  std::size_t limit() const { return m_array == 2 ? kMaxCocoCategories : kMaxCocoItems; }

  [[noreturn]] void tooMany() const {
    throw Error(m_where + ": " + kArrays[m_array] + ": more than " + std::to_string(limit()) +
                " entries; at most " + std::to_string(limit()) + " are read");
  }
  [[noreturn]] void notAnObject(const char* what) const {
    throw Error(m_where + ": not a COCO instances file: it holds " + what + ", not an object");
  }
  [[noreturn]] void arrayExpected(const char* found) const {
    throw Error(m_where + ": " + kArrays[m_array] + ": expected an array, found " + found);
  }

  /// One finished element of the array m_array.
  void consume(const CocoJson& element) {
    const std::size_t i = m_counts[m_array]++;
    if (m_counts[m_array] > limit()) tooMany();
    switch (m_array) {
      case 0:
        image(element, i);
        break;
      case 1:
        annotation(element, i);
        break;
      default:
        category(element, i);
    }
  }

  void image(const CocoJson& im, std::size_t i) {
    if (!im.is_object())
      cocoFail(m_where, "images", i, nullptr,
               std::string("expected an object, found a ") + im.type_name());
    CocoImage image;
    image.id = wholeMember(im, "images", i, "id", m_where);
    image.file = stringMember(im, "images", i, "file_name", m_where);
    const std::string problem = fileNameProblem(image.file);
    if (!problem.empty()) cocoFail(m_where, "images", i, "file_name", problem);
    for (const char* key : {"width", "height"}) {
      const std::int64_t side = wholeMember(im, "images", i, key, m_where);
      if (side < 1 || side > kMaxBoxImageSide)
        cocoFail(m_where, "images", i, key,
                 std::to_string(side) + " is not a side from 1 to " +
                     std::to_string(kMaxBoxImageSide) + " pixels");
      (key[0] == 'w' ? image.width : image.height) = static_cast<int>(side);
    }
    m_parts.imageIds.push_back({image.id, i});
    m_parts.images.push_back(std::move(image));
  }

  void category(const CocoJson& c, std::size_t i) {
    if (!c.is_object())
      cocoFail(m_where, "categories", i, nullptr,
               std::string("expected an object, found a ") + c.type_name());
    m_parts.categoryIds.push_back({wholeMember(c, "categories", i, "id", m_where), i});
    m_parts.categoryNames.push_back(stringMember(c, "categories", i, "name", m_where));
    if (m_parts.categoryNames.back().empty())
      cocoFail(m_where, "categories", i, "name", "an empty name");
  }

  void annotation(const CocoJson& a, std::size_t i) {
    if (!a.is_object())
      cocoFail(m_where, "annotations", i, nullptr,
               std::string("expected an object, found a ") + a.type_name());
    CocoAnnotation r;
    r.place = i;
    r.hasId = a.contains("id");
    r.id = wholeMember(a, "annotations", i, "id", m_where, true);
    r.imageId = wholeMember(a, "annotations", i, "image_id", m_where);
    r.categoryId = wholeMember(a, "annotations", i, "category_id", m_where);
    const auto bbox = a.find("bbox");
    if (bbox == a.end()) cocoFail(m_where, "annotations", i, "bbox", "missing");
    if (!bbox->is_array() || bbox->size() != 4 ||
        !std::all_of(bbox->begin(), bbox->end(), [](const CocoJson& v) { return v.is_number(); }))
      cocoFail(m_where, "annotations", i, "bbox",
               "expected [x, y, width, height] (4 numbers), found " + brief(*bbox));
    for (int k = 0; k < 4; ++k)
      r.bbox[k] = (*bbox)[std::size_t(k)].get<double>();
    const auto crowd = a.find("iscrowd");
    if (crowd != a.end()) {
      if (crowd->is_boolean())
        r.crowd = crowd->get<bool>();
      else if (crowd->is_number_integer() &&
               (crowd->get<std::int64_t>() == 0 || crowd->get<std::int64_t>() == 1))
        r.crowd = crowd->get<std::int64_t>() == 1;
      else
        cocoFail(m_where, "annotations", i, "iscrowd", "expected 0 or 1, found " + brief(*crowd));
    }
    m_parts.annotations.push_back(r);
  }

  CocoParts& m_parts;
  std::string m_where;
  int m_depth = 0;       ///< 1 inside the root object
  std::string m_topKey;  ///< the root's member being read
  int m_array = -1;      ///< the kept array being read (kArrays), or -1
  int m_skipFrom = 0;    ///< the depth of a value being skipped, or 0
  std::size_t m_counts[3] = {0, 0, 0};
  std::size_t m_values = 0;  ///< values in the element being built
  CocoJson m_element;
  std::optional<nlohmann::detail::json_sax_dom_parser<CocoJson>> m_domHolder;
  nlohmann::detail::json_sax_dom_parser<CocoJson>* m_dom = nullptr;
};

/// Refuses a file without all three of images, annotations and categories.
void requireCocoArrays(const CocoParts& parts, const std::string& where) {
  for (int k = 0; k < 3; ++k)
    if (!parts.seen[k])
      throw Error(where + ": no \"" +
                  std::vector<std::string>{"images", "annotations", "categories"}[std::size_t(k)] +
                  "\" array; not a COCO instances file");
}

/// Refuses two images naming one file.
void refuseSharedCocoFiles(const std::vector<CocoImage>& images, const std::string& where) {
  // Two images naming one file would put each one's boxes on the same picture.
  std::vector<std::pair<std::string, std::size_t>> byFile;
  byFile.reserve(images.size());
  for (std::size_t i = 0; i < images.size(); ++i)
    byFile.emplace_back(images[i].file, i);
  std::sort(byFile.begin(), byFile.end());
  for (std::size_t k = 1; k < byFile.size(); ++k)
    if (byFile[k].first == byFile[k - 1].first)
      cocoFail(where, "images", byFile[k].second, "file_name",
               "the file " + inQuotes(byFile[k].first) + " is also images[" +
                   std::to_string(byFile[k - 1].second) +
                   "]'s; each image is listed once (merge their annotations under one id)");
}

/// Refuses two categories of one name.
void refuseRepeatedCocoCategoryNames(const std::vector<std::string>& categoryNames,
                                     const std::string& where) {
  std::vector<std::pair<std::string, std::size_t>> byName;
  byName.reserve(categoryNames.size());
  for (std::size_t i = 0; i < categoryNames.size(); ++i)
    byName.emplace_back(categoryNames[i], i);
  std::sort(byName.begin(), byName.end());
  for (std::size_t k = 1; k < byName.size(); ++k)
    if (byName[k].first == byName[k - 1].first)
      cocoFail(where, "categories", byName[k].second, "name",
               "the name " + inQuotes(byName[k].first) + " is also categories[" +
                   std::to_string(byName[k - 1].second) + "]'s");
}

/// Gives each category its class (the categories by id, or the project's `classes` by name)
/// and fills `out`'s categories and category ids; returns the class of each category, by its
/// place in the file's categories.
std::vector<std::int64_t> assignCocoClasses(const std::vector<IdPlace>& categoryIds,
                                            const std::vector<std::string>& categoryNames,
                                            const std::vector<std::string>& classes,
                                            const std::string& where, CocoDataset& out) {
  // classOfCategory[place in the file's categories] = class index.
  std::vector<std::int64_t> classOfCategory(categoryNames.size(), 0);
  if (classes.empty()) {
    for (std::size_t rank = 0; rank < categoryIds.size(); ++rank) {
      classOfCategory[categoryIds[rank].place] = static_cast<std::int64_t>(rank);
      out.categories.push_back(categoryNames[categoryIds[rank].place]);
      out.categoryIds.push_back(categoryIds[rank].id);
    }
  } else {
    std::map<std::string, std::int64_t> classIndex;
    for (std::size_t k = 0; k < classes.size(); ++k)
      classIndex.emplace(classes[k], static_cast<std::int64_t>(k));  // the first of a repeat
    out.categoryIds.assign(classes.size(), -1);
    for (std::size_t i = 0; i < categoryNames.size(); ++i) {
      const auto it = classIndex.find(categoryNames[i]);
      if (it == classIndex.end())
        cocoFail(where, "categories", i, "name",
                 "the category " + inQuotes(categoryNames[i]) +
                     " is not one of the project's classes (" + knownClasses(classes) + ")");
      classOfCategory[i] = it->second;
    }
    for (const auto& c : categoryIds)
      out.categoryIds[std::size_t(classOfCategory[c.place])] = c.id;
    out.categories = classes;
  }
  return classOfCategory;
}

/// Puts each annotation's box on its image in `out`, of its category's class; an annotation
/// naming no image or category, or whose box clips to nothing, is an error (or skipped).
void linkCocoAnnotations(const CocoParts& parts, const std::vector<IdPlace>& categoryIds,
                         const std::vector<std::int64_t>& classOfCategory, bool skipBad,
                         const std::string& where, CocoDataset& out) {
  for (const CocoAnnotation& a : parts.annotations) {
    const std::size_t i = a.place;
    target::Box box;
    box.crowd = a.crowd;
    const char* badKey = nullptr;
    std::string problem;
    const std::size_t imagePlace = placeOf(parts.imageIds, a.imageId);
    const std::size_t categoryPlace = placeOf(categoryIds, a.categoryId);
    if (imagePlace == kNone) {
      badKey = "image_id";
      problem = "image_id " + std::to_string(a.imageId) + " names no image in images";
    } else if (categoryPlace == kNone) {
      badKey = "category_id";
      problem = "category_id " + std::to_string(a.categoryId) + " names no category in categories";
    } else {
      const CocoImage& image = out.images[imagePlace];
      const double x = a.bbox[0], y = a.bbox[1], w = a.bbox[2], h = a.bbox[3];
      problem = clipInto(box, x, y, x + w, y + h, image.width, image.height);
      if (!problem.empty()) {
        badKey = "bbox";
        problem += " (image " + inQuotes(image.file) + ")";
      }
    }
    if (!problem.empty()) {
      if (!skipBad) cocoFail(where, "annotations", i, badKey, problem);
      out.skipped.push_back({where + (a.hasId ? " annotation " + std::to_string(a.id)
                                              : " annotations[" + std::to_string(i) + "]"),
                             problem});
      continue;
    }
    box.cls = classOfCategory[categoryPlace];
    out.images[imagePlace].boxes.push_back(box);
  }
}

/// Images, categories and annotations read: linked into the data set (ids resolved, classes
/// assigned, boxes clipped).
CocoDataset linkCoco(CocoParts& parts, const std::vector<std::string>& classes, bool skipBad,
                     const std::string& where) {
  requireCocoArrays(parts, where);
  CocoDataset out;
  out.images = std::move(parts.images);
  sortUnique(parts.imageIds, "images", where);
  refuseSharedCocoFiles(out.images, where);

  // Categories: their ids, and each one's class.
  auto& categoryIds = parts.categoryIds;
  const auto& categoryNames = parts.categoryNames;
  sortUnique(categoryIds, "categories", where);
  refuseRepeatedCocoCategoryNames(categoryNames, where);
  const std::vector<std::int64_t> classOfCategory =
      assignCocoClasses(categoryIds, categoryNames, classes, where, out);

  linkCocoAnnotations(parts, categoryIds, classOfCategory, skipBad, where, out);
  return out;
}

// ---- Pascal VOC -------------------------------------------------------------------------------

/// A Pascal VOC file's elements as read, and `where` to name it in messages.
struct VocDocument {
  const std::vector<XmlElement>& elements;
  const std::string& where;

  /// The error to throw for `problem` at element `at` (its line named).
  SampleError fail(const XmlElement& at, const std::string& problem) const {
    return SampleError(where + " line " + std::to_string(at.line) + ": " + problem);
  }
  /// The first child of `parent` named `name`, or nullptr.
  const XmlElement* child(const XmlElement& parent, std::string_view name) const {
    return childOf(elements, parent, name);
  }
};

/// Reads <size>'s <width> and <height> into `out`: whole numbers of pixels, both required.
void readVocSize(const VocDocument& doc, const XmlElement& root, VocAnnotation& out) {
  const XmlElement* size = doc.child(root, "size");
  if (!size)
    throw doc.fail(root,
                   "no <size> in <annotation>; the image's width and height are needed to "
                   "check its boxes");
  for (const char* key : {"width", "height"}) {
    const XmlElement* e = doc.child(*size, key);
    if (!e) throw doc.fail(*size, std::string("<size> has no <") + key + ">");
    double side = 0;
    const std::string_view t = trimmed(e->text);
    if (!parseReal(t, side) || side != std::floor(side) || side < 1 || side > kMaxBoxImageSide)
      throw doc.fail(*e, std::string("<") + key + "> " + inQuotes(t) +
                             " is not a whole number of pixels from 1 to " +
                             std::to_string(kMaxBoxImageSide));
    (key[0] == 'w' ? out.width : out.height) = static_cast<int>(side);
  }
}

/// Reads <bndbox>'s <xmin>, <ymin>, <xmax> and <ymax> into `v`, in that order.
void readVocBndbox(const VocDocument& doc, const XmlElement& bndbox, double (&v)[4]) {
  static const char* const kKeys[4] = {"xmin", "ymin", "xmax", "ymax"};
  for (int k = 0; k < 4; ++k) {
    const XmlElement* e = doc.child(bndbox, kKeys[k]);
    if (!e) throw doc.fail(bndbox, std::string("<bndbox> has no <") + kKeys[k] + ">");
    const std::string_view t = trimmed(e->text);
    if (!parseReal(t, v[k]))
      throw doc.fail(*e, std::string("<") + kKeys[k] + "> " + inQuotes(t) + " is not a number");
  }
}

/// Reads one <object>: its class by <name> (in `classIndex`, of the project's `classes`),
/// <difficult> and <bndbox>, clipped to the image of `width` x `height`.
target::Box readVocObject(const VocDocument& doc, const XmlElement& object,
                          const std::map<std::string, std::int64_t>& classIndex,
                          const std::vector<std::string>& classes, int width, int height) {
  const XmlElement* nameElement = doc.child(object, "name");
  const std::string name = nameElement ? std::string(trimmed(nameElement->text)) : "";
  if (name.empty()) throw doc.fail(object, "an <object> without a <name>");
  const auto it = classIndex.find(name);
  if (it == classIndex.end())
    throw doc.fail(*nameElement, "the object class " + inQuotes(name) +
                                     " is not one of the project's classes (" +
                                     knownClasses(classes) + ")");
  target::Box box;
  box.cls = it->second;
  if (const XmlElement* d = doc.child(object, "difficult")) {
    const std::string_view t = trimmed(d->text);
    if (t == "1")
      box.difficult = true;
    else if (t != "0" && !t.empty())  // an empty <difficult/> is not difficult
      throw doc.fail(*d, "<difficult> must be 0 or 1, found " + inQuotes(t));
  }
  const XmlElement* bndbox = doc.child(object, "bndbox");
  if (!bndbox) throw doc.fail(object, "the object " + inQuotes(name) + " has no <bndbox>");
  double v[4] = {0, 0, 0, 0};
  readVocBndbox(doc, *bndbox, v);
  // VOC's pixels run from 1 and its boxes include their last pixel.
  const std::string problem = clipInto(box, v[0] - 1, v[1] - 1, v[2], v[3], width, height);
  if (!problem.empty()) throw doc.fail(*bndbox, "the object " + inQuotes(name) + ": " + problem);
  return box;
}

}  // namespace boxfmt
}  // namespace

CocoDataset parseCoco(const std::string& text, const std::vector<std::string>& classes,
                      bool skipBad, const std::string& where) {
  boxfmt::CocoParts parts;
  boxfmt::CocoReader reader(parts, where);
  boxfmt::CocoJson::sax_parse(text, &reader);
  return boxfmt::linkCoco(parts, classes, skipBad, where);
}

CocoDataset readCocoFile(const std::string& path, const std::vector<std::string>& classes,
                         bool skipBad, const std::string& where) {
  requireRegularFile(path);
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(path, ec);
  if (ec) throw Error(where + ": cannot read (" + ec.message() + ")");
  if (bytes > kMaxCocoBytes)
    throw Error(where + ": " + std::to_string(bytes) + " bytes; a COCO file of at most " +
                std::to_string(kMaxCocoBytes >> 20) + " MiB is read");
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) throw Error(where + ": cannot open (" + std::strerror(errno) + ")");
  const std::unique_ptr<std::FILE, int (*)(std::FILE*)> closer(file, &std::fclose);
  boxfmt::CocoParts parts;
  boxfmt::CocoReader reader(parts, where);
  boxfmt::CocoJson::sax_parse(file, &reader);
  return boxfmt::linkCoco(parts, classes, skipBad, where);
}

std::vector<std::string> vocObjectNames(const std::string& text, const std::string& where) {
  using boxfmt::XmlElement;
  const std::vector<XmlElement> elements = boxfmt::XmlReader(text, where).read();
  const XmlElement& root = elements[0];
  if (root.name != "annotation")
    throw SampleError(where + " line " + std::to_string(root.line) + ": the root element is <" +
                      printable(root.name) + ">, not <annotation>; not a Pascal VOC annotation");
  std::vector<std::string> names;
  for (const std::size_t c : root.children) {
    const XmlElement& object = elements[c];
    if (object.name != "object") continue;
    if (const XmlElement* n = boxfmt::childOf(elements, object, "name"))
      if (auto name = std::string(boxfmt::trimmed(n->text)); !name.empty())
        names.push_back(std::move(name));
  }
  return names;
}

VocAnnotation parseVoc(const std::string& text, const std::vector<std::string>& classes,
                       const std::string& where) {
  using boxfmt::XmlElement;
  const std::vector<XmlElement> elements = boxfmt::XmlReader(text, where).read();
  const boxfmt::VocDocument doc{elements, where};
  const XmlElement& root = elements[0];
  if (root.name != "annotation")
    throw doc.fail(root, "the root element is <" + printable(root.name) +
                             ">, not <annotation>; not a Pascal VOC annotation");

  VocAnnotation out;
  if (const XmlElement* file = doc.child(root, "filename"))
    out.file = std::string(boxfmt::trimmed(file->text));
  boxfmt::readVocSize(doc, root, out);

  std::map<std::string, std::int64_t> classIndex;
  for (std::size_t k = 0; k < classes.size(); ++k)
    classIndex.emplace(classes[k], static_cast<std::int64_t>(k));  // the first of a repeat

  // Only <object> children of <annotation>: a <part> inside an <object> has a <name> and a
  // <bndbox> too, and is no object of its own.
  for (const std::size_t c : root.children) {
    const XmlElement& object = elements[c];
    if (object.name != "object") continue;
    out.boxes.push_back(
        boxfmt::readVocObject(doc, object, classIndex, classes, out.width, out.height));
  }
  return out;
}

}  // namespace netsmith::data
