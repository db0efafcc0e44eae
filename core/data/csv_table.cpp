#include "data/csv_table.h"

#include <sstream>

#include "common/error.h"
#include "common/file_util.h"

namespace netsmith::data {

namespace fs = std::filesystem;

int CsvTable::column(const std::string& name) const {
  for (std::size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return static_cast<int>(i);
  return -1;
}

std::vector<std::string> splitCsvLine(const std::string& line) {
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

CsvTable readCsvTable(const std::string& file, const std::string& where,
                      const std::string& header) {
  std::error_code ec;
  if (!fs::exists(file, ec)) throw Error(where + ": file not found");
  std::string text = readTextFile(file);
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) text.erase(0, 3);  // UTF-8 byte-order mark
  std::istringstream in(text);
  std::string line;
  int lineNo = 0;
  CsvTable table;
  bool haveHeader = false;
  while (std::getline(in, line)) {
    ++lineNo;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (!haveHeader) {
      table.header = splitCsvLine(line);
      table.headerLine = lineNo;
      table.headerText = line;
      haveHeader = true;
      continue;
    }
    table.rows.push_back({splitCsvLine(line), lineNo});
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
