#include "data/data_config.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <iterator>
#include <set>

#include "data/source_formats.h"
#include "schema/param_schema.h"

namespace netsmith::data {

std::string sourceFormatName(SourceFormat f) {
  return sourceFormat(f).name;
}

const TargetTraits& targetTraits(TargetKind kind) {
  // In the enum's order.
  static const TargetTraits kTraits[] = {
      // description                      one class  per class  pixels  colours
      {"one class per sample", true, true, false, false},
      {"a set of labels per sample", false, true, false, false},
      {"numbers to predict per sample", false, false, false, false},
      {"a class mask per sample", false, false, true, true},
      {"boxes per sample", false, false, true, false},
  };
  static_assert(std::size(kTraits) == static_cast<std::size_t>(TargetKind::Boxes) + 1,
                "one row per TargetKind");
  return kTraits[static_cast<int>(kind)];
}

std::string targetKindName(TargetKind kind) {
  return targetTraits(kind).description;
}

namespace {

std::string resolvePath(const std::string& baseDir, const std::string& p) {
  std::filesystem::path path(p);
  if (path.is_relative() && !baseDir.empty()) path = std::filesystem::path(baseDir) / path;
  return path.lexically_normal().string();
}

/// A data.exclude entry resolved: "PATH" or "PATH #N" with PATH against `baseDir`.
std::string resolveExcludeEntry(const std::string& baseDir, const std::string& entry) {
  const auto hash = entry.rfind(" #");
  if (hash != std::string::npos && hash + 2 < entry.size() &&
      std::all_of(entry.begin() + std::ptrdiff_t(hash) + 2, entry.end(),
                  [](unsigned char ch) { return std::isdigit(ch); }))
    return resolvePath(baseDir, entry.substr(0, hash)) + entry.substr(hash);
  return resolvePath(baseDir, entry);
}

void readExclude(const Json& v, const std::string& baseDir, std::vector<std::string>& out,
                 Problems& problems) {
  if (!v.is_array() || v.size() > kMaxExcluded) {
    problems.push_back({"data.exclude",
                        "must be a list of at most " + std::to_string(kMaxExcluded) +
                            " samples (image files, or \"FILE #N\" for a record of an IDX or "
                            "CIFAR file), got " +
                            jsonBrief(v),
                        {},
                        {}});
    return;
  }
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string() || v[i].get<std::string>().empty() ||
        v[i].get<std::string>().size() > 4096) {
      problems.push_back({"data.exclude[" + std::to_string(i) + "]",
                          "must be an image file or \"FILE #N\", got " + jsonBrief(v[i]),
                          {},
                          {}});
      out.clear();
      return;
    }
    out.push_back(resolveExcludeEntry(baseDir, v[i].get<std::string>()));
  }
}

bool readString(const Json& obj, const char* key, const std::string& path, std::string& out,
                Problems& problems, bool required) {
  if (!obj.contains(key)) {
    if (required) problems.push_back({path + "." + key, "missing", {}, {}});
    return false;
  }
  if (!obj[key].is_string() || obj[key].get<std::string>().empty()) {
    problems.push_back(
        {path + "." + key, "must be a non-empty string, got " + jsonBrief(obj[key]), {}, {}});
    return false;
  }
  const std::string text = obj[key].get<std::string>();
  if (auto problem = controlCharacterProblem(text); !problem.empty()) {
    problems.push_back({path + "." + key, std::move(problem), {}, {}});
    return false;
  }
  out = text;
  return true;
}

std::int64_t readLimit(const Json& obj, const std::string& path, Problems& problems) {
  if (!obj.contains("limit")) return 0;
  const Json& v = obj["limit"];
  if (!v.is_number_integer() || v.get<std::int64_t>() < 0) {
    problems.push_back({path + ".limit",
                        "must be a whole number >= 0 (0: all samples), got " + jsonBrief(v),
                        {},
                        {}});
    return 0;
  }
  return v.get<std::int64_t>();
}

/// A source's file list: a non-empty list of non-empty paths.
bool readList(const Json& obj, const SourceField& field, const std::string& path,
              std::vector<std::string>& out, Problems& problems) {
  const std::string at = path + "." + field.key;
  if (!obj.contains(field.key)) {
    problems.push_back({at, "missing: " + field.help, {}, {}});
    return false;
  }
  const Json& v = obj[field.key];
  if (!v.is_array() || v.empty()) {
    problems.push_back(
        {at, "must be a non-empty list: " + field.help + ", got " + jsonBrief(v), {}, {}});
    return false;
  }
  for (const auto& f : v) {
    if (!f.is_string() || f.get<std::string>().empty()) {
      problems.push_back({at, "must hold file names, got " + jsonBrief(f), {}, {}});
      return false;
    }
    if (auto problem = controlCharacterProblem(f.get<std::string>()); !problem.empty()) {
      problems.push_back({at, std::move(problem), {}, {}});
      return false;
    }
    out.push_back(f.get<std::string>());
  }
  return true;
}

/// A source, checked against its format's description (source_formats.h).
std::optional<SourceSpec> readSource(const Json& j, const std::string& path,
                                     const std::string& baseDir, Problems& problems) {
  if (!j.is_object()) {
    problems.push_back({path, "must be an object with a \"format\"", {}, {}});
    return std::nullopt;
  }
  SourceSpec s;
  s.path = path;
  std::string format;
  if (!readString(j, "format", path, format, problems, true)) return std::nullopt;
  const SourceFormatDef* def = findSourceFormat(format);
  if (!def) {
    std::string known;
    for (const auto& d : sourceFormats())
      known += (known.empty() ? "" : ", ") + d.name;
    problems.push_back(
        {path + ".format", "unknown format \"" + format + "\"; known: " + known, {}, {}});
    return std::nullopt;
  }
  s.format = def->format;
  s.limit = readLimit(j, path, problems);
  std::vector<std::string> keys{"format", "limit"};
  for (const auto& field : def->fields)
    keys.push_back(field.key);
  schema::reportUnknownKeys(j, keys, path, problems);
  for (const auto& field : def->fields) {
    if (field.list) {
      auto& list = s.*field.list;
      if (readList(j, field, path, list, problems))
        for (auto& f : list)
          f = resolvePath(baseDir, f);
    } else if (readString(j, field.key.c_str(), path, s.*field.path, problems, true)) {
      s.*field.path = resolvePath(baseDir, s.*field.path);
    }
  }
  return s;
}

std::vector<double> readNumbers(const Json& v, const std::string& path, bool positive,
                                Problems& problems) {
  std::vector<double> out;
  const Json list = v.is_number() ? Json::array({v}) : v;
  if (!list.is_array() || list.empty()) {
    problems.push_back(
        {path,
         "must be a number or a list with one number per channel, got " + jsonBrief(v),
         {},
         {}});
    return out;
  }
  for (const auto& x : list) {
    if (!x.is_number() || !std::isfinite(x.get<double>()) || (positive && x.get<double>() <= 0)) {
      problems.push_back({path,
                          std::string("must hold ") + (positive ? "positive " : "") +
                              "numbers, got " + jsonBrief(v),
                          {},
                          {}});
      return {};
    }
    out.push_back(x.get<double>());
  }
  return out;
}

/// Reads data.validation's split options (fraction, seed, stratified, limit) into `split`.
void readSplit(const Json& v, SplitSpec& split, Problems& problems) {
  schema::reportUnknownKeys(v, {"fraction", "seed", "stratified", "limit"}, "data.validation",
                            problems);
  if (v.contains("fraction")) {
    if (!v["fraction"].is_number() || v["fraction"].get<double>() < 0 ||
        v["fraction"].get<double>() >= 1) {
      problems.push_back({"data.validation.fraction",
                          "must be a number in [0, 1), got " + jsonBrief(v["fraction"]),
                          {},
                          {}});
    } else {
      split.fraction = v["fraction"].get<double>();
    }
  }
  if (v.contains("seed")) {
    if (!v["seed"].is_number_integer() || v["seed"].get<std::int64_t>() < 0) {
      problems.push_back({"data.validation.seed", "must be a whole number >= 0", {}, {}});
    } else {
      split.seed = v["seed"].get<std::uint64_t>();
    }
  }
  if (v.contains("stratified")) {
    if (!v["stratified"].is_boolean()) {
      problems.push_back({"data.validation.stratified", "must be true or false", {}, {}});
    } else {
      split.stratified = v["stratified"].get<bool>();
    }
  }
  split.limit = readLimit(v, "data.validation", problems);
}

/// Reads data.train, data.validation (a source or split options) and data.test.
void readSources(const Json& data, const std::string& baseDir, DataConfig& c, Problems& problems) {
  if (!data.contains("train")) {
    problems.push_back({"data.train",
                        "missing: where the training images come from",
                        {},
                        "e.g. {\"format\": \"image_folder\", \"root\": \"images/train\"}"});
  } else if (auto s = readSource(data["train"], "data.train", baseDir, problems)) {
    c.train = *s;
  }
  if (data.contains("validation")) {
    const Json& v = data["validation"];
    if (v.is_object() && v.contains("format")) {
      c.validation = readSource(v, "data.validation", baseDir, problems);
    } else if (v.is_object()) {
      readSplit(v, c.split, problems);
    } else {
      problems.push_back(
          {"data.validation", "must be {\"fraction\": 0.1} or a source with a \"format\"", {}, {}});
    }
  }
  if (data.contains("test")) c.test = readSource(data["test"], "data.test", baseDir, problems);
}

/// Reads data.classes: a list of class names.
void readClasses(const Json& data, DataConfig& c, Problems& problems) {
  if (!data.contains("classes")) return;
  const Json& v = data["classes"];
  if (!v.is_array()) {
    problems.push_back({"data.classes", "must be a list of class names", {}, {}});
  } else {
    for (const auto& name : v) {
      if (!name.is_string()) {
        problems.push_back({"data.classes", "must hold strings, got " + jsonBrief(name), {}, {}});
        break;
      }
      c.classes.push_back(name.get<std::string>());
    }
  }
}

/// Reads data.targets: a non-empty list of different column names.
void readTargets(const Json& data, DataConfig& c, Problems& problems) {
  if (!data.contains("targets")) return;
  const Json& v = data["targets"];
  std::set<std::string> seen;
  if (!v.is_array() || v.empty()) {
    problems.push_back(
        {"data.targets", "must be a list of column names, got " + jsonBrief(v), {}, {}});
  } else {
    for (const auto& name : v) {
      if (!name.is_string() || name.get<std::string>().empty() ||
          !seen.insert(name.get<std::string>()).second) {
        problems.push_back(
            {"data.targets", "must hold different column names, got " + jsonBrief(name), {}, {}});
        c.targets.clear();
        break;
      }
      c.targets.push_back(name.get<std::string>());
    }
  }
}

/// Reads data.colors: one "#rrggbb" colour per class of data.classes.
void readColors(const Json& data, DataConfig& c, Problems& problems) {
  if (!data.contains("colors")) return;
  const Json& v = data["colors"];
  const auto isColour = [](const Json& x) {
    if (!x.is_string()) return false;
    const std::string t = x.get<std::string>();
    return t.size() == 7 && t[0] == '#' && std::all_of(t.begin() + 1, t.end(), [](char ch) {
             return std::isxdigit(static_cast<unsigned char>(ch));
           });
  };
  if (!v.is_array() || !std::all_of(v.begin(), v.end(), isColour)) {
    problems.push_back({"data.colors",
                        "must be a list of \"#rrggbb\" colours, one per class, got " + jsonBrief(v),
                        {},
                        {}});
  } else if (!c.classes.empty() && v.size() != c.classes.size()) {
    problems.push_back({"data.colors",
                        "has " + std::to_string(v.size()) + " colours for " +
                            std::to_string(c.classes.size()) + " classes",
                        {},
                        "give one colour per class of data.classes"});
  } else {
    for (const auto& x : v)
      c.colors.push_back(x.get<std::string>());
  }
}

/// Reads data.fit and data.on_error.
void readPolicies(const Json& data, DataConfig& c, Problems& problems) {
  if (data.contains("fit")) {
    const Json& v = data["fit"];
    if (v == "resize") {
      c.fit = FitPolicy::Resize;
    } else if (v == "resize_crop") {
      c.fit = FitPolicy::ResizeCrop;
    } else {
      problems.push_back(
          {"data.fit", "must be \"resize\" or \"resize_crop\", got " + jsonBrief(v), {}, {}});
    }
  }
  if (data.contains("on_error")) {
    const Json& v = data["on_error"];
    if (v == "skip") {
      c.onError = ErrorPolicy::Skip;
    } else if (v == "fail") {
      c.onError = ErrorPolicy::Fail;
    } else {
      problems.push_back(
          {"data.on_error", "must be \"skip\" or \"fail\", got " + jsonBrief(v), {}, {}});
    }
  }
}

/// Reads data.normalize: "auto", "none" or an explicit mean and std.
void readNormalization(const Json& data, DataConfig& c, Problems& problems) {
  if (!data.contains("normalize")) return;
  const Json& v = data["normalize"];
  if (v == "auto") {
    c.normalization = DataConfig::Normalization::Auto;
  } else if (v == "none") {
    c.normalization = DataConfig::Normalization::None;
  } else if (v.is_object()) {
    schema::reportUnknownKeys(v, {"mean", "std"}, "data.normalize", problems);
    c.normalization = DataConfig::Normalization::Explicit;
    if (!v.contains("mean") || !v.contains("std")) {
      problems.push_back({"data.normalize", "needs both \"mean\" and \"std\"", {}, {}});
    } else {
      c.mean = readNumbers(v["mean"], "data.normalize.mean", false, problems);
      c.std = readNumbers(v["std"], "data.normalize.std", true, problems);
    }
  } else {
    problems.push_back({"data.normalize",
                        "must be \"auto\", \"none\" or {\"mean\": [...], \"std\": [...]}",
                        {},
                        {}});
  }
}

}  // namespace

std::string excludeEntryFor(const std::string& item, const std::string& baseDir) {
  if (baseDir.empty()) return item;
  const auto base = std::filesystem::path(baseDir).lexically_normal();
  const auto path = std::filesystem::path(item).lexically_normal();
  const auto relative = path.lexically_relative(base);
  if (relative.empty() || relative.is_absolute() || *relative.begin() == "..") return item;
  return relative.generic_string();
}

DataConfig parseDataConfig(const Json& data, const std::string& baseDir, Problems& problems) {
  DataConfig c;
  if (!data.is_object()) {
    problems.push_back({"data", "must be an object", {}, {}});
    return c;
  }
  schema::reportUnknownKeys(data,
                            {"train", "validation", "test", "classes", "targets", "colors", "fit",
                             "normalize", "on_error", "exclude"},
                            "data", problems);
  readSources(data, baseDir, c, problems);
  readClasses(data, c, problems);
  readTargets(data, c, problems);
  readColors(data, c, problems);
  for (auto* spec :
       {&c.train, c.validation ? &*c.validation : nullptr, c.test ? &*c.test : nullptr})
    if (spec) spec->targets = c.targets;
  if (data.contains("exclude")) readExclude(data["exclude"], baseDir, c.exclude, problems);
  readPolicies(data, c, problems);
  readNormalization(data, c, problems);
  return c;
}

}  // namespace netsmith::data
