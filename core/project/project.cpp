#include "project/project.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "common/file_util.h"
#include "common/json_text.h"
#include "graph/graph_analysis.h"

namespace netsmith::project {

/// Project files are text a person edits: far below this.
constexpr std::uint64_t kMaxProjectBytes = std::uint64_t(64) << 20;

namespace {

std::string stemOf(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  const std::string suffix = kFileSuffix;
  if (name.size() > suffix.size() &&
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
    return name.substr(0, name.size() - suffix.size());
  return std::filesystem::path(path).stem().string();
}

/// Throws unless `root` is a Netsmith project object of a format version this build reads.
void checkProjectHeader(const Json& root, const std::string& sourceName) {
  if (!root.is_object()) {
    throw Error(sourceName + ": not a Netsmith project: the file holds a JSON " +
                jsonTypeName(root) + ", not an object");
  }
  if (!root.contains("format") || root["format"] != kFormatName) {
    throw Error(sourceName + ": not a Netsmith project: \"format\" must be \"" + kFormatName +
                "\"" +
                (root.contains("format") ? ", got " + jsonBrief(root["format"]) : " (missing)"));
  }
  if (!root.contains("version") || !root["version"].is_number_integer()) {
    throw Error(sourceName + ": \"version\" must be a whole number (this build writes " +
                std::to_string(kFormatVersion) + ")");
  }
  const auto version = root["version"].get<std::int64_t>();
  if (version > kFormatVersion) {
    throw Error(sourceName + ": written by a newer Netsmith (format version " +
                std::to_string(version) + "; this build reads up to " +
                std::to_string(kFormatVersion) + "); update Netsmith");
  }
  if (version < 1)
    throw Error(sourceName + ": \"version\" must be >= 1, got " + std::to_string(version));
}

/// Reads the optional "name" and "description" strings into `out.project`.
void readNameAndDescription(const Json& root, LoadedProject& out) {
  Project& p = out.project;
  if (root.contains("name")) {
    if (root["name"].is_string()) {
      p.name = root["name"].get<std::string>();
    } else {
      out.problems.push_back(
          {"name", "must be a string, got " + jsonTypeName(root["name"]), {}, {}});
    }
  }
  if (root.contains("description")) {
    if (root["description"].is_string()) {
      p.description = root["description"].get<std::string>();
    } else {
      out.problems.push_back(
          {"description", "must be a string, got " + jsonTypeName(root["description"]), {}, {}});
    }
  }
}

/// Reads the optional "task" name (lower case letters, digits and _) into `out.project`.
void readTask(const Json& root, LoadedProject& out) {
  if (!root.contains("task")) return;
  const Json& t = root["task"];
  const bool text = t.is_string();
  const std::string name = text ? t.get<std::string>() : std::string();
  const bool fits =
      !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
      });
  if (fits) {
    out.project.task = name;
  } else {
    out.problems.push_back(
        {"task",
         text ? "must name a task in lower case letters, digits and _ (at most 64), got \"" +
                    printable(name.substr(0, 64)) + (name.size() > 64 ? "...\"" : "\"")
              : "must be a string naming a task, got " + jsonTypeName(t),
         {},
         "use \"classification\", or leave \"task\" out"});
  }
}

/// Reads the optional "init_from" weights file into `out.project`.
void readInitFrom(const Json& root, LoadedProject& out) {
  if (!root.contains("init_from")) return;
  Project& p = out.project;
  if (root["init_from"].is_string()) {
    p.initFrom = root["init_from"].get<std::string>();
    if (auto problem = controlCharacterProblem(p.initFrom); !problem.empty()) {
      out.problems.push_back({"init_from", std::move(problem), {}, {}});
      p.initFrom.clear();
    }
  } else {
    out.problems.push_back(
        {"init_from",
         "must be a string (a weights file), got " + jsonTypeName(root["init_from"]),
         {},
         {}});
  }
}

/// Reads the model graph and keeps the data, augment and train sections verbatim.
void readSections(const Json& root, LoadedProject& out) {
  Project& p = out.project;
  if (!root.contains("model")) {
    out.problems.push_back({"model", "missing: every project needs a model section", {}, {}});
  } else {
    p.model = graph::modelFromJson(root["model"], out.problems);
  }
  auto section = [&](const char* key, Json& target, bool wantArray) {
    if (!root.contains(key)) return;
    const Json& v = root[key];
    if (wantArray ? !v.is_array() : !v.is_object()) {
      out.problems.push_back({key,
                              std::string("must be ") + (wantArray ? "a list" : "an object") +
                                  ", got " + jsonTypeName(v),
                              {},
                              {}});
      return;
    }
    target = v;
  };
  section("data", p.data, false);
  section("augment", p.augment, true);
  section("train", p.train, false);
}

/// Keeps the top-level keys this build does not interpret in `p.extra`, to write back.
void keepUnknownKeys(const Json& root, Project& p) {
  for (auto it = root.begin(); it != root.end(); ++it) {
    static const char* known[] = {"format",    "version", "name", "description", "task",
                                  "init_from", "model",   "data", "augment",     "train"};
    if (std::find(std::begin(known), std::end(known), it.key()) == std::end(known)) {
      p.extra[it.key()] = it.value();
    }
  }
}

}  // namespace

LoadedProject parseProject(const std::string& text, const std::string& sourceName) {
  const Json root = parseJsonText(text, sourceName);
  checkProjectHeader(root, sourceName);

  LoadedProject out;
  readNameAndDescription(root, out);
  readTask(root, out);
  readInitFrom(root, out);
  readSections(root, out);
  keepUnknownKeys(root, out.project);
  return out;
}

std::string LoadedProject::baseDir() const {
  if (path.empty()) return {};
  const auto dir = std::filesystem::absolute(path).parent_path();
  return dir.string();
}

LoadedProject loadProject(const std::string& path) {
  auto loaded = parseProject(readTextFile(path, kMaxProjectBytes), path);
  loaded.path = path;
  if (loaded.project.name.empty()) loaded.project.name = stemOf(path);
  return loaded;
}

Json projectToJson(const Project& p) {
  Json root = Json::object();
  root["format"] = kFormatName;
  root["version"] = kFormatVersion;
  root["name"] = p.name;
  if (!p.description.empty()) root["description"] = p.description;
  if (p.task != kDefaultTask) root["task"] = p.task;
  if (!p.initFrom.empty()) root["init_from"] = p.initFrom;
  root["model"] = graph::modelToJson(p.model);
  root["data"] = p.data;
  root["augment"] = p.augment;
  root["train"] = p.train;
  for (auto it = p.extra.begin(); it != p.extra.end(); ++it)
    root[it.key()] = it.value();
  return root;
}

std::string serialiseProject(const Project& project) {
  return projectToJson(project).dump(2) + "\n";
}

void saveProject(const Project& project, const std::string& path) {
  writeFileAtomically(path, serialiseProject(project));
}

Problems validateProject(const LoadedProject& loaded, const ops::OpRegistry& registry) {
  Problems all = loaded.problems;
  const auto analysis = graph::analyseGraph(loaded.project.model, registry);
  all.insert(all.end(), analysis.problems.begin(), analysis.problems.end());
  return all;
}

}  // namespace netsmith::project
