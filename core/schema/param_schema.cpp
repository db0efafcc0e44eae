#include "schema/param_schema.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace netsmith::schema {

std::string paramTypeName(ParamType type) {
  switch (type) {
    case ParamType::Int:
      return "int";
    case ParamType::Float:
      return "float";
    case ParamType::Bool:
      return "bool";
    case ParamType::Enum:
      return "enum";
    case ParamType::IntPair:
      return "int-pair";
    case ParamType::FloatPair:
      return "float-pair";
    case ParamType::FloatList:
      return "float-list";
  }
  return "?";
}

namespace {
ParamSpec makeSpec(std::string name, ParamType type, Json def, std::string help) {
  ParamSpec s;
  s.name = std::move(name);
  s.type = type;
  s.defaultValue = std::move(def);
  s.help = std::move(help);
  return s;
}
}  // namespace

ParamSpec ParamSpec::integer(std::string name, Json def, std::string help) {
  return makeSpec(std::move(name), ParamType::Int, std::move(def), std::move(help));
}
ParamSpec ParamSpec::real(std::string name, Json def, std::string help) {
  return makeSpec(std::move(name), ParamType::Float, std::move(def), std::move(help));
}
ParamSpec ParamSpec::boolean(std::string name, bool def, std::string help) {
  return makeSpec(std::move(name), ParamType::Bool, def, std::move(help));
}
ParamSpec ParamSpec::choice(std::string name, std::string def, std::vector<std::string> choices,
                            std::string help) {
  auto s = makeSpec(std::move(name), ParamType::Enum, std::move(def), std::move(help));
  s.choices = std::move(choices);
  return s;
}
ParamSpec ParamSpec::intPair(std::string name, Json def, std::string help) {
  return makeSpec(std::move(name), ParamType::IntPair, std::move(def), std::move(help));
}
ParamSpec ParamSpec::floatPair(std::string name, Json def, std::string help) {
  return makeSpec(std::move(name), ParamType::FloatPair, std::move(def), std::move(help));
}
ParamSpec ParamSpec::floatList(std::string name, Json def, std::string help) {
  return makeSpec(std::move(name), ParamType::FloatList, std::move(def), std::move(help));
}
ParamSpec ParamSpec::atLeast(double v) const {
  auto s = *this;
  s.min = v;
  s.minExclusive = false;
  return s;
}
ParamSpec ParamSpec::above(double v) const {
  auto s = *this;
  s.min = v;
  s.minExclusive = true;
  return s;
}
ParamSpec ParamSpec::atMost(double v) const {
  auto s = *this;
  s.max = v;
  return s;
}
ParamSpec ParamSpec::orKeywords(std::vector<std::string> words) const {
  auto s = *this;
  s.keywords = std::move(words);
  return s;
}
ParamSpec ParamSpec::orOtherNames() const {
  auto s = *this;
  s.openChoices = true;
  return s;
}
double ParamSpec::suggestedStep() const {
  if (unit == "deg" || unit == "px") return 1.0;
  if (min && max && *min >= 0 && *max <= 1) return 0.01;
  return 0.0;
}

ParamSpec ParamSpec::inUnit(std::string u) const {
  auto s = *this;
  s.unit = std::move(u);
  return s;
}

std::string describeValue(const Json& value) {
  return jsonBrief(value, 60);
}

namespace {

std::size_t editDistance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j)
    prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string formatNumber(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

// Checks one number against the spec's range; returns "" when fine.
std::string checkRange(const ParamSpec& spec, double v) {
  if (spec.min) {
    if (spec.minExclusive && !(v > *spec.min)) return "must be > " + formatNumber(*spec.min);
    if (!spec.minExclusive && v < *spec.min) return "must be >= " + formatNumber(*spec.min);
  }
  if (spec.max && v > *spec.max) return "must be <= " + formatNumber(*spec.max);
  return {};
}

bool isWholeNumber(const Json& v) {
  if (v.is_number_integer() || v.is_number_unsigned()) return true;
  if (v.is_number_float()) {
    const double d = v.get<double>();
    return std::isfinite(d) && std::floor(d) == d && std::fabs(d) < 9e15;
  }
  return false;
}

std::string keywordList(const std::vector<std::string>& words) {
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (i) out += i + 1 == words.size() ? " or " : ", ";
    out += '"' + words[i] + '"';
  }
  return out;
}

/// Checks an enum value against the spec's choices (or, open, for a plain name).
std::string checkEnumValue(const ParamSpec& spec, const Json& value) {
  if (!value.is_string())
    return "expects one of " + keywordList(spec.choices) + ", got " + describeValue(value);
  const auto s = value.get<std::string>();
  if (std::find(spec.choices.begin(), spec.choices.end(), s) != spec.choices.end()) return {};
  if (spec.openChoices) {
    if (isPlainName(s)) return {};
    return "expects a name such as " + keywordList(spec.choices) +
           " (lower-case letters, digits and _), got " + describeValue(value);
  }
  return "expects one of " + keywordList(spec.choices) + ", got \"" + s + "\"";
}

/// Checks an int pair, normalising a single whole number n to [n, n] and the items to integers.
std::string checkIntPairValue(const ParamSpec& spec, Json& value, const std::string& alsoKeywords) {
  const Json original = value;
  if (isWholeNumber(value)) {
    const auto n = static_cast<std::int64_t>(value.get<double>());
    value = Json::array({n, n});
  }
  if (!value.is_array() || value.size() != 2 || !isWholeNumber(value[0]) ||
      !isWholeNumber(value[1]))
    return "expects a whole number or a pair [height, width]" + alsoKeywords + ", got " +
           describeValue(value);
  for (auto& item : value) {
    item = static_cast<std::int64_t>(item.get<double>());
    auto why = checkRange(spec, item.get<double>());
    if (!why.empty()) return why + " (got " + describeValue(original) + ")";
  }
  return {};
}

/// Checks a float range [low, high], normalising a single number x to [x, x].
std::string checkFloatPairValue(const ParamSpec& spec, Json& value,
                                const std::string& alsoKeywords) {
  const Json original = value;
  if (value.is_number()) value = Json::array({value, value});
  if (!value.is_array() || value.size() != 2 || !value[0].is_number() || !value[1].is_number())
    return "expects a range [low, high]" + alsoKeywords + ", got " + describeValue(original);
  for (const auto& item : value) {
    if (!std::isfinite(item.get<double>()))
      return "expects finite numbers, got " + describeValue(original);
    auto why = checkRange(spec, item.get<double>());
    if (!why.empty()) return why + " (got " + describeValue(original) + ")";
  }
  if (value[0].get<double>() > value[1].get<double>())
    return "expects low <= high, got " + describeValue(original);
  return {};
}

/// Checks a list of numbers, normalising a single number x to [x].
std::string checkFloatListValue(const ParamSpec& spec, Json& value,
                                const std::string& alsoKeywords) {
  const Json original = value;
  if (value.is_number()) value = Json::array({value});
  if (!value.is_array() || value.empty())
    return "expects a number or a list of numbers" + alsoKeywords + ", got " +
           describeValue(original);
  for (const auto& item : value) {
    if (!item.is_number() || !std::isfinite(item.get<double>()))
      return "expects a list of numbers" + alsoKeywords + ", got " + describeValue(original);
    auto why = checkRange(spec, item.get<double>());
    if (!why.empty()) return why + " (got " + describeValue(original) + ")";
  }
  return {};
}

// Validates one value; returns "" when valid, else the reason. May normalise `value`.
std::string checkValue(const ParamSpec& spec, Json& value) {
  if (value.is_string() && std::find(spec.keywords.begin(), spec.keywords.end(),
                                     value.get<std::string>()) != spec.keywords.end()) {
    return {};
  }
  const std::string alsoKeywords =
      spec.keywords.empty() ? std::string() : " or " + keywordList(spec.keywords);
  switch (spec.type) {
    case ParamType::Int: {
      if (!isWholeNumber(value))
        return "expects a whole number" + alsoKeywords + ", got " + describeValue(value);
      value = static_cast<std::int64_t>(value.get<double>());
      auto why = checkRange(spec, value.get<double>());
      return why.empty() ? why : why + " (got " + describeValue(value) + ")";
    }
    case ParamType::Float: {
      if (!value.is_number() || !std::isfinite(value.get<double>()))
        return "expects a number" + alsoKeywords + ", got " + describeValue(value);
      auto why = checkRange(spec, value.get<double>());
      return why.empty() ? why : why + " (got " + describeValue(value) + ")";
    }
    case ParamType::Bool:
      if (!value.is_boolean()) return "expects true or false, got " + describeValue(value);
      return {};
    case ParamType::Enum:
      return checkEnumValue(spec, value);
    case ParamType::IntPair:
      return checkIntPairValue(spec, value, alsoKeywords);
    case ParamType::FloatPair:
      return checkFloatPairValue(spec, value, alsoKeywords);
    case ParamType::FloatList:
      return checkFloatListValue(spec, value, alsoKeywords);
  }
  return {};
}

}  // namespace

Params resolveParamsAt(const ParamSchema& schema, const Json& given, const std::string& basePath,
                       Problems& problems) {
  Problems found;
  auto params = resolveParams(schema, given, basePath, {}, found);
  for (auto& p : found) {
    // "parameter gamma must be > 0" -> path "base.gamma", message "must be > 0".
    const std::string prefix = "parameter ";
    if (p.message.rfind(prefix, 0) == 0) {
      const std::string rest = p.message.substr(prefix.size());
      const auto space = rest.find(' ');
      std::string name = rest.substr(0, space);
      if (!name.empty() && name.front() == '"') name = name.substr(1, name.find('"', 1) - 1);
      p.path = basePath + "." + name;
      p.message = space == std::string::npos ? rest : rest.substr(space + 1);
    }
    problems.push_back(std::move(p));
  }
  return params;
}

void reportUnknownKeys(const Json& obj, const std::vector<std::string>& known,
                       const std::string& path, Problems& problems) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (std::find(known.begin(), known.end(), it.key()) != known.end()) continue;
    std::string msg = "unknown key \"" + it.key() + "\"";
    const auto guess = closestName(it.key(), known);
    if (!guess.empty()) msg += "; did you mean \"" + guess + "\"?";
    problems.push_back({path, msg, {}, {}});
  }
}

Json schemaToJson(const ParamSchema& schema) {
  Json params = Json::array();
  for (const auto& s : schema) {
    Json j{{"name", s.name}, {"type", paramTypeName(s.type)}, {"default", s.defaultValue}};
    if (s.required()) j["required"] = true;
    if (s.min) j["min"] = *s.min;
    if (s.minExclusive) j["min_exclusive"] = true;
    if (s.max) j["max"] = *s.max;
    if (!s.choices.empty()) j["choices"] = s.choices;
    if (s.openChoices) j["other_names"] = true;
    if (!s.keywords.empty()) j["keywords"] = s.keywords;
    if (!s.unit.empty()) j["unit"] = s.unit;
    j["help"] = s.help;
    params.push_back(std::move(j));
  }
  return params;
}

std::string schemaToText(const ParamSchema& schema, const std::string& indent) {
  std::string out;
  for (const auto& s : schema) {
    out += indent + s.name + " (" + paramTypeName(s.type) + (s.unit.empty() ? "" : ", " + s.unit) +
           ", " +
           (s.required() ? std::string("required") : "default " + describeValue(s.defaultValue)) +
           "): " + s.help + "\n";
  }
  return out;
}

bool isPlainName(const std::string& name) {
  if (name.empty() || name.size() > 64 || name[0] < 'a' || name[0] > 'z') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

std::string closestName(const std::string& name, const std::vector<std::string>& candidates) {
  // Bounded work, whatever a file holds: names of up to 128 characters are compared, and at
  // most ~4 million table cells are filled in all (a few milliseconds).
  constexpr std::size_t kLongest = 128, kCells = std::size_t(1) << 22;
  std::string best;
  if (name.size() > kLongest) return best;
  std::size_t bestDist = std::max<std::size_t>(2, name.size() / 3) + 1;
  std::size_t cells = 0;
  for (const auto& c : candidates) {
    const std::size_t lengthGap =
        c.size() > name.size() ? c.size() - name.size() : name.size() - c.size();
    if (c.size() > kLongest || lengthGap >= bestDist) continue;  // it cannot be closer
    cells += (name.size() + 1) * (c.size() + 1);
    if (cells > kCells) break;
    const auto d = editDistance(name, c);
    if (d < bestDist) {
      bestDist = d;
      best = c;
    }
  }
  return best;
}

Params resolveParams(const ParamSchema& schema, const Json& given, const std::string& where,
                     const std::string& nodeId, Problems& problems) {
  Json out = Json::object();
  auto add = [&](const std::string& param, const std::string& message) {
    problems.push_back({where, "parameter " + param + " " + message, nodeId, {}});
  };
  if (!given.is_null() && !given.is_object()) {
    problems.push_back({where, "params must be an object, got " + jsonTypeName(given), nodeId, {}});
    return Params(out);
  }
  std::vector<std::string> names;
  for (const auto& spec : schema)
    names.push_back(spec.name);
  if (given.is_object()) {
    for (auto it = given.begin(); it != given.end(); ++it) {
      if (std::find(names.begin(), names.end(), it.key()) != names.end()) continue;
      std::string msg = "\"" + it.key() + "\" is not known";
      const auto guess = closestName(it.key(), names);
      if (!guess.empty()) {
        msg += "; did you mean \"" + guess + "\"?";
      } else if (names.empty()) {
        msg += "; this op takes no parameters";
      } else {
        msg += "; known: ";
        for (std::size_t i = 0; i < names.size(); ++i)
          msg += (i ? ", " : "") + names[i];
      }
      problems.push_back({where, "parameter " + msg, nodeId, {}});
    }
  }
  for (const auto& spec : schema) {
    const bool present = given.is_object() && given.contains(spec.name);
    if (!present) {
      if (spec.required()) {
        add(spec.name, "is required (" + spec.help + ")");
        continue;
      }
      out[spec.name] = spec.defaultValue;
      continue;
    }
    Json value = given.at(spec.name);
    const auto why = checkValue(spec, value);
    if (!why.empty()) {
      add(spec.name, why);
      continue;
    }
    out[spec.name] = value;
  }
  return Params(out);
}

bool Params::isKeyword(const std::string& name, const std::string& keyword) const {
  const auto& v = raw(name);
  return v.is_string() && v.get<std::string>() == keyword;
}

const Json& Params::raw(const std::string& name) const {
  auto it = m_values.find(name);
  if (it == m_values.end()) throw Error("internal: parameter \"" + name + "\" was not resolved");
  return *it;
}

std::int64_t Params::integer(const std::string& name) const {
  const auto& v = raw(name);
  if (!v.is_number()) throw Error("internal: parameter \"" + name + "\" is not a number");
  return v.get<std::int64_t>();
}

double Params::real(const std::string& name) const {
  const auto& v = raw(name);
  if (!v.is_number()) throw Error("internal: parameter \"" + name + "\" is not a number");
  return v.get<double>();
}

bool Params::flag(const std::string& name) const {
  const auto& v = raw(name);
  if (!v.is_boolean()) throw Error("internal: parameter \"" + name + "\" is not a boolean");
  return v.get<bool>();
}

std::string Params::text(const std::string& name) const {
  const auto& v = raw(name);
  if (!v.is_string()) throw Error("internal: parameter \"" + name + "\" is not a string");
  return v.get<std::string>();
}

std::array<double, 2> Params::range(const std::string& name) const {
  const auto& v = raw(name);
  if (v.is_number()) return {v.get<double>(), v.get<double>()};
  if (v.is_array() && v.size() == 2) return {v[0].get<double>(), v[1].get<double>()};
  throw Error("internal: parameter \"" + name + "\" is not a range");
}

std::vector<double> Params::list(const std::string& name) const {
  const auto& v = raw(name);
  if (v.is_number()) return {v.get<double>()};
  std::vector<double> out;
  if (v.is_array()) {
    for (const auto& item : v)
      out.push_back(item.get<double>());
    return out;
  }
  throw Error("internal: parameter \"" + name + "\" is not a list");
}

std::array<std::int64_t, 2> Params::pair(const std::string& name) const {
  const auto& v = raw(name);
  if (v.is_number()) return {v.get<std::int64_t>(), v.get<std::int64_t>()};
  if (v.is_array() && v.size() == 2) return {v[0].get<std::int64_t>(), v[1].get<std::int64_t>()};
  throw Error("internal: parameter \"" + name + "\" is not an int pair");
}

}  // namespace netsmith::schema
