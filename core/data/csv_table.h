#pragma once

// Reading the CSV manifests every manifest source takes: UTF-8 with or without a byte-order
// mark (Excel's "CSV UTF-8"), LF or CRLF line ends, RFC 4180 quoted fields (no embedded
// newlines), blank lines skipped, cells trimmed. No OpenCV, no LibTorch.
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace netsmith::data {

struct CsvRow {
  std::vector<std::string> cells;
  int line = 0;  ///< 1-based, as an editor numbers it
};

struct CsvTable {
  std::vector<std::string> header;
  int headerLine = 0;
  std::string headerText;  ///< the header line as written
  std::vector<CsvRow> rows;
  /// The column named `name`, or -1.
  int column(const std::string& name) const;
};

/// Splits one CSV line (RFC 4180 quotes), each cell trimmed of spaces, tabs and CR; stops after
/// `maxCells` + 1 cells (the caller refuses the line).
std::vector<std::string> splitCsvLine(const std::string& line,
                                      std::size_t maxCells = std::size_t(-1));

/// `text` as one CSV cell: quoted (quotes doubled) when it holds a comma, quote or line end.
std::string csvCell(const std::string& text);

/// csvCell() for a text cell of a CSV that Netsmith writes for people to open (predictions,
/// rankings, embeddings, move lists): a cell starting with `=`, `+`, `-`, `@`, a tab or a
/// carriage return gets a leading `'`, so a spreadsheet shows it as text instead of running it
/// as a formula. Not for numbers (a negative number stays a number: write it with csvCell).
///   csvTextCell("=HYPERLINK(\"x\")")  // -> "'=HYPERLINK(""x"")" (quoted)
std::string csvTextCell(const std::string& text);

/// The text csvTextCell() was given, from the cell as read back.
std::string csvTextValue(const std::string& cell);

/// Reads `file` (at most 1 GiB). Throws netsmith::Error "<where>: file not found",
/// "<where>: empty manifest; expected a header line \"<header>\"", or naming the line where the
/// file passes a bound (10,000 columns, 64 KiB in a cell, 20 million cells).
CsvTable readCsvTable(const std::string& file, const std::string& where, const std::string& header);

/// The image a manifest row names (relative paths against `base`, the manifest's folder),
/// normalised; nothing, with `reason` set ("empty path", "image not found: ..."), when there is
/// no such file.
std::optional<std::string> manifestImage(const std::filesystem::path& base, const std::string& cell,
                                         std::string& reason);

}  // namespace netsmith::data
