#pragma once

#include <string>

#include "common/error.h"
#include "common/json.h"
#include "graph/model_graph.h"
#include "ops/op_registry.h"

namespace netsmith::project {

/// The project file format this build writes and the newest it reads.
constexpr int kFormatVersion = 1;
constexpr const char* kFormatName = "netsmith-project";
constexpr const char* kFileSuffix = ".netsmith.json";

/// Everything a `*.netsmith.json` file holds: model graph, data, augmentations, training options.
/// Sections this build does not interpret yet (data, augment, train, unknown top-level keys)
/// are kept verbatim, so loading and saving never loses anything.
/// The task of a project without a "task" key (task/task_registry.h names the tasks).
inline constexpr char kDefaultTask[] = "classification";

struct Project {
  std::string name;
  std::string description;
  /// What the project trains: a name in the program's task registry ("classification",
  /// written to the file only when it is another task). Checked against the registry by
  /// validation (train/trainability), not here.
  std::string task = kDefaultTask;
  graph::ModelGraph model;
  Json data = Json::object();
  Json augment = Json::array();
  Json train = Json::object();
  /// Weights to start from (an imported model's safetensors, or a checkpoint): loaded by name
  /// and shape before training, relative to the project file. "" for none.
  std::string initFrom;
  Json extra = Json::object();  ///< unknown top-level keys, written back as they were
};

/// A project read from text, plus the structural problems found while reading it.
struct LoadedProject {
  Project project;
  Problems problems;
  std::string path;  ///< the file it came from ("" when parsed from text)

  /// The folder relative data paths are resolved against: the project file's folder.
  std::string baseDir() const;
};

/// Parses a project. Throws netsmith::Error for text that is not a Netsmith project at all:
/// malformed JSON (with line and column), a wrong "format", a newer "version". Problems inside
/// the project (a node without an id, a wrong type) are collected in `problems` instead.
LoadedProject parseProject(const std::string& text, const std::string& sourceName);

/// Reads and parses a file (see parseProject); the file name becomes the default name.
LoadedProject loadProject(const std::string& path);

Json projectToJson(const Project& project);
/// Pretty-printed JSON (2-space indent) with a trailing newline.
std::string serialiseProject(const Project& project);
/// Atomic save: a crash mid-write never leaves a half-written project.
void saveProject(const Project& project, const std::string& path);

/// Every problem in the project: structural ones from loading plus the model analysis.
Problems validateProject(const LoadedProject& loaded, const ops::OpRegistry& registry);

}  // namespace netsmith::project
