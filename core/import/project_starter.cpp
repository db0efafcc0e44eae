#include "import/project_starter.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <iomanip>
#include <optional>
#include <set>
#include <sstream>

#include "common/file_util.h"
#include "data/data_config.h"
#include "data/dataset_source.h"
#include "data/source_formats.h"
#include "graph/graph_analysis.h"
#include "ops/op_registry.h"
#include "registries/registries.h"
#include "resolve/resolved_project.h"
#include "task/task_registry.h"
#include "train/trainability.h"

namespace netsmith::import {

namespace fs = std::filesystem;

namespace {

constexpr double kStarterRow = 80;  // the editor's row gap
// The input's longer side at most this (or the template's own, when larger).
constexpr std::int64_t kStarterMaxSide = 64;
// Below this many training images, a fifth of them validate (else a tenth).
constexpr std::int64_t kSmallData = 2000;
/// The least optimizer steps an epoch of a project made from data takes, where the batch can
/// shrink for it, and the least batch it shrinks to.
constexpr std::int64_t kStarterStepsPerEpoch = 16;
constexpr std::int64_t kStarterMinBatch = 8;
// Images read to find whether the data is grey or colour.
constexpr std::int64_t kChannelProbe = 32;

graph::Node starterNode(const std::string& id, const std::string& op, Json params,
                        const std::string& input, int row) {
  graph::Node n;
  n.id = id;
  n.op = op;
  n.params = std::move(params);
  if (!input.empty()) n.inputs = {input};
  n.x = 0;
  n.y = kStarterRow * row;
  return n;
}

/// A source's paths relative to the project's folder (when there is a way there).
Json relativeSource(Json source, const fs::path& base) {
  for (auto it = source.begin(); it != source.end(); ++it) {
    if (it.key() == "format" || !it.value().is_string()) continue;
    const fs::path p = it.value().get<std::string>();
    const fs::path rel = p.lexically_relative(base);
    if (!rel.empty()) it.value() = rel.generic_string();
  }
  return source;
}

std::string countText(std::int64_t n, const std::string& what) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out + " " + what + (n == 1 ? "" : what.back() == 's' ? "es" : "s");
}

std::string listText(const std::vector<std::string>& names, std::size_t most = 12) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < most; ++i)
    out += (i ? ", " : "") + printable(names[i]);
  if (names.size() > most) out += ", ... (" + std::to_string(names.size() - most) + " more)";
  return out;
}

std::string numbers(const std::vector<double>& v) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(4);
  for (std::size_t i = 0; i < v.size(); ++i)
    os << (i ? " " : "") << v[i];
  return os.str();
}

std::vector<double> rounded(std::vector<double> v) {
  for (auto& x : v)
    x = std::round(x * 10000.0) / 10000.0;
  return v;
}

/// The model's last layers: the nodes no other node takes as input.
std::vector<graph::Node*> outputNodes(graph::ModelGraph& model) {
  std::set<std::string> used;
  for (const auto& n : model.nodes)
    used.insert(n.inputs.begin(), n.inputs.end());
  std::vector<graph::Node*> out;
  for (auto& n : model.nodes)
    if (!used.count(n.id) && n.op != "Input") out.push_back(&n);
  return out;
}

/// The most common "WxH" of the training images.
std::pair<std::int64_t, std::int64_t> commonSize(const data::DataScanResult& scan) {
  std::int64_t best = -1, w = 0, h = 0;
  if (scan.imageSizes)
    for (const auto& [size, count] : *scan.imageSizes) {
      const auto x = size.find('x');
      if (x == std::string::npos || count <= best) continue;
      try {
        w = std::stoll(size.substr(0, x));
        h = std::stoll(size.substr(x + 1));
        best = count;
      } catch (const std::exception&) {
      }
    }
  return {w, h};
}

}  // namespace

project::Project blankProject(const std::string& name, const graph::InputSpec& input,
                              const Json& data, const Json& train) {
  project::Project p;
  p.name = name;
  p.model.input = input;
  p.model.nodes = {starterNode("input", "Input", Json::object(), "", 0)};
  p.data = data;
  p.train = train;
  return p;
}

std::vector<std::string> templatesFor(const std::string& templatesDir, const std::string& task) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(templatesDir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string file = it->path().filename().string();
    const std::string suffix = project::kFileSuffix;
    if (file.size() <= suffix.size() ||
        file.compare(file.size() - suffix.size(), suffix.size(), suffix))
      continue;
    try {
      if (!task.empty() && project::loadProject(it->path().string()).project.task != task) continue;
    } catch (const Error&) {
      continue;
    }
    out.push_back(file.substr(0, file.size() - suffix.size()));
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string defaultProjectPath(const std::string& dataPath) {
  std::error_code ec;
  fs::path p = fs::absolute(fs::path(dataPath), ec).lexically_normal();
  if (p.has_filename() == false) p = p.parent_path();
  if (fs::is_regular_file(p, ec)) {
    const std::string stem = p.stem().string();
    const bool split = stem == "train" || stem == "data" || stem == "annotations";
    return (p.parent_path() /
            ((split ? p.parent_path().filename().string() : stem) + project::kFileSuffix))
        .string();
  }
  return (p.parent_path() / (p.filename().string() + project::kFileSuffix)).string();
}

namespace {

/// The input's height and width, and why they were chosen.
struct InputSize {
  std::int64_t height = 0, width = 0;
  std::string why;
};

/// What the proposal decided beside what DataProposal holds, for the lines that explain it.
struct StarterDecisions {
  bool separateValidation = false;  ///< the data has its own validation split
  double fraction = 0;              ///< else the part of the training images that validates
  std::string headId;               ///< the template's last layer
  InputSize input;                  ///< the input's height and width, and why
  std::string batchWhy;             ///< why the batch size changed ("" when it did not)
};

/// The data at `dataPath` recognised (out.found) and the task for it, or the one chosen (out.task).
const task::TaskDef& detectDataAndTask(const std::string& dataPath, const StarterChoices& choices,
                                       const task::TaskRegistry& tasks, DataProposal& out) {
  std::optional<data::TargetKind> want;
  if (!choices.task.empty()) {
    if (const std::string unknown = task::unknownTaskMessage(tasks, choices.task); !unknown.empty())
      throw Error(unknown);
    want = tasks.get(choices.task).target;
  }
  try {
    out.found = data::detectData(dataPath, want);
  } catch (const Error& e) {
    if (!want) throw;
    throw Error("task " + choices.task + ": " + e.what());
  }
  out.task = choices.task;
  if (out.task.empty())
    for (const auto& name : tasks.names())
      if (tasks.get(name).target == out.found.targets) {
        out.task = name;
        break;
      }
  if (out.task.empty())
    throw Error(dataPath + ": no task of this program takes " +
                data::targetKindName(out.found.targets));
  return tasks.get(out.task);
}

/// The template (the task's starter, or the one chosen; its name into out.templateName), loaded.
project::Project loadStarterTemplate(const StarterChoices& choices, const StarterContext& context,
                                     const task::TaskDef& def, DataProposal& out) {
  out.templateName = choices.templateName.empty() ? def.starter.templateName : choices.templateName;
  const auto available = templatesFor(context.templatesDir, out.task);
  if (out.templateName.empty() ||
      std::find(available.begin(), available.end(), out.templateName) == available.end())
    throw Error(
        "template \"" + printable(out.templateName) + "\": " +
        (context.templatesDir.empty()
             ? std::string("no templates folder found")
             : "not a template for " + out.task + " in " + context.templatesDir) +
        (available.empty() ? "" : "; the " + out.task + " templates: " + listText(available, 50)));
  return project::loadProject(
             (fs::path(context.templatesDir) / (out.templateName + project::kFileSuffix)).string())
      .project;
}

/// The data section of the found data, paths relative to `base`, the template's fit kept.
Json starterDataSection(const data::DetectedData& found, const fs::path& base,
                        const Json& templateData) {
  Json data = Json::object();
  for (const auto& split : found.splits)
    data[split.name] = relativeSource(split.source, base);
  if (!found.classes.empty()) data["classes"] = found.classes;
  data["fit"] = templateData.contains("fit") ? templateData["fit"] : Json("resize");
  data["normalize"] = "auto";
  data["on_error"] = "skip";
  return data;
}

/// out.imageChannels: 1 when the images read of the first kChannelProbe are grey, else 3.
void probeImageChannels(const data::DatasetSource& source, DataProposal& out) {
  std::int64_t read = 0;
  for (std::int64_t i = 0; i < source.size() && read < kChannelProbe; ++i) {
    try {
      const cv::Mat image = source.load(i);
      ++read;
      out.imageChannels = std::max(out.imageChannels, image.channels() == 1 ? 1 : 3);
    } catch (const Error&) {
    }
  }
  if (!read)
    throw Error(out.found.path + ": no readable image among the first " +
                std::to_string(std::min(source.size(), kChannelProbe)) + " of " +
                std::to_string(source.size()));
}

/// The template made the project's: its name, description, data section and input channels.
void describeProject(project::Project& p, const StarterChoices& choices,
                     const fs::path& projectFile, const Json& data, const DataProposal& out) {
  p.name = choices.name;
  if (p.name.empty()) {
    p.name = projectFile.filename().string();
    if (p.name.size() > std::strlen(project::kFileSuffix))
      p.name.erase(p.name.size() - std::strlen(project::kFileSuffix));
  }
  p.description = "Made from " + out.found.path + " (" + out.found.format +
                  "), starting from the " + out.templateName + " template.";
  p.data = data;
  p.extra = Json::object();
  p.initFrom.clear();
  p.model.input.channels = choices.channels > 0 ? choices.channels : out.imageChannels;
}

/// Scans the project's data into out.scan; its mean and std into the project when chosen.
void scanStarterData(project::Project& p, const fs::path& base, const Registries& registries,
                     const StarterChoices& choices, const StarterContext& context,
                     DataProposal& out) {
  // The scan: counts, unreadable files, sizes, mean and std.
  data::DataScanOptions scanOptions;
  scanOptions.imageSizes = data::DataScanOptions::Sizes::All;
  scanOptions.progress = context.progress;
  out.scan = data::scanProjectData(p, base.string(), registries.transforms, scanOptions);
  if (out.scan.cancelled) throw Error("cancelled while scanning " + out.found.path);
  if (choices.explicitNormalization && !out.scan.mean.empty())
    p.data["normalize"] = Json{{"mean", rounded(out.scan.mean)}, {"std", rounded(out.scan.std)}};
}

/// Sets the last layer's width for the data's classes or targets (out.outputs); returns its id.
std::string setHeadWidth(project::Project& p, const task::TaskDef& def, DataProposal& out) {
  // The head: the task's width for the data's classes or targets.
  out.outputs = def.starter.outputs ? def.starter.outputs(std::int64_t(out.scan.classes.size()),
                                                          std::int64_t(out.scan.targetNames.size()))
                                    : 0;
  const auto heads = outputNodes(p.model);
  if (heads.size() != 1)
    throw Error("template " + out.templateName + ": " + std::to_string(heads.size()) +
                " last layers; a starter template has one");
  graph::Node& head = *heads[0];
  const char* widthKey = head.op == "Linear"   ? "out_features"
                         : head.op == "Conv2d" ? "out_channels"
                                               : nullptr;
  if (!widthKey)
    throw Error("template " + out.templateName + ": its last layer \"" + head.id + "\" is a " +
                head.op + ", not a Linear or Conv2d whose width can be set");
  if (out.outputs > 0) head.params[widthKey] = out.outputs;
  return head.id;
}

/// The input as chosen, else the most common image size scaled down to fit, else the template's.
InputSize proposedInputSize(const StarterChoices& choices, const data::DataScanResult& scan,
                            const graph::InputSpec& templateInput) {
  const auto [commonW, commonH] = commonSize(scan);
  InputSize size;
  size.height = choices.height;
  size.width = choices.width;
  if (size.height <= 0 || size.width <= 0) {
    if (commonW > 0 && commonH > 0) {
      const std::int64_t cap =
          std::max(kStarterMaxSide, std::max(templateInput.height, templateInput.width));
      const double scale = std::min(1.0, double(cap) / double(std::max(commonW, commonH)));
      size.height = std::max<std::int64_t>(8, std::llround(commonH * scale));
      size.width = std::max<std::int64_t>(8, std::llround(commonW * scale));
      size.why = "the most common image size is " + std::to_string(commonW) + "x" +
                 std::to_string(commonH) +
                 (scale < 1 ? ", scaled to at most " + std::to_string(cap) + " a side" : "");
    } else {
      size.height = templateInput.height;
      size.width = templateInput.width;
      size.why = "the template's";
    }
  } else {
    size.why = "as chosen";
  }
  return size;
}

/// Rounds `size` to a step the model's layers accept (else the template's) and sets it as input.
void fitInputSize(InputSize& size, project::Project& p, const graph::InputSpec& templateInput,
                  const Registries& registries, const data::DataScanResult& scan) {
  const train::TaskFacts facts{std::int64_t(scan.classes.size()), scan.classes, scan.targetNames};
  // Only the input size changes between candidates: the sections are read once, the model is
  // analysed for each.
  project::LoadedProject proposal;
  proposal.project = p;
  const auto resolved = resolve::resolveProject(std::move(proposal), registries);
  const auto fits = [&](std::int64_t hh, std::int64_t ww) {
    p.model.input.height = hh;
    p.model.input.width = ww;
    const auto analysis = graph::analyseGraph(p.model, registries.ops);
    return analysis.ok() &&
           !train::headProblem(p.task, resolved.train, analysis, facts, registries.tasks);
  };
  bool fitted = fits(size.height, size.width);
  if (!fitted && size.why != "as chosen") {
    for (const std::int64_t step : {2, 4, 8, 16, 32, 64}) {
      const std::int64_t hh = std::max(step, (size.height + step / 2) / step * step);
      const std::int64_t ww = std::max(step, (size.width + step / 2) / step * step);
      if (fits(hh, ww)) {
        size.why += "; rounded to a multiple of " + std::to_string(step) + " for the model";
        size.height = hh;
        size.width = ww;
        fitted = true;
        break;
      }
    }
  }
  if (!fitted && size.why != "as chosen" && fits(templateInput.height, templateInput.width)) {
    size.height = templateInput.height;
    size.width = templateInput.width;
    size.why += "; the model takes no size near it, so the template's own";
  }
  p.model.input.height = size.height;
  p.model.input.width = size.width;
}

/// Sets the batch size (out.batchSize) for the data's size; returns why it changed, if it did.
std::string fitBatchSize(project::Project& p, DataProposal& out) {
  // The batch: a small set still gets enough optimizer steps an epoch (and BatchNorm enough
  // batches for its running statistics) to learn from: the template's batch, halved until an
  // epoch holds kStarterStepsPerEpoch of them, down to kStarterMinBatch.
  std::string batchWhy;
  if (p.train.is_object() && p.train.contains("batch_size") &&
      p.train["batch_size"].is_number_integer()) {
    const std::int64_t templateBatch = p.train["batch_size"].get<std::int64_t>();
    std::int64_t batch = templateBatch;
    while (batch > kStarterMinBatch && (out.scan.train + batch - 1) / batch < kStarterStepsPerEpoch)
      batch /= 2;
    batch = std::max(std::min(kStarterMinBatch, templateBatch), batch);
    out.batchSize = batch;
    if (batch != templateBatch) {
      p.train["batch_size"] = batch;
      batchWhy = "batch size: " + std::to_string(batch) + " (the template's " +
                 std::to_string(templateBatch) + " would give " +
                 countText((out.scan.train + templateBatch - 1) / templateBatch, "step") +
                 " an epoch on " + countText(out.scan.train, "image") + " to train)";
    }
  }
  return batchWhy;
}

/// What was chosen, and why: one line each into out.choices.
void explainChoices(const task::TaskDef& def, const StarterChoices& choices,
                    const StarterDecisions& d, DataProposal& out) {
  auto& c = out.choices;
  c.push_back("task: " + out.task + " (" + def.description + ")" +
              (choices.task.empty() ? "" : ", as chosen"));
  c.push_back("model: the " + out.templateName + " template, its last layer \"" + d.headId + "\" " +
              std::to_string(out.outputs) + " wide (" +
              (out.scan.targetNames.empty()
                   ? countText(std::int64_t(out.scan.classes.size()), "class")
                   : countText(std::int64_t(out.scan.targetNames.size()), "target")) +
              ")");
  c.push_back("input: " + std::to_string(out.input.channels) + " x " +
              std::to_string(d.input.height) + " x " + std::to_string(d.input.width) +
              " (channels x height x width; " +
              (choices.channels > 0     ? "channels as chosen"
               : out.imageChannels == 1 ? "grey images"
                                        : "colour images") +
              "; " + d.input.why + ")");
  c.push_back(d.separateValidation ? "validation: the data's own validation split"
              : d.fraction > 0
                  ? "validation: " + std::to_string(int(std::lround(d.fraction * 100))) +
                        "% of the training images, stratified (seed 0)"
                  : "validation: none");
  c.push_back(choices.explicitNormalization
                  ? "normalisation: explicit, mean " + numbers(rounded(out.scan.mean)) + ", std " +
                        numbers(rounded(out.scan.std)) + " (from the training images)"
                  : "normalisation: auto (mean and std of the training images, measured when a "
                    "run starts)");
  if (!d.batchWhy.empty()) c.push_back(d.batchWhy);
}

}  // namespace

DataProposal proposeProject(const std::string& dataPath, const std::string& projectPath,
                            const StarterChoices& choices, const StarterContext& context) {
  const auto& registries = needRegistries(context.registries, "proposeProject");
  DataProposal out;

  // The data, and the task its targets call for.
  const task::TaskDef& def = detectDataAndTask(dataPath, choices, registries.tasks, out);

  // The template.
  project::Project p = loadStarterTemplate(choices, context, def, out);
  const graph::InputSpec templateInput = p.model.input;

  // The data section, paths relative to the project's folder.
  std::error_code ec;
  const fs::path projectFile = fs::absolute(fs::path(projectPath), ec).lexically_normal();
  const fs::path base = projectFile.parent_path();
  Json data = starterDataSection(out.found, base, p.data);

  // The training source, opened once for its size and whether its images are grey or colour.
  Problems parseProblems;
  Json probe = data;
  probe.erase("validation");
  const data::DataConfig config = data::parseDataConfig(probe, base.string(), parseProblems);
  if (!parseProblems.empty()) throw Error(formatProblems(parseProblems));
  const auto source = data::openSource(config.train, config.classes, data::ErrorPolicy::Skip);
  probeImageChannels(*source, out);

  StarterDecisions d;
  d.separateValidation = data.contains("validation");
  d.fraction = choices.validationFraction >= 0 ? choices.validationFraction
               : source->size() < kSmallData   ? 0.2
                                               : 0.1;
  if (!d.separateValidation && d.fraction > 0)
    data["validation"] = Json{{"fraction", d.fraction}, {"seed", 0}, {"stratified", true}};

  describeProject(p, choices, projectFile, data, out);
  scanStarterData(p, base, registries, choices, context, out);
  d.headId = setHeadWidth(p, def, out);

  // The input: the most common image size, no larger than the template's or 64 a side, in
  // proportion, then rounded to the first step the model's layers accept.
  d.input = proposedInputSize(choices, out.scan, templateInput);
  fitInputSize(d.input, p, templateInput, registries, out.scan);
  out.input = p.model.input;

  d.batchWhy = fitBatchSize(p, out);
  out.project = p;
  explainChoices(def, choices, d, out);
  out.problems = resolve::checkTrainable(p, base.string(), registries);
  return out;
}

std::string proposalText(const DataProposal& d) {
  std::ostringstream os;
  os << "Found: " << printable(d.found.path) << "\n";
  for (const auto& note : d.found.notes)
    os << "  " << printable(note) << "\n";
  if (!d.found.alternatives.empty())
    os << "  also holds: " << listText(d.found.alternatives) << " (--task chooses)\n";
  const auto& s = d.scan;
  os << "  " << countText(s.train + s.validation, "training image")
     << (s.validation ? " (" + std::to_string(s.train) + " to train, " +
                            std::to_string(s.validation) + " to validate)"
                      : std::string())
     << (s.test ? ", " + countText(s.test, "test image") : std::string()) << "; "
     << countText(std::int64_t(s.skipped.size()), "unreadable or unusable file") << "\n";
  for (std::size_t i = 0; i < s.skipped.size() && i < 5; ++i)
    os << "    " << printable(s.skipped[i].item) << ": " << printable(s.skipped[i].reason) << "\n";
  if (s.skipped.size() > 5) os << "    ... (" << s.skipped.size() - 5 << " more)\n";
  if (!s.targetNames.empty())
    os << "  targets (" << s.targetNames.size() << "): " << listText(s.targetNames) << "\n";
  else
    os << "  classes (" << s.classes.size() << "): " << listText(s.classes) << "\n";
  if (s.imageSizes && !s.imageSizes->empty()) {
    std::vector<std::pair<std::int64_t, std::string>> sizes;
    for (const auto& [size, count] : *s.imageSizes)
      sizes.emplace_back(count, size);
    std::sort(sizes.rbegin(), sizes.rend());
    os << "  image sizes (the images to train):";
    for (std::size_t i = 0; i < sizes.size() && i < 4; ++i)
      os << (i ? "," : "") << " " << sizes[i].second << " (" << sizes[i].first << ")";
    if (sizes.size() > 4) os << ", ... (" << sizes.size() - 4 << " more sizes)";
    os << "; " << (d.imageChannels == 1 ? "grey" : "colour") << "\n";
  }
  if (!s.mean.empty()) os << "  mean " << numbers(s.mean) << ", std " << numbers(s.std) << "\n";
  os << "Chose:\n";
  for (const auto& c : d.choices)
    os << "  " << printable(c) << "\n";
  for (const auto& problem : d.problems)
    os << "Problem: " << printable(problem.toString()) << "\n";
  return os.str();
}

}  // namespace netsmith::import
