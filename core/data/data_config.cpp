#include "data/data_config.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "schema/param_schema.h"

namespace netsmith::data {

std::string sourceFormatName(SourceFormat f) {
  switch (f) {
    case SourceFormat::Idx:
      return "idx";
    case SourceFormat::ImageFolder:
      return "image_folder";
    case SourceFormat::Csv:
      return "csv";
    case SourceFormat::Cifar10:
      return "cifar10";
  }
  return "?";
}

namespace {

const std::vector<std::string> kFormats = {"idx", "image_folder", "csv", "cifar10"};

std::string resolvePath(const std::string& baseDir, const std::string& p) {
  std::filesystem::path path(p);
  if (path.is_relative() && !baseDir.empty()) path = std::filesystem::path(baseDir) / path;
  return path.lexically_normal().string();
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
  const auto it = std::find(kFormats.begin(), kFormats.end(), format);
  if (it == kFormats.end()) {
    std::string msg = "unknown format \"" + format + "\"; known: idx, image_folder, csv, cifar10";
    problems.push_back({path + ".format", msg, {}, {}});
    return std::nullopt;
  }
  s.format = static_cast<SourceFormat>(it - kFormats.begin());
  s.limit = readLimit(j, path, problems);
  switch (s.format) {
    case SourceFormat::Idx:
      schema::reportUnknownKeys(j, {"format", "images", "labels", "limit"}, path, problems);
      if (readString(j, "images", path, s.images, problems, true))
        s.images = resolvePath(baseDir, s.images);
      if (readString(j, "labels", path, s.labels, problems, true))
        s.labels = resolvePath(baseDir, s.labels);
      break;
    case SourceFormat::ImageFolder:
      schema::reportUnknownKeys(j, {"format", "root", "limit"}, path, problems);
      if (readString(j, "root", path, s.root, problems, true))
        s.root = resolvePath(baseDir, s.root);
      break;
    case SourceFormat::Csv:
      schema::reportUnknownKeys(j, {"format", "manifest", "limit"}, path, problems);
      if (readString(j, "manifest", path, s.manifest, problems, true))
        s.manifest = resolvePath(baseDir, s.manifest);
      break;
    case SourceFormat::Cifar10: {
      schema::reportUnknownKeys(j, {"format", "files", "limit"}, path, problems);
      if (!j.contains("files") || !j["files"].is_array() || j["files"].empty()) {
        problems.push_back({path + ".files",
                            "must list the CIFAR-10 .bin batch files, e.g. [\"data_batch_1.bin\"]",
                            {},
                            {}});
        break;
      }
      for (const auto& f : j["files"]) {
        if (!f.is_string()) {
          problems.push_back(
              {path + ".files", "must hold file names, got " + jsonBrief(f), {}, {}});
          continue;
        }
        s.files.push_back(resolvePath(baseDir, f.get<std::string>()));
      }
      break;
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

}  // namespace

DataConfig parseDataConfig(const Json& data, const std::string& baseDir, Problems& problems) {
  DataConfig c;
  if (!data.is_object()) {
    problems.push_back({"data", "must be an object", {}, {}});
    return c;
  }
  schema::reportUnknownKeys(
      data, {"train", "validation", "test", "classes", "fit", "normalize", "on_error"}, "data",
      problems);
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
          c.split.fraction = v["fraction"].get<double>();
        }
      }
      if (v.contains("seed")) {
        if (!v["seed"].is_number_integer() || v["seed"].get<std::int64_t>() < 0) {
          problems.push_back({"data.validation.seed", "must be a whole number >= 0", {}, {}});
        } else {
          c.split.seed = v["seed"].get<std::uint64_t>();
        }
      }
      if (v.contains("stratified")) {
        if (!v["stratified"].is_boolean()) {
          problems.push_back({"data.validation.stratified", "must be true or false", {}, {}});
        } else {
          c.split.stratified = v["stratified"].get<bool>();
        }
      }
      c.split.limit = readLimit(v, "data.validation", problems);
    } else {
      problems.push_back(
          {"data.validation", "must be {\"fraction\": 0.1} or a source with a \"format\"", {}, {}});
    }
  }
  if (data.contains("test")) c.test = readSource(data["test"], "data.test", baseDir, problems);
  if (data.contains("classes")) {
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
  if (data.contains("normalize")) {
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
  return c;
}

}  // namespace netsmith::data
