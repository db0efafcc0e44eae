// CSV manifests: a header with `path` and `label` columns (others ignored); paths relative to
// the CSV's folder; labels are class indices or class names, one kind for the whole file.
// UTF-8 with or without a byte-order mark (Excel's "CSV UTF-8"), LF or CRLF line ends, RFC 4180
// quoted fields.
#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "data/csv_table.h"
#include "data/dataset_source.h"

namespace netsmith::data {

namespace {

namespace fs = std::filesystem;

/// More classes than any classifier here is built for; a label past it is a mistake.
constexpr std::int64_t kMaxClasses = 100000;

bool parseIndex(const std::string& s, std::int64_t& out) {
  const std::size_t start = (s.size() > 1 && s[0] == '-') ? 1 : 0;
  if (s.empty() || s.size() > 10) return false;
  for (std::size_t i = start; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  out = std::stoll(s);
  return true;
}

/// A manifest row with a path and a label, as written, and its line in the file.
struct CsvManifestRow {
  std::string path, label;
  int line;
};

/// What a manifest's labels hold: the largest class index, the class names, and the first row
/// of each kind (pointing into the rows scanned).
struct CsvLabelScan {
  bool numeric = true;
  std::int64_t maxIndex = -1;
  std::set<std::string> names;
  const CsvManifestRow* firstIndex = nullptr;
  const CsvManifestRow* firstName = nullptr;
};

/// Refuses labels of both kinds, class indices and class names, in one manifest.
void checkCsvLabelKinds(const CsvLabelScan& scan, const std::string& where) {
  if (scan.firstIndex && scan.firstName) {
    // A label 0 next to "cat" is ambiguous: refuse rather than guess.
    const bool indexFirst = scan.firstIndex->line < scan.firstName->line;
    const CsvManifestRow& odd = indexFirst ? *scan.firstName : *scan.firstIndex;
    const CsvManifestRow& first = indexFirst ? *scan.firstIndex : *scan.firstName;
    throw Error(where + ": line " + std::to_string(odd.line) + ": label \"" + odd.label +
                "\" is a class " + (indexFirst ? "name" : "index") + " but line " +
                std::to_string(first.line) + "'s label \"" + first.label + "\" is a class " +
                (indexFirst ? "index" : "name") +
                "; use one kind for every row (class names, or indices 0..N-1)");
  }
}

/// Scans the labels of `rows`; an index past kMaxClasses, too many names, or indices and names
/// mixed are refused.
CsvLabelScan scanCsvLabels(const std::vector<CsvManifestRow>& rows, const std::string& where) {
  CsvLabelScan scan;
  for (const auto& r : rows) {
    std::int64_t k = 0;
    if (parseIndex(r.label, k)) {
      if (k >= kMaxClasses) {
        throw Error(where + ": line " + std::to_string(r.line) + ": label " + r.label +
                    " would make " + std::to_string(k + 1) + " classes; at most " +
                    std::to_string(kMaxClasses) + " (labels are class indices 0..N-1)");
      }
      scan.maxIndex = std::max(scan.maxIndex, k);
      if (!scan.firstIndex) scan.firstIndex = &r;
    } else {
      scan.numeric = false;
      scan.names.insert(r.label);
      if (!scan.firstName) scan.firstName = &r;
    }
  }
  if (std::int64_t(scan.names.size()) > kMaxClasses) {
    throw Error(where + ": " + std::to_string(scan.names.size()) +
                " different class names; at most " + std::to_string(kMaxClasses));
  }
  checkCsvLabelKinds(scan, where);
  return scan;
}

class CsvSource : public FileListSource {
 public:
  CsvSource(const SourceSpec& spec, const std::vector<std::string>& classes, ErrorPolicy policy) {
    const std::string where = spec.path + ".manifest: " + spec.manifest;
    const CsvTable table = readCsvTable(spec.manifest, where, "path,label");
    const fs::path base = fs::path(spec.manifest).parent_path();
    const int pathCol = table.column("path"), labelCol = table.column("label");
    if (pathCol < 0 || labelCol < 0) {
      throw Error(
          where + ": line " + std::to_string(table.headerLine) +
          ": the header must have columns \"path\" and \"label\"; found: " + table.headerText);
    }
    const std::vector<CsvManifestRow> rows =
        readRows(spec, table, pathCol, labelCol, where, policy);

    // Class names: the project's, else names found in the file (sorted), else indices.
    const CsvLabelScan scan = scanCsvLabels(rows, where);
    chooseClasses(classes, scan);
    addRows(rows, spec, base, where, policy);
    if (m_files.empty()) throw Error(where + ": no usable rows");
  }

 private:
  /// The table's rows as path and label; a row without both columns is failed.
  std::vector<CsvManifestRow> readRows(const SourceSpec& spec, const CsvTable& table, int pathCol,
                                       int labelCol, const std::string& where, ErrorPolicy policy) {
    std::vector<CsvManifestRow> rows;
    for (const auto& row : table.rows) {
      const auto& cells = row.cells;
      const auto need = static_cast<std::size_t>(std::max(pathCol, labelCol));
      if (cells.size() <= need) {
        fail(policy, spec.manifest + " line " + std::to_string(row.line),
             "has " + std::to_string(cells.size()) + " columns, the header has more", where);
        continue;
      }
      rows.push_back({cells[static_cast<std::size_t>(pathCol)],
                      cells[static_cast<std::size_t>(labelCol)], row.line});
    }
    return rows;
  }

  /// Sets m_classes: the project's `classes`, else the indices 0..max, else the names found.
  void chooseClasses(const std::vector<std::string>& classes, const CsvLabelScan& scan) {
    if (!classes.empty()) {
      m_classes = classes;
    } else if (scan.numeric) {
      for (std::int64_t k = 0; k <= scan.maxIndex; ++k)
        m_classes.push_back(std::to_string(k));
    } else {
      m_classes.assign(scan.names.begin(), scan.names.end());
    }
  }

  /// Adds each row's image and class to m_files and m_labels; a row whose class is unknown or
  /// out of range, or whose image is not usable, is failed.
  void addRows(const std::vector<CsvManifestRow>& rows, const SourceSpec& spec,
               const fs::path& base, const std::string& where, ErrorPolicy policy) {
    std::map<std::string, std::int64_t> byName;
    for (std::size_t k = 0; k < m_classes.size(); ++k)
      byName[m_classes[k]] = static_cast<std::int64_t>(k);

    for (const auto& r : rows) {
      const std::string item = spec.manifest + " line " + std::to_string(r.line);
      std::int64_t k = -1;
      if (!parseIndex(r.label, k)) {
        auto it = byName.find(r.label);
        if (it == byName.end()) {
          fail(policy, item, "unknown class \"" + r.label + "\"", where);
          continue;
        }
        k = it->second;
      }
      if (k < 0 || k >= numClasses()) {
        fail(policy, item,
             "label " + r.label + " is out of range for " + std::to_string(numClasses()) +
                 " classes",
             where);
        continue;
      }
      std::string reason;
      const auto file = manifestImage(base, r.path, reason);
      if (!file) {
        fail(policy, item, reason, where);
        continue;
      }
      m_files.push_back(*file);
      m_labels.push_back(k);
    }
  }

  void fail(ErrorPolicy policy, const std::string& item, const std::string& reason,
            const std::string& where) {
    if (policy == ErrorPolicy::Fail)
      throw Error(where + ": " + item.substr(item.rfind(" line ") + 1) + ": " + reason);
    m_skipped.push_back({item, reason});
  }
};

}  // namespace

std::shared_ptr<DatasetSource> openCsvSource(const SourceSpec& spec,
                                             const std::vector<std::string>& classes,
                                             ErrorPolicy policy) {
  return std::make_shared<CsvSource>(spec, classes, policy);
}

}  // namespace netsmith::data
