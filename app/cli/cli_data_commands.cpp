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
                                            project::LoadedProject& loaded) {
  if (!loadValid(path, registries, loaded)) return nullptr;
  env::configureThreads();
  auto pd = data::openProjectData(loaded.project, loaded.baseDir(), registries.transforms,
                                  data::userCacheDir(), terminalProgress("computing mean/std"));
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

/// The minimum, maximum, mean and standard deviation of a target's finite values.
struct Summary {
  double min = 0, max = 0, mean = 0, std = 0;
};

Summary summarise(const std::vector<float>& v) {
  Summary s;
  double sum = 0;
  std::size_t n = 0;
  for (float x : v) {
    if (!std::isfinite(x)) continue;
    s.min = n ? std::min(s.min, double(x)) : double(x);
    s.max = n ? std::max(s.max, double(x)) : double(x);
    sum += x;
    ++n;
  }
  if (n == 0) return s;
  s.mean = sum / double(n);
  double sq = 0;  // about the mean: no cancellation for values far from zero
  for (float x : v)
    if (std::isfinite(x)) sq += (double(x) - s.mean) * (double(x) - s.mean);
  s.std = std::sqrt(sq / double(n));
  return s;
}

/// An object of one member per name, built in linear time: the ordered object's operator[]
/// searches its keys one by one (100,000 COCO categories took 90 s).
Json named(std::vector<std::pair<std::string, Json>> members) {
  return Json(Json::object_t(std::make_move_iterator(members.begin()),
                             std::make_move_iterator(members.end())));
}

/// `data-stats --json`: the scan as one object.
Json dataStatsJson(const data::DataScanResult& d) {
  const auto& t = d.targets;
  const auto counts = [&d](const std::vector<std::int64_t>& perClass) {
    std::vector<std::pair<std::string, Json>> members;
    members.reserve(perClass.size());
    for (std::size_t k = 0; k < d.classes.size() && k < perClass.size(); ++k)
      members.emplace_back(d.classes[k], perClass[k]);
    return named(std::move(members));
  };
  Json j = Json::object();
  j["classes"] = d.classes;
  j["splits"] = Json{{"train", d.train}, {"validation", d.validation}, {"test", d.test}};
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
  if (t.kind == data::TargetKind::MultiHot) {
    j.erase("class_counts");  // one class per sample it has not: its labels instead
    std::vector<std::string> shown;
    for (const auto a : t.cooccurrenceLabels)
      shown.push_back(a < d.classes.size() ? d.classes[a] : std::to_string(a));
    j["labels"] = Json{{"train_positives", counts(t.positives)},
                       {"cooccurrence", Json{{"labels", shown}, {"counts", t.cooccurrence}}},
                       {"labels_per_image", t.labelsPerImage}};
  } else if (t.kind == data::TargetKind::RealVector) {
    j.erase("class_counts");
    std::vector<std::pair<std::string, Json>> targets;
    for (std::size_t k = 0; k < t.values.size() && k < d.targetNames.size(); ++k) {
      const auto s = summarise(t.values[k]);
      targets.emplace_back(d.targetNames[k],
                           Json{{"min", s.min}, {"max", s.max}, {"mean", s.mean}, {"std", s.std}});
    }
    j["targets"] = named(std::move(targets));
  } else if (t.kind == data::TargetKind::ClassMask) {
    j.erase("class_counts");
    j["pixels"] = Json{{"train", counts(t.classPixels)}, {"ignored", t.ignoredPixels}};
  } else if (t.kind == data::TargetKind::Boxes) {
    j.erase("class_counts");
    std::vector<std::pair<std::string, Json>> perClass;
    const auto sizes = data::boxSizeSummaries(t, d.classes.size());
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      const auto& s = sizes[k];
      const auto spread = [](const std::array<double, 3>& v) {
        return Json{{"min", v[0]}, {"median", v[1]}, {"max", v[2]}};
      };
      perClass.emplace_back(d.classes[k], Json{{"boxes", s.boxes},
                                               {"width", spread(s.width)},
                                               {"height", spread(s.height)},
                                               {"aspect", spread(s.aspect)}});
    }
    j["boxes"] = Json{{"train", named(std::move(perClass))},
                      {"boxes_per_image", t.boxesPerImage},
                      {"images_without_boxes", t.boxesPerImage.empty() ? 0 : t.boxesPerImage[0]}};
  }
  return j;
}

/// `data-stats` for people. Names read from files are printed through printable(): an escape
/// sequence in a category name never reaches the terminal, a newline never starts a line of its
/// own.
void printDataStats(const project::LoadedProject& loaded, const data::DataScanResult& d) {
  const auto& t = d.targets;
  const bool classes = t.kind == data::TargetKind::ClassIndex;
  std::int64_t maskPixels = 0;  // the pixels not ignored, as the figures' pixel_share counts
  for (auto p : t.classPixels)
    maskPixels += p;
  std::cout << "Project: " << printable(loaded.project.name) << '\n'
            << "Splits:  train " << d.train << ", validation " << d.validation << ", test "
            << d.test << " (readable samples)\n";
  for (const auto& s : d.subsets)
    std::cout << "Subset:  " << printable(s) << '\n';
  std::vector<std::string> names;
  names.reserve(d.classes.size());
  std::size_t w = 5;
  for (const auto& c : d.classes) {
    names.push_back(printable(c));
    w = std::max(w, names.back().size());
  }
  if (classes) {
    std::printf("%-*s %10s %10s %10s\n", int(w), "class", "train", "validation", "test");
    for (std::size_t k = 0; k < d.classes.size(); ++k) {
      std::printf("%-*s %10lld %10lld %10lld\n", int(w), names[k].c_str(),
                  (long long)d.trainCounts[k], (long long)d.validationCounts[k],
                  (long long)d.testCounts[k]);
    }
  } else if (t.kind == data::TargetKind::MultiHot) {
    std::printf("%-*s %12s\n", int(w), "label", "train images");
    for (std::size_t k = 0; k < d.classes.size() && k < t.positives.size(); ++k)
      std::printf("%-*s %12lld\n", int(w), names[k].c_str(), (long long)t.positives[k]);
    std::cout << "Labels per image (train):";
    for (std::size_t n = 0; n < t.labelsPerImage.size(); ++n)
      if (t.labelsPerImage[n] > 0) std::cout << ' ' << n << ": " << t.labelsPerImage[n];
    std::cout << '\n';
  } else if (t.kind == data::TargetKind::RealVector) {
    std::printf("%-12s %12s %12s %12s %12s\n", "target", "min", "mean", "std", "max");
    for (std::size_t k = 0; k < t.values.size() && k < d.targetNames.size(); ++k) {
      const auto s = summarise(t.values[k]);
      std::printf("%-12s %12.5g %12.5g %12.5g %12.5g\n", printable(d.targetNames[k]).c_str(), s.min,
                  s.mean, s.std, s.max);
    }
  } else if (t.kind == data::TargetKind::Boxes) {
    std::printf("%-*s %8s %17s %17s %17s\n", int(w), "class", "boxes", "width min/med/max",
                "height min/med/max", "aspect min/med/max");
    const auto sizes = data::boxSizeSummaries(t, d.classes.size());
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      const auto& s = sizes[k];
      std::printf("%-*s %8lld %5.0f/%5.0f/%5.0f %5.0f/%5.0f/%5.0f %5.2f/%5.2f/%5.2f\n", int(w),
                  names[k].c_str(), (long long)s.boxes, s.width[0], s.width[1], s.width[2],
                  s.height[0], s.height[1], s.height[2], s.aspect[0], s.aspect[1], s.aspect[2]);
    }
    std::cout << "Boxes per image (train):";
    for (std::size_t n = 0; n < t.boxesPerImage.size(); ++n)
      if (t.boxesPerImage[n] > 0) std::cout << ' ' << n << ": " << t.boxesPerImage[n];
    std::cout << " (" << (t.boxesPerImage.empty() ? 0 : t.boxesPerImage[0])
              << " images without boxes)\n";
  } else if (t.kind == data::TargetKind::ClassMask) {
    std::printf("%-*s %14s %8s\n", int(w), "class", "train pixels", "share");
    for (std::size_t k = 0; k < d.classes.size() && k < t.classPixels.size(); ++k)
      std::printf("%-*s %14lld %7.2f%%\n", int(w), names[k].c_str(), (long long)t.classPixels[k],
                  maskPixels ? 100.0 * double(t.classPixels[k]) / double(maskPixels) : 0.0);
    const auto all = maskPixels + t.ignoredPixels;
    std::printf("%-*s %14lld %7.2f%% of all pixels\n", int(w), "(ignored)",
                (long long)t.ignoredPixels,
                all ? 100.0 * double(t.ignoredPixels) / double(all) : 0.0);
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
  project::LoadedProject loaded;
  if (!loadValid(path, *registries, loaded)) return kExitInvalid;
  env::configureThreads();
  // The studio's Data page runs the same scan: every split decoded under the project's
  // on_error, the counts leaving out what training and evaluation would skip.
  data::DataScanOptions options;
  options.imageSizes = args.has("--sizes") ? data::DataScanOptions::Sizes::All
                                           : data::DataScanOptions::Sizes::OfFiles;
  if (::isatty(STDERR_FILENO)) options.progress = showProgress;
  const auto d =
      data::scanProjectData(loaded.project, loaded.baseDir(), registries->transforms, options);
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
  project::LoadedProject loaded;
  auto pd = openData(path, *registries, loaded);
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
