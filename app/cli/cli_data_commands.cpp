// Data commands: transforms, data-stats, preview-aug.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <opencv2/imgcodecs.hpp>

#include "augment/transform.h"
#include "cli/cli_args.h"
#include "cli/cli_commands.h"
#include "data/data_scan.h"
#include "data/dataset_stats.h"
#include "data/example_datasets.h"
#include "data/preview_grid.h"
#include "data/project_data.h"
#include "data/source_formats.h"
#include "env/env_report.h"
#include "graph/model_summary.h"
#include "ops/op_registry.h"
#include "project/project.h"
#include "resolve/open_data.h"

namespace netsmith::cli {

namespace {

/// One line of progress on stderr ("what: 42%"), cleared when done.
bool showProgress(const std::string& what, std::int64_t done, std::int64_t total) {
  std::fprintf(stderr, "\r%s: %3d%%", what.c_str(), total ? int(100 * done / total) : 100);
  if (done >= total) std::fprintf(stderr, "\r%*s\r", int(what.size()) + 6, "");
  return true;
}

// A one-line progress indicator on stderr, only when it is a terminal.
data::ProgressFn terminalProgress(const std::string& what) {
  if (!::isatty(STDERR_FILENO)) return {};
  return [what](std::int64_t done, std::int64_t total) { return showProgress(what, done, total); };
}

std::unique_ptr<data::ProjectData> openData(const std::string& path, const Registries& registries,
                                            resolve::ResolvedProject& resolved) {
  if (!loadValid(path, registries, resolved)) return nullptr;
  env::configureThreads();
  auto pd = resolve::openData(resolved, registries.transforms, data::userCacheDir(),
                              terminalProgress("computing mean/std"));
  if (!pd) throw Error("cancelled");
  return pd;
}

/// What a transform does to a segmentation mask, for `transforms`.
const char* targetEffectName(augment::TargetEffect effect) {
  switch (effect) {
    case augment::TargetEffect::Moves:
      return "moved with the image";
    case augment::TargetEffect::Breaks:
      return "not usable";
    case augment::TargetEffect::None:
      break;
  }
  return "untouched";
}

}  // namespace

int runTransforms(const std::vector<std::string>& words, const RegistriesPtr& registries) {
  const Args args = commandArgs("transforms", words);
  if (!args.positional().empty()) throw UsageError{"transforms takes no arguments"};
  const auto& registry = registries->transforms;
  if (args.has("--json")) {
    Json all = Json::array();
    for (const auto& t : registry.all()) {
      all.push_back(Json{{"transform", t.name},
                         {"group", t.group},
                         {"help", t.help},
                         {"default_p", t.defaultProbability},
                         {"deterministic", t.deterministic},
                         {"batch", t.batchLevel},
                         {"masks", targetEffectName(t.targets)},
                         {"params", schema::schemaToJson(t.schema)}});
    }
    std::cout << all.dump(2) << '\n';
    return kExitOk;
  }
  for (const auto& group : registry.groups()) {
    std::cout << group << '\n';
    for (const auto& t : registry.all()) {
      if (t.group != group) continue;
      std::cout << "  " << t.name << " - " << t.help << " (p " << t.defaultProbability
                << "; masks: " << targetEffectName(t.targets) << ")\n"
                << schema::schemaToText(t.schema, "      ");
    }
  }
  std::cout << "Every transform also takes \"p\" (probability) and \"enabled\".\n";
  return kExitOk;
}

int runFormats(const std::vector<std::string>& words, const RegistriesPtr& /*registries*/) {
  const Args args = commandArgs("formats", words);
  if (!args.positional().empty()) throw UsageError{"formats takes no arguments"};
  if (args.has("--json")) {
    std::cout << data::sourceFormatsToJson().dump(2) << '\n';
    return kExitOk;
  }
  std::cout << data::sourceFormatsToText();
  return kExitOk;
}

namespace {

/// `data-stats --json`: the scan as one object (a task's target summary in place of the
/// per-class counts of data with one class per sample).
Json dataStatsJson(const data::DataScanResult& d) {
  const auto counts = [&d](const std::vector<std::int64_t>& perClass) {
    std::vector<std::pair<std::string, Json>> members;
    members.reserve(perClass.size());
    for (std::size_t k = 0; k < d.classes.size() && k < perClass.size(); ++k)
      members.emplace_back(d.classes[k], perClass[k]);
    return namedMembers(std::move(members));
  };
  Json j = Json::object();
  j["classes"] = d.classes;
  j["splits"] = Json{{"train", d.train}, {"validation", d.validation}, {"test", d.test}};
  if (d.oneClassPerSample)
    j["class_counts"] = Json{{"train", counts(d.trainCounts)},
                             {"validation", counts(d.validationCounts)},
                             {"test", counts(d.testCounts)}};
  j["mean"] = d.mean;
  j["std"] = d.std;
  j["normalization"] = Json{
      {"mode", d.normalizationMode}, {"mean", d.normalizationMean}, {"std", d.normalizationStd}};
  if (d.imageSizes) j["image_sizes"] = *d.imageSizes;
  j["subsets"] = d.subsets;
  Json skippedJson = Json::array();
  for (const auto& s : d.skipped)
    skippedJson.push_back(Json{{"item", s.item}, {"reason", s.reason}});
  j["skipped"] = skippedJson;
  if (d.targetSummary) j[d.targetSummary->jsonKey] = d.targetSummary->json;
  return j;
}

/// A summary table for the terminal: column 0 left-aligned, the others right-aligned, every
/// cell made printable; its footer under it.
void printTable(const data::SummaryTable& table) {
  std::vector<std::vector<std::string>> cells;
  cells.push_back({});
  for (const auto& c : table.columns)
    cells.back().push_back(printable(c));
  for (const auto& row : table.rows) {
    cells.push_back({});
    for (const auto& c : row)
      cells.back().push_back(printable(c));
  }
  std::vector<std::size_t> width;
  for (const auto& row : cells)
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (width.size() <= c) width.push_back(0);
      width[c] = std::max(width[c], row[c].size());
    }
  for (const auto& row : cells) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      const std::string pad(width[c] - row[c].size(), ' ');
      line += c == 0 ? row[c] + pad : "  " + pad + row[c];
    }
    while (!line.empty() && line.back() == ' ')
      line.pop_back();
    std::cout << line << '\n';
  }
  if (!table.footer.empty()) std::cout << printable(table.footer) << '\n';
}

/// `data-stats` for people. Names read from files are printed through printable(): an escape
/// sequence in a category name never reaches the terminal, a newline never starts a line of its
/// own.
void printDataStats(const project::LoadedProject& loaded, const data::DataScanResult& d) {
  std::cout << "Project: " << printable(loaded.project.name) << '\n'
            << "Splits:  train " << d.train << ", validation " << d.validation << ", test "
            << d.test << " (readable samples)\n";
  for (const auto& s : d.subsets)
    std::cout << "Subset:  " << printable(s) << '\n';
  if (d.oneClassPerSample) {
    data::SummaryTable perClass;
    perClass.columns = {"class", "train", "validation", "test"};
    for (std::size_t k = 0; k < d.classes.size(); ++k)
      perClass.rows.push_back({d.classes[k], std::to_string(d.trainCounts[k]),
                               std::to_string(d.validationCounts[k]),
                               std::to_string(d.testCounts[k])});
    printTable(perClass);
  }
  if (d.targetSummary) {
    printTable(d.targetSummary->table);
    for (const auto& line : d.targetSummary->lines)
      std::cout << printable(line) << '\n';
  }
  std::cout << "Mean/std (train, per channel):";
  for (std::size_t c = 0; c < d.mean.size(); ++c)
    std::printf(" %.4f/%.4f", d.mean[c], d.std[c]);
  std::cout << '\n';
  if (d.imageSizes) {
    std::cout << "Image sizes (WxHxC: count):";
    for (const auto& [size, count] : *d.imageSizes)
      std::cout << ' ' << size << ": " << count;
    std::cout << '\n';
  }
  std::cout << "Skipped: " << d.skipped.size() << '\n';
  for (const auto& s : d.skipped)
    std::cout << "  " << printable(s.item) << ": " << printable(s.reason) << '\n';
}

}  // namespace

int runDataStats(const std::vector<std::string>& words, const RegistriesPtr& registries) {
  const Args args = commandArgs("data-stats", words);
  const std::string& path = args.one("PROJECT");
  resolve::ResolvedProject resolved;
  if (!loadValid(path, *registries, resolved)) return kExitInvalid;
  auto& loaded = resolved.loaded;
  env::configureThreads();
  // The studio's Data page runs the same scan: every split decoded under the project's
  // on_error, the counts leaving out what training and evaluation would skip.
  data::DataScanOptions options;
  options.imageSizes = args.has("--sizes") ? data::DataScanOptions::Sizes::All
                                           : data::DataScanOptions::Sizes::OfFiles;
  if (::isatty(STDERR_FILENO)) options.progress = showProgress;
  options.targetStatistics = registries->tasks.statisticsOf(loaded.project.task);
  const auto d = data::scanProjectData(loaded.project, resolve::dataConfig(resolved),
                                       registries->transforms, options);
  if (d.cancelled) throw Error("cancelled");
  if (args.has("--json"))
    std::cout << dataStatsJson(d).dump(2) << '\n';  // built only when asked for
  else
    printDataStats(loaded, d);
  return kExitOk;
}

int runPreviewAug(const std::vector<std::string>& words, const RegistriesPtr& registries) {
  const Args args = commandArgs("preview-aug", words);
  const std::string& path = args.one("PROJECT");
  const std::string out = args.option("--out");
  if (out.empty()) throw UsageError{"preview-aug needs --out FILE.png"};
  const int samples = static_cast<int>(args.integer("--samples", 8, 1, 64));
  const int draws = static_cast<int>(args.integer("--draws", 6, 1, 32));
  const auto seed = static_cast<std::uint64_t>(args.integer("--seed", 0, 0, (1LL << 62)));
  resolve::ResolvedProject resolved;
  auto pd = openData(path, *registries, resolved);
  if (!pd) return kExitInvalid;
  const auto rows = data::makePreview(*pd, samples, draws, seed);
  if (rows.empty()) throw Error("no readable training samples to preview");
  const cv::Mat grid = data::renderPreviewGrid(rows);
  bool written = false;
  try {
    written = cv::imwrite(out, grid);
  } catch (const cv::Exception&) {
    written = false;
  }
  if (!written)
    throw Error(out +
                ": cannot write the image (is the folder there, and does the name end in .png?)");
  std::cout << out << ": " << rows.size() << " samples x " << draws << " draws (" << grid.cols
            << "x" << grid.rows << " px), pipeline: " << pd->pipeline.describe() << '\n';
  return kExitOk;
}

int runMakeDataset(const std::vector<std::string>& words, const RegistriesPtr& /*registries*/) {
  const Args args = commandArgs("make-dataset", words);
  data::ExampleDatasetOptions o;
  o.name = args.one("NAME");
  o.out = args.option("--out");
  if (o.out.empty()) throw UsageError{"make-dataset: --out DIR names the folder to create"};
  if (!args.option("--source").empty()) o.source = args.option("--source");
  o.seed = static_cast<std::uint64_t>(args.integer("--seed", 0, 0, 1LL << 62));
  o.train = args.integer("--train", 0, 1, 1000000);
  o.test = args.integer("--test", 0, 1, 1000000);
  o.progress = terminalProgress("writing " + o.name);
  data::makeExampleDataset(o);
  if (o.name == "scenes")
    std::printf("%s: %s/train/{images,masks} and %s/test/{images,masks}\n", o.name.c_str(),
                o.out.c_str(), o.out.c_str());
  else
    std::printf("%s: %s/train.csv and %s/test.csv\n", o.name.c_str(), o.out.c_str(), o.out.c_str());
  return kExitOk;
}

}  // namespace netsmith::cli
