#include "data/manifest_edit.h"

#include <filesystem>

#include "common/error.h"
#include "common/file_util.h"
#include "data/csv_table.h"

namespace netsmith::data {

namespace fs = std::filesystem;

ManifestRelabel relabelInManifest(const std::string& manifest, const std::string& image,
                                  const std::string& expected, const std::string& label) {
  std::error_code ec;
  if (fs::is_symlink(fs::symlink_status(manifest, ec)))
    throw Error(manifest + ": is a link; relabel the file it points to in its own project");
  const CsvTable table = readCsvTable(manifest, manifest, "path,label");
  const int pathCol = table.column("path"), labelCol = table.column("label");
  if (pathCol < 0 || labelCol < 0)
    throw Error(manifest + ": line " + std::to_string(table.headerLine) +
                ": the header must have columns \"path\" and \"label\"");
  const fs::path base = fs::path(manifest).parent_path();
  const CsvRow* found = nullptr;
  for (const auto& row : table.rows) {
    if (row.cells.size() <= std::size_t(std::max(pathCol, labelCol))) continue;
    std::string reason;
    const auto file = manifestImage(base, row.cells[std::size_t(pathCol)], reason);
    if (file && *file == image) {
      found = &row;
      break;
    }
  }
  if (!found) throw Error(manifest + ": no row names " + image);
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
