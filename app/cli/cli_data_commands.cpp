// Data commands: transforms, data-stats, preview-aug.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <opencv2/imgcodecs.hpp>

#include "augment/transform.h"
#include "cli/cli_args.h"
#include "cli/cli_commands.h"
#include "data/dataset_stats.h"
#include "data/preview_grid.h"
#include "data/project_data.h"
#include "env/env_report.h"
#include "graph/model_summary.h"
#include "ops/op_registry.h"
#include "project/project.h"

namespace netsmith::cli {

namespace {

// A one-line progress indicator on stderr, only when it is a terminal.
data::ProgressFn terminalProgress(const std::string& what) {
  if (!::isatty(STDERR_FILENO)) return {};
  return [what](std::int64_t done, std::int64_t total) {
    std::fprintf(stderr, "\r%s: %3d%%", what.c_str(), total ? int(100 * done / total) : 100);
    if (done >= total) std::fprintf(stderr, "\r%*s\r", int(what.size()) + 6, "");
    return true;
  };
}

std::unique_ptr<data::ProjectData> openData(const std::string& path,
                                            project::LoadedProject& loaded) {
  const auto registry = ops::OpRegistry::withBuiltins();
  if (!loadValid(path, registry, loaded)) return nullptr;
  env::configureThreads();
  auto pd = data::openProjectData(loaded.project, loaded.baseDir(),
                                  augment::TransformRegistry::withBuiltins(), data::userCacheDir(),
                                  terminalProgress("computing mean/std"));
  if (!pd) throw Error("cancelled");
  return pd;
}

Json countsJson(const data::SampleSet& set, const std::vector<std::string>& classes) {
  Json j = Json::object();
  const auto counts = data::classCounts(set, static_cast<std::int64_t>(classes.size()));
  for (std::size_t k = 0; k < classes.size(); ++k)
    j[classes[k]] = counts[k];
  return j;
}

}  // namespace

int runTransforms(const std::vector<std::string>& words) {
  const Args args(words, {"--json"}, {});
  if (!args.positional().empty()) throw UsageError{"transforms takes no arguments"};
  const auto registry = augment::TransformRegistry::withBuiltins();
  if (args.has("--json")) {
    Json all = Json::array();
    for (const auto& t : registry.all()) {
      all.push_back(Json{{"transform", t.name},
                         {"group", t.group},
                         {"help", t.help},
                         {"default_p", t.defaultProbability},
                         {"deterministic", t.deterministic},
                         {"batch", t.batchLevel},
                         {"params", schema::schemaToJson(t.schema)}});
    }
    std::cout << all.dump(2) << '\n';
    return kExitOk;
  }
  for (const auto& group : registry.groups()) {
    std::cout << group << '\n';
    for (const auto& t : registry.all()) {
      if (t.group != group) continue;
      std::cout << "  " << t.name << " - " << t.help << " (p " << t.defaultProbability << ")\n"
                << schema::schemaToText(t.schema, "      ");
    }
  }
  std::cout << "Every transform also takes \"p\" (probability) and \"enabled\".\n";
  return kExitOk;
}

int runDataStats(const std::vector<std::string>& words) {
  const Args args(words, {"--json", "--sizes"}, {});
  const std::string& path = args.one("PROJECT");
  project::LoadedProject loaded;
  auto pd = openData(path, loaded);
  if (!pd) return kExitInvalid;
  auto& d = pd->data;
  std::vector<data::SkippedItem> skipped = d.skippedAtScan();
  // Statistics of the training split as the model sees it (no augmentation). Every split is
  // decoded: the counts leave out what training and evaluation would skip.
  const data::SampleProcessor plain(pd->format, nullptr, {}, {});
  std::vector<std::int64_t> unreadable;
  const auto stats =
      data::computeChannelStats(d.train, plain, d.config.onError,
                                terminalProgress("reading training images"), &skipped, &unreadable);
  if (!stats) throw Error("cancelled");
  data::removePositions(d.train, unreadable);
  for (auto* set : {&d.validation, &d.test}) {
    if (set->empty()) continue;
    if (!data::dropUnreadable(*set, plain, d.config.onError,
                              terminalProgress("reading " + set->name + " images"), &skipped))
      throw Error("cancelled");
  }
  std::optional<std::map<std::string, std::int64_t>> sizes;
  const bool files = d.config.train.format == data::SourceFormat::ImageFolder ||
                     d.config.train.format == data::SourceFormat::Csv;
  if (args.has("--sizes") || files)
    sizes = data::imageSizeHistogram(d.train, terminalProgress("reading sizes"), nullptr);

  Json j = Json::object();
  j["classes"] = d.classes;
  j["splits"] =
      Json{{"train", d.train.size()}, {"validation", d.validation.size()}, {"test", d.test.size()}};
  j["class_counts"] = Json{{"train", countsJson(d.train, d.classes)},
                           {"validation", countsJson(d.validation, d.classes)},
                           {"test", countsJson(d.test, d.classes)}};
  j["mean"] = stats->mean;
  j["std"] = stats->std;
  j["normalization"] = Json{
      {"mode", pd->normalization.computed ? "auto"
                                          : (pd->normalization.mean.empty() ? "none" : "explicit")},
      {"mean", pd->normalization.mean},
      {"std", pd->normalization.std}};
  if (sizes) j["image_sizes"] = *sizes;
  j["subsets"] = d.subsets;
  Json skippedJson = Json::array();
  for (const auto& s : skipped)
    skippedJson.push_back(Json{{"item", s.item}, {"reason", s.reason}});
  j["skipped"] = skippedJson;
  if (args.has("--json")) {
    std::cout << j.dump(2) << '\n';
    return kExitOk;
  }
  std::cout << "Project: " << loaded.project.name << '\n'
            << "Splits:  train " << d.train.size() << ", validation " << d.validation.size()
            << ", test " << d.test.size() << " (readable samples)\n";
  for (const auto& s : d.subsets)
    std::cout << "Subset:  " << s << '\n';
  const auto tr = data::classCounts(d.train, d.numClasses());
  const auto va = data::classCounts(d.validation, d.numClasses());
  const auto te = data::classCounts(d.test, d.numClasses());
  std::size_t w = 5;
  for (const auto& c : d.classes)
    w = std::max(w, c.size());
  std::printf("%-*s %10s %10s %10s\n", int(w), "class", "train", "validation", "test");
  for (std::size_t k = 0; k < d.classes.size(); ++k) {
    std::printf("%-*s %10lld %10lld %10lld\n", int(w), d.classes[k].c_str(), (long long)tr[k],
                (long long)va[k], (long long)te[k]);
  }
  std::cout << "Mean/std (train, per channel):";
  for (std::size_t c = 0; c < stats->mean.size(); ++c)
    std::printf(" %.4f/%.4f", stats->mean[c], stats->std[c]);
  std::cout << '\n';
  if (sizes) {
    std::cout << "Image sizes (WxHxC: count):";
    for (const auto& [size, count] : *sizes)
      std::cout << ' ' << size << ": " << count;
    std::cout << '\n';
  }
  std::cout << "Skipped: " << skipped.size() << '\n';
  for (const auto& s : skipped)
    std::cout << "  " << s.item << ": " << s.reason << '\n';
  return kExitOk;
}

int runPreviewAug(const std::vector<std::string>& words) {
  const Args args(words, {}, {"--out", "--samples", "--draws", "--seed"});
  const std::string& path = args.one("PROJECT");
  const std::string out = args.option("--out");
  if (out.empty()) throw UsageError{"preview-aug needs --out FILE.png"};
  const int samples = static_cast<int>(args.integer("--samples", 8, 1, 64));
  const int draws = static_cast<int>(args.integer("--draws", 6, 1, 32));
  const auto seed = static_cast<std::uint64_t>(args.integer("--seed", 0, 0, (1LL << 62)));
  project::LoadedProject loaded;
  auto pd = openData(path, loaded);
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

}  // namespace netsmith::cli
