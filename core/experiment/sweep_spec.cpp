#include "experiment/sweep_spec.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "augment/transform.h"
#include "ops/op_registry.h"
#include "registries/registries.h"
#include "schema/param_schema.h"
#include "train/lr_schedule.h"
#include "train/train_options.h"

namespace netsmith::experiment {

namespace {

/// "model.nodes[conv1].out_channels" -> {"model", ""}, {"nodes", "conv1"}, {"out_channels", ""}.
struct PathPart {
  std::string key;
  std::string selector;
};

std::vector<PathPart> splitPath(const std::string& path) {
  std::vector<PathPart> parts;
  std::string key, sel;
  bool inSel = false, hadSel = false;
  for (const char c : path) {
    if (inSel) {
      if (c == ']') {
        inSel = false;
        hadSel = true;
      } else {
        sel += c;
      }
    } else if (c == '[' && !hadSel) {
      inSel = true;
    } else if (c == '.') {
      parts.push_back({key, sel});
      key.clear();
      sel.clear();
      hadSel = false;
    } else if (!hadSel) {
      key += c;
    } else {
      return {};  // text after a ]
    }
  }
  if (inSel) return {};
  parts.push_back({key, sel});
  for (const auto& p : parts)
    if (p.key.empty()) return {};
  return parts;
}

std::vector<std::string> namesOf(const schema::ParamSchema& s) {
  std::vector<std::string> out;
  for (const auto& spec : s)
    out.push_back(spec.name);
  return out;
}

/// `where` has no `what` "name"; did you mean "guess"? (`where` empty: unknown what "name")
std::string missingName(const std::string& what, const std::string& name,
                        const std::vector<std::string>& known, const std::string& where = {}) {
  const auto guess = schema::closestName(name, known);
  return (where.empty() ? "unknown " + what : where + " has no " + what) + " \"" + name + "\"" +
         (guess.empty() ? "" : "; did you mean \"" + guess + "\"?");
}

/// The optimizer a project's train section names (train.optimizer.type or train.optimizer),
/// lower case, or "adam": the settings a sweep path under train.optimizer may name.
std::string optimizerType(const project::Project& project) {
  std::string name = "adam";
  if (project.train.is_object() && project.train.contains("optimizer")) {
    const Json& o = project.train["optimizer"];
    if (o.is_string()) name = o.get<std::string>();
    if (o.is_object() && o.contains("type") && o["type"].is_string())
      name = o["type"].get<std::string>();
  }
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return name;
}

/// The settings inside train.optimizer (its optimizer's) or train.schedule (all schedules').
std::vector<std::string> trainSubKeys(const std::string& key, const project::Project& project,
                                      const Registries& registries) {
  std::vector<std::string> sub{"type"};
  if (key == "optimizer") {
    const std::string type = optimizerType(project);
    try {
      for (const auto& n : namesOf(train::optimizerSchema(type)))
        sub.push_back(n);
    } catch (const Error&) {
    }
  } else {
    const auto& schedules = registries.schedules;
    for (const auto& name : schedules.names())
      for (const auto& n : namesOf(schedules.find(name)->schema))
        sub.push_back(n);
    for (const auto& n : namesOf(train::warmupSchema()))
      sub.push_back(n);
  }
  return sub;
}

/// "" when train `path` (split into `parts`) names a train setting, else what is wrong.
std::string checkTrainPath(const std::string& path, const std::vector<PathPart>& parts,
                           const project::Project& project, const Registries& registries) {
  std::vector<std::string> known = namesOf(train::trainSchema());
  for (const char* k : {"epochs", "batch_size", "seed", "optimizer", "schedule"})
    known.push_back(k);
  const auto& key = parts[1].key;
  if (std::find(known.begin(), known.end(), key) == known.end())
    return missingName("key", key, known, "train");
  if (key == "optimizer" || key == "schedule") {
    if (parts.size() != 3)
      return "\"" + path + "\" needs the " + key + "'s setting, e.g. train." + key + ".type";
    const std::vector<std::string> sub = trainSubKeys(key, project, registries);
    if (std::find(sub.begin(), sub.end(), parts[2].key) == sub.end())
      return missingName("key", parts[2].key, sub, "train." + key);
  } else if (parts.size() != 2) {
    return "\"" + path + "\": train." + key + " has no settings inside it";
  }
  return {};
}

/// "" when augment `path` (split into `parts`) names an augmentation's setting, else what is wrong.
std::string checkAugmentPath(const std::string& path, const std::vector<PathPart>& parts,
                             const project::Project& project, const Registries& registries) {
  if (parts.size() != 2 || parts[0].selector.empty())
    return "\"" + path + "\" names an augmentation like augment[RandomCrop].padding";
  std::vector<std::string> present;
  const Json* entry = nullptr;
  for (const auto& e : project.augment) {
    if (!e.is_object() || !e.contains("transform") || !e["transform"].is_string()) continue;
    present.push_back(e["transform"].get<std::string>());
    if (present.back() == parts[0].selector && !entry) entry = &e;
  }
  if (!entry) return missingName("transform", parts[0].selector, present, "the augment list");
  const auto& transforms = registries.transforms;
  const auto* def = transforms.find(parts[0].selector);
  std::vector<std::string> known{"p", "enabled"};
  if (def)
    for (const auto& n : namesOf(def->schema))
      known.push_back(n);
  if (std::find(known.begin(), known.end(), parts[1].key) == known.end())
    return missingName("setting", parts[1].key, known, parts[0].selector);
  return {};
}

/// "" when model `path` (split into `parts`) names a node's setting, else what is wrong.
std::string checkModelPath(const std::string& path, const std::vector<PathPart>& parts,
                           const project::Project& project, const Registries& registries) {
  if (parts.size() != 3 || parts[1].key != "nodes" || parts[1].selector.empty())
    return "\"" + path + "\" names a node's setting like model.nodes[conv1].out_channels";
  const auto* node = project.model.find(parts[1].selector);
  if (!node) {
    std::vector<std::string> ids;
    for (const auto& n : project.model.nodes)
      ids.push_back(n.id);
    return missingName("node", parts[1].selector, ids, "the model");
  }
  const auto* def = registries.ops.find(node->op);
  std::vector<std::string> known{"lr_mult"};
  if (def)
    for (const auto& n : namesOf(def->schema))
      known.push_back(n);
  if (std::find(known.begin(), known.end(), parts[2].key) == known.end())
    return missingName("setting", parts[2].key, known, node->op + " \"" + node->id + "\"");
  return {};
}

/// "" when `path` names a setting of `project`, else what is wrong.
std::string checkPath(const std::string& path, const project::Project& project,
                      const Registries& registries) {
  const auto parts = splitPath(path);
  if (parts.size() < 2) {
    return "\"" + path +
           "\" is not a setting path (e.g. train.optimizer.lr, "
           "augment[RandomCrop].padding, model.nodes[conv1].out_channels)";
  }
  const auto& top = parts[0].key;
  if (top == "train") return checkTrainPath(path, parts, project, registries);
  if (top == "augment") return checkAugmentPath(path, parts, project, registries);
  if (top == "model") return checkModelPath(path, parts, project, registries);
  return "\"" + path + "\" starts with \"" + top + "\"; settings are under train, augment or model";
}

SweepParam readParam(const Json& j, const std::string& at, const project::Project& project,
                     const Registries& registries, Problems& problems) {
  SweepParam p;
  if (!j.is_object()) {
    problems.push_back({at,
                        "must be an object like {\"path\": \"train.optimizer.lr\", "
                        "\"log_uniform\": [1e-5, 1]}",
                        {},
                        {}});
    return p;
  }
  schema::reportUnknownKeys(
      j, {"path", "uniform", "log_uniform", "int_uniform", "choice", "grid_points"}, at, problems);
  if (!j.contains("path") || !j["path"].is_string()) {
    problems.push_back(
        {at + ".path", "missing: the setting to sweep, e.g. train.optimizer.lr", {}, {}});
  } else {
    p.path = j["path"].get<std::string>();
    if (const auto why = checkPath(p.path, project, registries); !why.empty())
      problems.push_back({at + ".path", why, {}, {}});
  }
  int forms = 0;
  for (const auto& [key, kind] :
       {std::pair<const char*, SweepParam::Kind>{"uniform", SweepParam::Kind::Uniform},
        {"log_uniform", SweepParam::Kind::LogUniform},
        {"int_uniform", SweepParam::Kind::IntUniform}}) {
    if (!j.contains(key)) continue;
    ++forms;
    const Json& r = j[key];
    const bool ok = r.is_array() && r.size() == 2 && r[0].is_number() && r[1].is_number() &&
                    std::isfinite(r[0].get<double>()) && std::isfinite(r[1].get<double>()) &&
                    r[0].get<double>() < r[1].get<double>() &&
                    (kind != SweepParam::Kind::LogUniform || r[0].get<double>() > 0);
    if (!ok) {
      problems.push_back({at + "." + key,
                          std::string("must be [low, high] with low < high") +
                              (kind == SweepParam::Kind::LogUniform ? " and low > 0" : ""),
                          {},
                          {}});
      continue;
    }
    p.kind = kind;
    p.low = r[0].get<double>();
    p.high = r[1].get<double>();
  }
  if (j.contains("choice")) {
    ++forms;
    const Json& c = j["choice"];
    if (!c.is_array() || c.empty() || c.size() > 1000) {
      problems.push_back({at + ".choice", "must be a non-empty list of values", {}, {}});
    } else {
      p.kind = SweepParam::Kind::Choice;
      p.values.assign(c.begin(), c.end());
    }
  }
  if (forms != 1) {
    problems.push_back(
        {at, "give exactly one of uniform, log_uniform, int_uniform or choice", {}, {}});
  }
  if (j.contains("grid_points")) {
    const Json& g = j["grid_points"];
    if (!g.is_number_integer() || g.get<std::int64_t>() < 2 || g.get<std::int64_t>() > 1000)
      problems.push_back({at + ".grid_points", "must be a whole number from 2 to 1000", {}, {}});
    else
      p.gridPoints = static_cast<int>(g.get<std::int64_t>());
  }
  return p;
}

/// Sets `value` at `path` in the project's JSON.
void setAt(Json& root, const std::string& path, const Json& value) {
  const auto parts = splitPath(path);
  if (parts.size() < 2) throw Error("sweep: \"" + path + "\" is not a setting path");
  const auto& top = parts[0].key;
  if (top == "train") {
    Json* at = &root["train"];
    for (std::size_t i = 1; i + 1 < parts.size(); ++i) {
      Json& next = (*at)[parts[i].key];
      if (next.is_string()) next = Json{{"type", next.get<std::string>()}};  // "adam" -> {"type"}
      if (!next.is_object()) next = Json::object();
      at = &next;
    }
    (*at)[parts.back().key] = value;
    return;
  }
  if (top == "augment") {
    for (auto& e : root["augment"]) {
      if (e.is_object() && e.contains("transform") && e["transform"] == parts[0].selector) {
        e[parts[1].key] = value;
        return;
      }
    }
    throw Error("sweep: no transform \"" + parts[0].selector + "\" in the augment list");
  }
  if (top == "model") {
    for (auto& n : root["model"]["nodes"]) {
      if (n.is_object() && n.contains("id") && n["id"] == parts[1].selector) {
        if (parts[2].key == "lr_mult")
          n["lr_mult"] = value;
        else
          n["params"][parts[2].key] = value;
        return;
      }
    }
    throw Error("sweep: no node \"" + parts[1].selector + "\" in the model");
  }
  throw Error("sweep: \"" + path + "\" is not under train, augment or model");
}

}  // namespace

std::vector<Json> SweepParam::gridValues() const {
  if (kind == Kind::Choice) return values;
  std::vector<Json> out;
  const int n = std::max(2, gridPoints);
  for (int i = 0; i < n; ++i) {
    const double t = double(i) / double(n - 1);
    double v = kind == Kind::LogUniform
                   ? std::exp(std::log(low) + t * (std::log(high) - std::log(low)))
                   : low + t * (high - low);
    if (kind == Kind::IntUniform) {
      const auto k = static_cast<std::int64_t>(std::llround(v));
      if (!out.empty() && out.back().get<std::int64_t>() == k) continue;
      out.emplace_back(k);
    } else {
      out.emplace_back(v);
    }
  }
  return out;
}

std::vector<std::string> objectiveChoices(const task::TaskDef* def) {
  std::vector<std::string> out;
  for (const char* split : {"val_", "train_"}) {
    if (def)
      for (const auto& f : def->figures)
        out.push_back(split + f.name);
    out.push_back(std::string(split) + "loss");
  }
  return out;
}

namespace {

/// sweep.method: grid, random or tpe.
void readMethod(const Json& sweep, SweepSpec& s, Problems& problems) {
  if (sweep.contains("method")) {
    const Json& m = sweep["method"];
    if (!m.is_string() || (m != "grid" && m != "random" && m != "tpe"))
      problems.push_back(
          {"sweep.method", "must be \"grid\", \"random\" or \"tpe\" (model-based)", {}, {}});
    else
      s.method = m.get<std::string>();
  }
}

/// sweep.params: 1 to 64 settings to sweep, each checked against the project.
void readParams(const Json& sweep, const project::Project& project, const Registries& registries,
                SweepSpec& s, Problems& problems) {
  if (!sweep.contains("params") || !sweep["params"].is_array() || sweep["params"].empty() ||
      sweep["params"].size() > 64) {
    problems.push_back({"sweep.params", "must list 1 to 64 settings to sweep", {}, {}});
  } else {
    for (std::size_t i = 0; i < sweep["params"].size(); ++i)
      s.params.push_back(readParam(sweep["params"][i], "sweep.params[" + std::to_string(i) + "]",
                                   project, registries, problems));
  }
}

/// sweep.objective: one of the task's objectives (objectiveChoices) or another metric's name.
void readObjective(const Json& sweep, const task::TaskDef* def, SweepSpec& s, Problems& problems) {
  if (sweep.contains("objective")) {
    const std::vector<std::string> objectives = objectiveChoices(def);
    const Json& o = sweep["objective"];
    train::MetricChoice metric;
    // A near miss of a built-in name is a typo, not a task's figure.
    if (!o.is_string() || !train::parseMetricChoice(o.get<std::string>(), "auto", metric) ||
        !train::metricTypo(metric).empty()) {
      problems.push_back(
          {"sweep.objective",
           missingName("objective", o.is_string() ? o.get<std::string>() : o.dump(), objectives),
           {},
           {}});
    } else {
      s.objective = metric.name;
    }
  }
}

/// sweep.mode: "max" or "min"; without it, the objective's way where the task knows it.
void readMode(const Json& sweep, const task::TaskDef* def, SweepSpec& s, Problems& problems) {
  bool modeKnown = true;
  {
    train::MetricChoice metric;
    metric.name = s.objective;
    const std::string figure = metric.figure();
    const task::FigureSpec* spec = def ? task::findFigure(def->figures, figure) : nullptr;
    modeKnown = figure == "loss" || spec;
    s.maximize = spec ? spec->higherIsBetter : figure != "loss";
  }
  if (sweep.contains("mode")) {
    const Json& m = sweep["mode"];
    if (!m.is_string() || (m != "max" && m != "min"))
      problems.push_back({"sweep.mode", "must be \"max\" or \"min\"", {}, {}});
    else
      s.maximize = m == "max";
  } else if (!modeKnown) {
    problems.push_back({"sweep.mode",
                        "missing: say whether the objective \"" + s.objective +
                            "\" is better higher (\"max\") or lower (\"min\")",
                        {},
                        {}});
  }
}

/// sweep.trials, parallel, startup_trials, seed, max_minutes, deploy_bench and max_latency_ms.
void readLimits(const Json& sweep, SweepSpec& s, Problems& problems) {
  const auto integer = [&](const char* key, std::int64_t lo, std::int64_t hi, std::int64_t& out) {
    if (!sweep.contains(key)) return;
    const Json& v = sweep[key];
    if (!v.is_number_integer() || v.get<std::int64_t>() < lo || v.get<std::int64_t>() > hi)
      problems.push_back(
          {std::string("sweep.") + key,
           "must be a whole number from " + std::to_string(lo) + " to " + std::to_string(hi),
           {},
           {}});
    else
      out = v.get<std::int64_t>();
  };
  integer("trials", 1, 100000, s.trials);
  integer("parallel", 1, 64, s.parallel);
  integer("startup_trials", 1, 1000, s.startupTrials);
  std::int64_t seed = 0;
  integer("seed", 0, std::int64_t(1) << 53, seed);
  s.seed = static_cast<std::uint64_t>(seed);
  if (sweep.contains("deploy_bench")) {
    if (!sweep["deploy_bench"].is_boolean())
      problems.push_back({"sweep.deploy_bench", "must be true or false", {}, {}});
    else
      s.deployBench = sweep["deploy_bench"].get<bool>();
  }
  if (sweep.contains("max_latency_ms")) {
    const Json& v = sweep["max_latency_ms"];
    if (!v.is_number() || !(v.get<double>() > 0) || v.get<double>() > 1e7) {
      problems.push_back(
          {"sweep.max_latency_ms", "must be a batch-1 latency in milliseconds > 0", {}, {}});
    } else {
      s.maxLatencyMs = v.get<double>();
      s.deployBench = true;
    }
  }
  if (sweep.contains("max_minutes")) {
    const Json& v = sweep["max_minutes"];
    if (!v.is_number() || !(v.get<double>() > 0) || v.get<double>() > 1e6)
      problems.push_back({"sweep.max_minutes", "must be a number of minutes > 0", {}, {}});
    else
      s.maxSeconds = v.get<double>() * 60;
  }
}

/// sweep.asha: its presence turns ASHA on; min_epochs and reduction.
void readAsha(const Json& sweep, SweepSpec& s, Problems& problems) {
  if (sweep.contains("asha")) {
    const Json& a = sweep["asha"];
    if (!a.is_object()) {
      problems.push_back(
          {"sweep.asha", "must be an object like {\"min_epochs\": 1, \"reduction\": 3}", {}, {}});
    } else {
      schema::reportUnknownKeys(a, {"min_epochs", "reduction"}, "sweep.asha", problems);
      s.asha.enabled = true;
      const auto field = [&](const char* key, std::int64_t lo, std::int64_t& out) {
        if (!a.contains(key)) return;
        const Json& v = a[key];
        if (!v.is_number_integer() || v.get<std::int64_t>() < lo || v.get<std::int64_t>() > 1000)
          problems.push_back({std::string("sweep.asha.") + key,
                              "must be a whole number from " + std::to_string(lo) + " to 1000",
                              {},
                              {}});
        else
          out = v.get<std::int64_t>();
      };
      field("min_epochs", 1, s.asha.minEpochs);
      field("reduction", 2, s.asha.reduction);
    }
  }
}

}  // namespace

SweepSpec parseSweep(const Json& sweep, const project::Project& project, Problems& problems,
                     const Registries& registries) {
  const task::TaskDef* def = registries.tasks.find(project.task);
  SweepSpec s;
  if (def) s.objective = task::defaultObjective(*def);
  if (!sweep.is_object()) {
    problems.push_back({"sweep", "must be an object with params, method and objective", {}, {}});
    return s;
  }
  schema::reportUnknownKeys(
      sweep,
      {"name", "method", "params", "objective", "mode", "trials", "max_minutes", "parallel", "seed",
       "asha", "startup_trials", "deploy_bench", "max_latency_ms"},
      "sweep", problems);
  if (sweep.contains("name") && sweep["name"].is_string())
    s.name = sweep["name"].get<std::string>();
  readMethod(sweep, s, problems);
  readParams(sweep, project, registries, s, problems);
  // val_ or train_ and "loss" or a figure of the project's task: the task knows its way;
  // another name needs "mode".
  readObjective(sweep, def, s, problems);
  readMode(sweep, def, s, problems);
  readLimits(sweep, s, problems);
  readAsha(sweep, s, problems);
  return s;
}

Json suggestSweepParam(const std::string& path, const schema::ParamSpec& spec,
                       const Json& current) {
  using schema::ParamType;
  const double lo = spec.min ? *spec.min : -1e300, hi = spec.max ? *spec.max : 1e300;
  const Json value = current.is_null() ? spec.defaultValue : current;
  switch (spec.type) {
    case ParamType::Enum: {
      Json choices = Json::array();
      for (const auto& c : spec.choices)
        choices.push_back(c);
      return Json{{"path", path}, {"choice", choices}};
    }
    case ParamType::Bool:
      return Json{{"path", path}, {"choice", {true, false}}};
    case ParamType::Int: {
      const auto v = value.is_number() ? value.get<std::int64_t>() : std::int64_t(1);
      if (v >= 2 && (v & (v - 1)) == 0) {  // a power of two: half, same, twice
        Json choices = Json::array();
        for (const auto c : {v / 2, v, v * 2})
          if (double(c) >= lo && double(c) <= hi) choices.push_back(c);
        return Json{{"path", path}, {"choice", choices}};
      }
      auto a = static_cast<std::int64_t>(std::max(lo, double(v / 2)));
      auto b =
          static_cast<std::int64_t>(std::min(hi, double(std::max<std::int64_t>(v * 2, v + 2))));
      if (spec.minExclusive && double(a) <= lo) ++a;
      if (a >= b) b = a + 1;
      return Json{{"path", path}, {"int_uniform", {a, b}}};
    }
    case ParamType::Float: {
      const double v = value.is_number() ? value.get<double>() : 0.0;
      const bool rate = path.find("lr") != std::string::npos ||
                        path.find("decay") != std::string::npos ||
                        path.find("eps") != std::string::npos;
      const bool wide = spec.min && spec.max && *spec.min > 0 && *spec.max / *spec.min >= 100;
      if ((rate || wide) && lo >= 0) {
        const double centre = v > 0 ? v : 1e-4;  // e.g. weight_decay 0: 1e-5 .. 1e-3
        double a = std::max(centre / 10, lo > 0 ? lo : 1e-12), b = std::min(centre * 10, hi);
        if (a < b) return Json{{"path", path}, {"log_uniform", {a, b}}};
      }
      double a = std::max(lo, v > 0 ? v / 2 : (v < 0 ? v * 2 : 0.0));
      double b = std::min(hi, v > 0 ? v * 2 : (v < 0 ? v / 2 : 1.0));
      if (spec.minExclusive && a <= lo) a = lo + (b - lo) * 1e-3;
      if (!(a < b)) return Json();
      return Json{{"path", path}, {"uniform", {a, b}}};
    }
    default:
      return Json();
  }
}

Json assignmentJson(const Assignment& values) {
  Json j = Json::object();
  for (const auto& [path, value] : values)
    j[path] = value;
  return j;
}

project::Project applyAssignment(const project::Project& base, const Assignment& values) {
  Json root = project::projectToJson(base);
  for (const auto& [path, value] : values)
    setAt(root, path, value);
  auto loaded = project::parseProject(root.dump(), base.name);
  if (!loaded.problems.empty())
    throw Error("sweep: the trial's project does not read: " + formatProblems(loaded.problems));
  return loaded.project;
}

}  // namespace netsmith::experiment
