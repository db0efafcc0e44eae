#include "data/csv_table.h"

#include <algorithm>
#include <cstdint>

#include "common/error.h"
#include "common/file_util.h"

namespace netsmith::data {

namespace fs = std::filesystem;

namespace {

/// Bounds that keep a manifest from someone else from costing more memory than its meaning:
/// every cell is kept until the source has checked it (about 32 bytes each plus its text).
constexpr std::size_t kMaxColumns = 10000;
constexpr std::size_t kMaxCells = 20'000'000;
constexpr std::size_t kMaxCellBytes = 65536;
constexpr std::uint64_t kMaxManifestBytes = std::uint64_t(1) << 30;

}  // namespace

int CsvTable::column(const std::string& name) const {
  for (std::size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return static_cast<int>(i);
  return -1;
}

std::vector<std::string> splitCsvLine(const std::string& line, std::size_t maxCells) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cur += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cur += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.push_back(cur);
      cur.clear();
      if (out.size() > maxCells) return out;  // the caller names the line
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  for (auto& s : out) {
    const auto b = s.find_first_not_of(" \t\r");
    const auto e = s.find_last_not_of(" \t\r");
    s = b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
  }
  return out;
}

std::string csvCell(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

namespace {
bool formulaStart(const std::string& text) {
  return !text.empty() && std::string("=+-@\t\r").find(text[0]) != std::string::npos;
}
}  // namespace

std::string csvTextCell(const std::string& text) {
  // A text that already starts with ' and a formula character gets one more, so that
  // csvTextValue() gives it back whole.
  const bool quoted = text.size() >= 2 && text[0] == '\'' && formulaStart(text.substr(1));
  return csvCell(formulaStart(text) || quoted ? "'" + text : text);
}

namespace {
/// `text` starts with ' and then a formula character, or with '' and then one.
bool neutralised(const std::string& text) {
  if (text.size() < 2 || text[0] != '\'') return false;
  return formulaStart(text.substr(1)) ||
         (text.size() >= 3 && text[1] == '\'' && formulaStart(text.substr(2)));
}
}  // namespace

std::string csvTextValue(const std::string& cell) {
  return neutralised(cell) ? cell.substr(1) : cell;
}

CsvTable readCsvTable(const std::string& file, const std::string& where,
                      const std::string& header) {
  std::error_code ec;
  if (!fs::exists(file, ec)) throw Error(where + ": file not found");
  const std::string text = readTextFile(file, kMaxManifestBytes);
  // Past a UTF-8 byte-order mark; lines read in place (no copy of the file).
  std::size_t pos = text.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0;
  std::string line;
  int lineNo = 0;
  CsvTable table;
  bool haveHeader = false;
  std::size_t cellCount = 0;
  while (pos < text.size()) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    line.assign(text, pos, end - pos);
    pos = end + 1;
    ++lineNo;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto cells = splitCsvLine(line, kMaxColumns);
    const auto at = [&] { return where + ": line " + std::to_string(lineNo) + ": "; };
    if (cells.size() > kMaxColumns)
      throw Error(at() + "more than " + std::to_string(kMaxColumns) + " columns");
    for (const auto& c : cells)
      if (c.size() > kMaxCellBytes)
        throw Error(at() + "a cell of " + std::to_string(c.size()) + " bytes; at most " +
                    std::to_string(kMaxCellBytes));
    cellCount += cells.size();
    if (cellCount > kMaxCells)
      throw Error(at() + "more than " + std::to_string(kMaxCells) +
                  " cells in the file; split the manifest");
    if (!haveHeader) {
      table.header = std::move(cells);
      table.headerLine = lineNo;
      // As messages quote it: without the CR of a CRLF file, control characters escaped.
      std::string shown = line;
      while (!shown.empty() && (shown.back() == '\r' || shown.back() == ' '))
        shown.pop_back();
      table.headerText = printable(shown.size() > 200 ? shown.substr(0, 200) + "..." : shown);
      haveHeader = true;
      continue;
    }
    table.rows.push_back({std::move(cells), lineNo});
  }
  if (!haveHeader)
    throw Error(where + ": empty manifest; expected a header line \"" + header + "\"");
  return table;
}

std::optional<std::string> manifestImage(const fs::path& base, const std::string& cell,
                                         std::string& reason) {
  if (cell.empty()) {
    reason = "empty path";
    return std::nullopt;
  }
  fs::path p(cell);
  if (p.is_relative()) p = base / p;
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) {
    reason = "image not found: " + p.string();
    return std::nullopt;
  }
  return p.lexically_normal().string();
}

}  // namespace netsmith::data
