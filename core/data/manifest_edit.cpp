#include "data/manifest_edit.h"

#include <algorithm>
#include <filesystem>
#include <utility>
#include <vector>

#include "common/error.h"
#include "common/file_util.h"
#include "data/csv_table.h"

namespace netsmith::data {

namespace fs = std::filesystem;

namespace {

struct FoundRow {
  CsvTable table;
  std::size_t row = 0;  ///< into table.rows
  int labelCol = -1;
  const CsvRow& found() const { return table.rows[row]; }
};

FoundRow findRow(const std::string& manifest, const std::string& image) {
  std::error_code ec;
  if (fs::is_symlink(fs::symlink_status(manifest, ec)))
    throw Error(manifest + ": is a link; relabel the file it points to in its own project");
  FoundRow out;
  out.table = readCsvTable(manifest, manifest, "path,label");
  const int pathCol = out.table.column("path");
  out.labelCol = out.table.column("label");
  if (pathCol < 0 || out.labelCol < 0)
    throw Error(manifest + ": line " + std::to_string(out.table.headerLine) +
                ": the header must have columns \"path\" and \"label\"");
  const fs::path base = fs::path(manifest).parent_path();
  for (std::size_t i = 0; i < out.table.rows.size(); ++i) {
    const auto& cells = out.table.rows[i].cells;
    if (cells.size() <= std::size_t(std::max(pathCol, out.labelCol))) continue;
    std::string reason;
    const auto file = manifestImage(base, cells[std::size_t(pathCol)], reason);
    if (file && *file == image) {
      out.row = i;
      return out;
    }
  }
  throw Error(manifest + ": no row names " + image);
}

}  // namespace

std::string manifestLabel(const std::string& manifest, const std::string& image) {
  const FoundRow f = findRow(manifest, image);
  return f.found().cells[std::size_t(f.labelCol)];
}

std::size_t setMove(const std::string& list, const std::string& from, const std::string& to) {
  std::error_code ec;
  const auto status = fs::symlink_status(list, ec);
  if (fs::is_symlink(status)) throw Error(list + ": is a link; the move list is not written");
  // The doctor's folder of a received project may itself be a planted link.
  const auto parent = fs::path(list).parent_path();
  if (!parent.empty()) requireRealFolder(parent.string());
  std::vector<std::pair<std::string, std::string>> rows;
  if (fs::exists(status)) {
    const CsvTable table = readCsvTable(list, list, "from,to");
    const int f = table.column("from"), t = table.column("to");
    if (f < 0 || t < 0) throw Error(list + ": the header must be \"from,to\"");
    for (const auto& row : table.rows)
      if (row.cells.size() > std::size_t(std::max(f, t)))
        rows.emplace_back(csvTextValue(row.cells[std::size_t(f)]),
                          csvTextValue(row.cells[std::size_t(t)]));
  }
  rows.erase(
      std::remove_if(rows.begin(), rows.end(), [&](const auto& r) { return r.first == from; }),
      rows.end());
  if (!to.empty()) rows.emplace_back(from, to);
  std::string text = "from,to\n";
  for (const auto& [a, b] : rows)
    text += csvTextCell(a) + "," + csvTextCell(b) + "\n";
  writeFileAtomically(list, text);
  return rows.size();
}

ManifestRelabel relabelInManifest(const std::string& manifest, const std::string& image,
                                  const std::string& expected, const std::string& label) {
  const FoundRow f = findRow(manifest, image);
  const CsvRow* found = &f.found();
  const int labelCol = f.labelCol;
  const std::string at = manifest + ": line " + std::to_string(found->line);
  const std::string current = found->cells[std::size_t(labelCol)];
  if (current != expected)
    throw Error(at + ": the label is \"" + current + "\", not \"" + expected +
                "\" (the file changed since it was read); nothing written");
  if (label.empty() || label.find_first_of("\r\n") != std::string::npos)
    throw Error(at + ": a label must be one non-empty line");

  // The row's line rebuilt from its cells with the new label; every other byte kept.
  const std::string text = readTextFile(manifest);
  std::size_t start = 0;
  for (int n = 1; n < found->line; ++n) {
    start = text.find('\n', start);
    if (start == std::string::npos) throw Error(at + ": the file changed while it was read");
    ++start;
  }
  std::size_t end = text.find('\n', start);
  if (end == std::string::npos) end = text.size();
  const bool cr = end > start && text[end - 1] == '\r';
  std::vector<std::string> cells = splitCsvLine(text.substr(start, end - start - (cr ? 1 : 0)));
  if (cells.size() <= std::size_t(labelCol) || cells[std::size_t(labelCol)] != current)
    throw Error(at + ": the file changed while it was read");
  cells[std::size_t(labelCol)] = label;
  std::string line;
  for (std::size_t i = 0; i < cells.size(); ++i)
    line += (i ? "," : "") + csvCell(cells[i]);
  writeFileAtomically(manifest, text.substr(0, start) + line + (cr ? "\r" : "") + text.substr(end));
  return {manifest, found->line, current, label};
}

}  // namespace netsmith::data
