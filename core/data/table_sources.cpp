// Manifests whose targets are a table of numbers: multi-label CSV (a labels column of class
// names, or a 0/1 column per class) and regression CSV (a column of numbers per target). Both
// read through csv_table.h; bad rows are skipped and listed, or fail, as data.on_error says.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <sstream>
#include <system_error>

#include "data/csv_table.h"
#include "data/dataset_source.h"

namespace netsmith::data {

namespace fs = std::filesystem;

std::int64_t TableTargetSource::stratum(std::int64_t i) const {
  return m_strata.at(static_cast<std::size_t>(i));
}

void TableTargetSource::targetRow(std::int64_t i, float* out) const {
  if (i < 0 || i >= size()) throw Error("target row " + std::to_string(i) + " out of range");
  if (!m_sparse) {
    const float* row = m_targets.data() + static_cast<std::size_t>(i * m_width);
    std::copy(row, row + m_width, out);
    return;
  }
  std::fill(out, out + m_width, 0.0f);
  for (const auto k : positiveLabels(i))
    out[k] = 1.0f;
}

LabelList TableTargetSource::positiveLabels(std::int64_t i) const {
  if (!m_sparse) return {};
  if (i < 0 || i >= size()) throw Error("target row " + std::to_string(i) + " out of range");
  const auto* base = m_on.data();
  return {base + m_rowStart[std::size_t(i)], base + m_rowStart[std::size_t(i) + 1]};
}

void TableTargetSource::addLabelRow(const std::vector<std::int32_t>& classes) {
  m_on.insert(m_on.end(), classes.begin(), classes.end());
  m_rowStart.push_back(std::int64_t(m_on.size()));
}

void TableTargetSource::stratifyByRarestLabel() {
  const auto n = size();
  std::vector<std::int64_t> counts(static_cast<std::size_t>(m_width), 0);
  for (std::int64_t i = 0; i < n; ++i)
    for (const auto k : positiveLabels(i))
      ++counts[static_cast<std::size_t>(k)];
  m_numStrata = m_width + 1;  // the last: no label
  m_strata.assign(static_cast<std::size_t>(n), m_width);
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t best = m_width;
    for (const auto k : positiveLabels(i))
      if (best == m_width || counts[std::size_t(k)] < counts[std::size_t(best)]) best = k;
    m_strata[static_cast<std::size_t>(i)] = best;
  }
}

void TableTargetSource::stratifyByFirstTarget() {
  const auto n = size();
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
    return m_targets[std::size_t(a * m_width)] < m_targets[std::size_t(b * m_width)];
  });
  m_numStrata = std::clamp<std::int64_t>(n, 1, 10);
  m_strata.assign(static_cast<std::size_t>(n), 0);
  for (std::int64_t r = 0; r < n; ++r)
    m_strata[static_cast<std::size_t>(order[std::size_t(r)])] = r * m_numStrata / n;
}

namespace {

/// A number cell: the whole cell is a finite decimal number ("." as the decimal point, whatever
/// the locale; a leading "+" allowed).
bool parseNumber(const std::string& s, double& out) {
  if (s.empty() || s.size() > 64) return false;
  const char* begin = s.data() + (s[0] == '+' ? 1 : 0);
  const char* end = s.data() + s.size();
  const auto r = std::from_chars(begin, end, out);
  return r.ec == std::errc() && r.ptr == end && std::isfinite(out);
}

/// A cell in a message: printable, at most 60 characters.
std::string cellText(const std::string& cell) {
  const std::string p = printable(cell);
  return p.size() > 60 ? p.substr(0, 60) + "..." : p;
}

/// What the two manifests share: the file, its rows and how a bad row is handled.
class ManifestReader {
 public:
  ManifestReader(const SourceSpec& spec, ErrorPolicy policy, const std::string& header)
      : where(spec.path + ".manifest: " + spec.manifest),
        table(readCsvTable(spec.manifest, where, header)),
        base(fs::path(spec.manifest).parent_path()),
        m_spec(spec),
        m_policy(policy) {}

  std::string item(const CsvRow& row) const {
    return m_spec.manifest + " line " + std::to_string(row.line);
  }
  /// Under Fail throws naming the line; under Skip lists the row in `skipped`.
  void fail(const CsvRow& row, const std::string& reason, std::vector<SkippedItem>& skipped) {
    if (m_policy == ErrorPolicy::Fail)
      throw Error(where + ": line " + std::to_string(row.line) + ": " + reason);
    skipped.push_back({item(row), reason});
  }
  /// The row's image, or nothing (failed) when the row is short or the file missing.
  std::optional<std::string> image(const CsvRow& row, int pathCol,
                                   std::vector<SkippedItem>& skipped) {
    if (row.cells.size() != table.header.size()) {
      fail(row,
           "has " + std::to_string(row.cells.size()) + " columns, the header has " +
               std::to_string(table.header.size()),
           skipped);
      return std::nullopt;
    }
    std::string reason;
    auto file = manifestImage(base, row.cells[static_cast<std::size_t>(pathCol)], reason);
    if (!file) fail(row, reason, skipped);
    return file;
  }
  /// The header's names: none empty (a trailing comma), none twice.
  void checkHeader() const {
    std::set<std::string> seen;
    for (std::size_t c = 0; c < table.header.size(); ++c) {
      const auto& name = table.header[c];
      const std::string at = where + ": line " + std::to_string(table.headerLine) + ": column " +
                             std::to_string(c + 1);
      if (name.empty())
        throw Error(at + " has no name (a trailing comma?); found: " + table.headerText);
      if (!seen.insert(name).second)
        throw Error(at + ": \"" + cellText(name) + "\" is named twice");
    }
  }
  int pathColumn() const {
    checkHeader();
    const int c = table.column("path");
    if (c < 0)
      throw Error(where + ": line " + std::to_string(table.headerLine) +
                  ": the header must have a \"path\" column; found: " + table.headerText);
    return c;
  }

  const std::string where;
  const CsvTable table;
  const fs::path base;

 private:
  const SourceSpec& m_spec;
  ErrorPolicy m_policy;
};

std::vector<std::string> splitLabels(const std::string& cell, bool semicolons) {
  std::vector<std::string> out;
  std::string cur;
  auto flush = [&] {
    const auto b = cur.find_first_not_of(" \t");
    const auto e = cur.find_last_not_of(" \t");
    if (b != std::string::npos) out.push_back(cur.substr(b, e - b + 1));
    cur.clear();
  };
  for (char c : cell) {
    if (semicolons ? c == ';' : (c == ' ' || c == '\t')) {
      flush();
    } else {
      cur += c;
    }
  }
  flush();
  return out;
}

/// The most labels a multi-label manifest may name, and the most rows x labels it may have.
/// The rows themselves are sparse (a row costs its labels); the bound is for what holds a score
/// per sample and label (an evaluation's or the doctor's probabilities, 4 bytes each: 256 MiB).
constexpr std::size_t kMaxLabels = 10'000;
constexpr std::size_t kMaxTargetValues = std::size_t(64) << 20;

class MultiLabelCsvSource : public TableTargetSource {
 public:
  MultiLabelCsvSource(const SourceSpec& spec, const std::vector<std::string>& classes,
                      ErrorPolicy policy) {
    m_sparse = true;
    ManifestReader r(spec, policy, "path,labels");
    const int pathCol = r.pathColumn();
    const int labelsCol = r.table.column("labels");
    if (labelsCol >= 0)
      readLabelLists(r, pathCol, labelsCol, classes);
    else
      readLabelColumns(r, pathCol, classes);
    if (m_files.empty()) throw Error(r.where + ": no usable rows");
    m_labels.assign(m_files.size(), -1);
    stratifyByRarestLabel();
  }

 private:
  /// Refuses a table whose rows x `labels` scores would not fit kMaxTargetValues.
  static void checkTargetSize(const ManifestReader& r, std::size_t labels) {
    if (labels > kMaxLabels)
      throw Error(r.where + ": " + std::to_string(labels) + " labels; at most " +
                  std::to_string(kMaxLabels) + " are learned");
    if (labels * r.table.rows.size() > kMaxTargetValues)
      throw Error(r.where + ": " + std::to_string(r.table.rows.size()) + " rows x " +
                  std::to_string(labels) + " labels; a score for each is at most " +
                  std::to_string(kMaxTargetValues) + " values (fewer labels or rows)");
  }

  /// path,labels: class names separated by ; (or spaces).
  void readLabelLists(ManifestReader& r, int pathCol, int labelsCol,
                      const std::vector<std::string>& classes) {
    if (r.table.header.size() != 2)
      throw Error(
          r.where + ": line " + std::to_string(r.table.headerLine) +
          ": a labels manifest has two columns, path and labels; found: " + r.table.headerText);
    bool semicolons = false;
    for (const auto& row : r.table.rows)
      if (row.cells.size() > std::size_t(labelsCol) &&
          row.cells[std::size_t(labelsCol)].find(';') != std::string::npos)
        semicolons = true;
    std::set<std::string> found;
    for (const auto& row : r.table.rows)
      if (row.cells.size() > std::size_t(labelsCol))
        for (auto& name : splitLabels(row.cells[std::size_t(labelsCol)], semicolons)) {
          // Each row's targets hold one number per label: a file of 600,000 names would ask
          // for gigabytes. Refused as the file is read, before anything that large exists.
          if (found.insert(name).second && classes.empty() && found.size() > kMaxLabels)
            throw Error(r.where + ": line " + std::to_string(row.line) + ": more than " +
                        std::to_string(kMaxLabels) +
                        " different labels; at most that many are learned (is the labels "
                        "column free text?)");
        }
    m_classes = classes.empty() ? std::vector<std::string>(found.begin(), found.end()) : classes;
    if (m_classes.empty()) throw Error(r.where + ": no row has a label; no classes to learn");
    checkTargetSize(r, m_classes.size());
    m_width = std::int64_t(m_classes.size());
    std::map<std::string, std::int64_t> byName;
    for (std::size_t k = 0; k < m_classes.size(); ++k)
      byName[m_classes[k]] = std::int64_t(k);
    for (const auto& row : r.table.rows) {
      auto file = r.image(row, pathCol, m_skipped);
      if (!file) continue;
      std::vector<std::int32_t> on;
      std::string unknown;
      const std::string& cell = row.cells[std::size_t(labelsCol)];
      // A cell that is one known class whole ("Ankle boot") is that class, in a file that
      // separates by spaces too.
      const auto labels =
          byName.count(cell) ? std::vector<std::string>{cell} : splitLabels(cell, semicolons);
      for (const auto& name : labels) {
        const auto it = byName.find(name);
        if (it == byName.end()) {
          unknown = name;
          break;
        }
        on.push_back(std::int32_t(it->second));
      }
      if (!unknown.empty()) {
        r.fail(row, "unknown class \"" + cellText(unknown) + "\"", m_skipped);
        continue;
      }
      std::sort(on.begin(), on.end());
      on.erase(std::unique(on.begin(), on.end()), on.end());  // "a;a" is a once
      m_files.push_back(*file);
      addLabelRow(on);
    }
  }

  /// path,<class1>,<class2>,...: 0 or 1 per class.
  void readLabelColumns(ManifestReader& r, int pathCol, const std::vector<std::string>& classes) {
    std::vector<std::string> columns;
    for (std::size_t c = 0; c < r.table.header.size(); ++c)
      if (int(c) != pathCol) columns.push_back(r.table.header[c]);
    if (columns.empty())
      throw Error(r.where + ": line " + std::to_string(r.table.headerLine) +
                  ": the header needs a labels column or one column per class; found: " +
                  r.table.headerText);
    if (!classes.empty() && classes != columns)
      throw Error(r.where + ": the class columns (" + r.table.headerText +
                  ") differ from data.classes; name the same classes in the same order");
    m_classes = columns;
    checkTargetSize(r, m_classes.size());
    m_width = std::int64_t(columns.size());
    for (const auto& row : r.table.rows) {
      auto file = r.image(row, pathCol, m_skipped);
      if (!file) continue;
      std::vector<std::int32_t> on;
      std::string bad;
      std::int32_t k = 0;
      for (std::size_t c = 0; c < row.cells.size(); ++c) {
        if (int(c) == pathCol) continue;
        const auto& v = row.cells[c];
        if (v != "0" && v != "1") {
          bad = r.table.header[c] + " is \"" + cellText(v) + "\", not 0 or 1";
          break;
        }
        if (v == "1") on.push_back(k);
        ++k;
      }
      if (!bad.empty()) {
        r.fail(row, bad, m_skipped);
        continue;
      }
      m_files.push_back(*file);
      addLabelRow(on);
    }
  }
};

class RegressionCsvSource : public TableTargetSource {
 public:
  RegressionCsvSource(const SourceSpec& spec, ErrorPolicy policy) {
    ManifestReader r(spec, policy, "path,<target>");
    const int pathCol = r.pathColumn();
    std::vector<int> cols;
    if (spec.targets.empty()) {
      for (std::size_t c = 0; c < r.table.header.size(); ++c)
        if (int(c) != pathCol) {
          cols.push_back(int(c));
          m_targetNames.push_back(r.table.header[c]);
        }
      if (cols.empty())
        throw Error(r.where + ": line " + std::to_string(r.table.headerLine) +
                    ": the header has no target column besides path; found: " + r.table.headerText);
    } else {
      for (const auto& name : spec.targets) {
        const int c = r.table.column(name);
        if (c < 0)
          throw Error(r.where + ": line " + std::to_string(r.table.headerLine) + ": no column \"" +
                      printable(name) + "\" (data.targets names it); found: " + r.table.headerText);
        cols.push_back(c);
      }
      m_targetNames = spec.targets;
    }
    m_width = std::int64_t(cols.size());
    for (const auto& row : r.table.rows) {
      auto file = r.image(row, pathCol, m_skipped);
      if (!file) continue;
      std::vector<float> values;
      std::string bad;
      for (int c : cols) {
        double v = 0;
        const auto& cell = row.cells[std::size_t(c)];
        if (!parseNumber(cell, v) || std::abs(v) > 1e30) {
          bad = r.table.header[std::size_t(c)] + " is \"" + cellText(cell) +
                "\", not a finite number";
          break;
        }
        values.push_back(float(v));
      }
      if (!bad.empty()) {
        r.fail(row, bad, m_skipped);
        continue;
      }
      m_files.push_back(*file);
      m_targets.insert(m_targets.end(), values.begin(), values.end());
    }
    if (m_files.empty()) throw Error(r.where + ": no usable rows");
    m_labels.assign(m_files.size(), -1);
    stratifyByFirstTarget();
  }
};

}  // namespace

std::shared_ptr<DatasetSource> openMultiLabelCsvSource(const SourceSpec& spec,
                                                       const std::vector<std::string>& classes,
                                                       ErrorPolicy policy) {
  return std::make_shared<MultiLabelCsvSource>(spec, classes, policy);
}

std::shared_ptr<DatasetSource> openRegressionCsvSource(const SourceSpec& spec,
                                                       const std::vector<std::string>&,
                                                       ErrorPolicy policy) {
  return std::make_shared<RegressionCsvSource>(spec, policy);
}

}  // namespace netsmith::data
