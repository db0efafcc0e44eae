#include "data/project_data.h"

#include <cstdlib>
#include <filesystem>

#include "data/source_formats.h"

namespace netsmith::data {

augment::TransformContext transformContext(const project::Project& project) {
  augment::TransformContext ctx;
  ctx.channels = static_cast<int>(project.model.input.channels);
  ctx.height = static_cast<int>(project.model.input.height);
  ctx.width = static_cast<int>(project.model.input.width);
  // Masks and boxes move with the image: the training source's format says whether its targets lie
  // on the pixels (what the data gives, known before any task is made).
  const auto* def = trainSourceFormat(project.data);
  ctx.pixelTargets = def && targetTraits(def->targets).onPixels;
  return ctx;
}

namespace {
bool hasData(const project::Project& project) {
  return !(project.data.is_object() && project.data.empty());
}

/// A problem for each of the sources' paths that does not exist (only looked up).
void addMissingPaths(const DataConfig& config, Problems& problems) {
  const auto check = [&problems](const std::string& place, const std::string& path) {
    std::error_code ec;
    if (!path.empty() && !std::filesystem::exists(path, ec))
      problems.push_back(
          {place, "\"" + path + "\" does not exist", {}, "choose it on the Data page"});
  };
  std::vector<const SourceSpec*> sources = {&config.train};
  if (config.validation) sources.push_back(&*config.validation);
  if (config.test) sources.push_back(&*config.test);
  for (const auto* s : sources) {
    check(s->path + ".images", s->images);
    check(s->path + ".labels", s->labels);
    check(s->path + ".root", s->root);
    check(s->path + ".manifest", s->manifest);
    check(s->path + ".masks", s->masks);
    for (const auto& f : s->files)
      check(s->path + ".files", f);
  }
}
}  // namespace

Problems validateDataSections(const project::Project& project, const std::string& baseDir,
                              const augment::TransformRegistry& transforms, bool pathsMustExist,
                              std::optional<DataConfig>* parsed) {
  Problems problems;
  if (hasData(project)) {
    const auto config = parseDataConfig(project.data, baseDir, problems);
    if (parsed && problems.empty()) *parsed = config;
    if (pathsMustExist) addMissingPaths(config, problems);
    const auto c = static_cast<std::size_t>(project.model.input.channels);
    if (config.normalization == DataConfig::Normalization::Explicit) {
      if (!config.mean.empty() && config.mean.size() != 1 && config.mean.size() != c) {
        problems.push_back({"data.normalize.mean",
                            "has " + std::to_string(config.mean.size()) +
                                " values but the model input has " + std::to_string(c) +
                                " channel(s)",
                            {},
                            {}});
      }
      if (!config.std.empty() && config.std.size() != 1 && config.std.size() != c) {
        problems.push_back({"data.normalize.std",
                            "has " + std::to_string(config.std.size()) +
                                " values but the model input has " + std::to_string(c) +
                                " channel(s)",
                            {},
                            {}});
      }
    }
  }
  augment::Pipeline::fromJson(project.augment, transforms, transformContext(project), problems);
  return problems;
}

std::unique_ptr<ProjectData> openProjectData(const project::Project& project,
                                             const DataConfig& config,
                                             const augment::TransformRegistry& transforms,
                                             const std::string& cacheDir,
                                             const ProgressFn& progress) {
  const auto context = transformContext(project);
  auto out = std::make_unique<ProjectData>();
  out->data = openDataModule(config);
  out->format = SampleFormat{context.channels, context.height, context.width, config.fit};
  auto norm = resolveNormalization(out->data, out->format, cacheDir, progress);
  if (!norm) return nullptr;
  out->normalization = *norm;
  rebuildPipeline(*out, project, transforms);
  return out;
}

std::unique_ptr<ProjectData> openProjectData(const project::Project& project,
                                             const std::string& baseDir,
                                             const augment::TransformRegistry& transforms,
                                             const std::string& cacheDir,
                                             const ProgressFn& progress) {
  if (!hasData(project))
    throw Error("data: the project has no data section; add one (see the README) to train");
  Problems problems;
  const auto config = parseDataConfig(project.data, baseDir, problems);
  // The augment section's problems with the data's, before anything is opened.
  augment::Pipeline::fromJson(project.augment, transforms, transformContext(project), problems);
  if (!problems.empty()) throw Error(formatProblems(problems));
  return openProjectData(project, config, transforms, cacheDir, progress);
}

void rebuildPipeline(ProjectData& data, const project::Project& project,
                     const augment::TransformRegistry& transforms) {
  auto context = transformContext(project);
  context.mean = data.normalization.mean;
  context.std = data.normalization.std;
  if (context.mean.empty()) {
    context.mean.assign(static_cast<std::size_t>(context.channels), 0.0);
    context.std.assign(static_cast<std::size_t>(context.channels), 1.0);
  }
  Problems problems;
  auto pipeline = augment::Pipeline::fromJson(project.augment, transforms, context, problems);
  if (!problems.empty()) throw Error(formatProblems(problems));
  data.processor.reset();  // it refers to the pipeline being replaced
  data.pipeline = std::move(pipeline);
  data.processor = std::make_unique<SampleProcessor>(
      data.format, &data.pipeline, data.normalization.mean, data.normalization.std);
}

std::string userCacheDir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return (std::filesystem::path(xdg) / "netsmith").string();
  if (const char* home = std::getenv("HOME"); home && *home)
    return (std::filesystem::path(home) / ".cache" / "netsmith").string();
  return {};
}

}  // namespace netsmith::data
