#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/json.h"

namespace netsmith::schema {

/// The kinds of value a parameter can hold. Forms, the CLI and the JSON reader all use these.
enum class ParamType {
  Int,        ///< a whole number
  Float,      ///< a real number
  Bool,       ///< true / false
  Enum,       ///< one string out of `choices`
  IntPair,    ///< one int (used for both) or [height, width]
  FloatPair,  ///< [low, high] (a range), or one number used for both
  FloatList,  ///< [a, b, ...]: one number per channel; a single number is a list of one
};

/// One configurable parameter: everything a form, a validator or `--help` needs to know.
struct ParamSpec {
  std::string name;
  ParamType type = ParamType::Int;
  Json defaultValue;                 ///< null: the parameter is required
  std::optional<double> min;         ///< inclusive lower bound for numbers (and pair items)
  std::optional<double> max;         ///< inclusive upper bound
  bool minExclusive = false;         ///< `min` itself is not allowed (e.g. p > 0)
  std::vector<std::string> choices;  ///< for Enum
  /// Enum only: `choices` are suggestions, and any name (lower-case letters, digits and "_",
  /// starting with a letter, at most 64 characters) is accepted too; a check that knows more
  /// (a task's figures for train.monitor) comes later.
  bool openChoices = false;
  std::vector<std::string> keywords;  ///< strings accepted in place of a number: "auto", "same"
  std::string unit;                   ///< "px", "%", ...
  std::string help;                   ///< one line

  bool required() const { return defaultValue.is_null(); }
  /// How far one arrow press moves a Float: whole units for angles and pixels, hundredths for
  /// a value within [0, 1] (a probability, a fraction, a momentum); 0 for "a tenth of the
  /// value's order" (a learning rate of 0.001 moves by 0.0001, 15 by 1).
  double suggestedStep() const;

  // Declaration helpers, so an op's schema reads as a list:
  //   ParamSpec::intPair("kernel_size", 3, "window size").atLeast(1)
  static ParamSpec integer(std::string name, Json def, std::string help);
  static ParamSpec real(std::string name, Json def, std::string help);
  static ParamSpec boolean(std::string name, bool def, std::string help);
  static ParamSpec choice(std::string name, std::string def, std::vector<std::string> choices,
                          std::string help);
  static ParamSpec intPair(std::string name, Json def, std::string help);
  static ParamSpec floatPair(std::string name, Json def, std::string help);
  static ParamSpec floatList(std::string name, Json def, std::string help);
  ParamSpec atLeast(double v) const;
  ParamSpec above(double v) const;
  ParamSpec atMost(double v) const;
  ParamSpec orKeywords(std::vector<std::string> words) const;
  /// An Enum that also takes names other than its choices (see openChoices).
  ParamSpec orOtherNames() const;
  ParamSpec inUnit(std::string u) const;
};

using ParamSchema = std::vector<ParamSpec>;

std::string paramTypeName(ParamType type);

/// A parameter set checked against its schema, with defaults filled in.
///   Params p = resolveParams(schema, json, "node \"conv1\"", problems);
///   auto k = p.pair("kernel_size");
class Params {
 public:
  Params() = default;
  explicit Params(Json values) : m_values(std::move(values)) {}

  bool isKeyword(const std::string& name, const std::string& keyword) const;
  bool isAuto(const std::string& name) const { return isKeyword(name, "auto"); }
  std::int64_t integer(const std::string& name) const;
  double real(const std::string& name) const;
  bool flag(const std::string& name) const;
  std::string text(const std::string& name) const;
  std::array<std::int64_t, 2> pair(const std::string& name) const;
  std::array<double, 2> range(const std::string& name) const;
  std::vector<double> list(const std::string& name) const;
  bool has(const std::string& name) const { return m_values.contains(name); }
  const Json& raw(const std::string& name) const;
  const Json& values() const { return m_values; }

 private:
  Json m_values = Json::object();
};

/// Checks `given` (a JSON object) against `schema`: unknown names (with a "did you mean"), wrong
/// types, out-of-range values and missing required ones each add a Problem under `where`
/// (e.g. `node "conv1"`, path `params.kernel_size`). Returns the values with defaults filled in;
/// the result is only meaningful when no problem was added.
Params resolveParams(const ParamSchema& schema, const Json& given, const std::string& where,
                     const std::string& nodeId, Problems& problems);

/// Like resolveParams, but each problem's path names the parameter: `train.schedule.gamma:
/// must be > 0` (for sections of the project file rather than graph nodes).
Params resolveParamsAt(const ParamSchema& schema, const Json& given, const std::string& basePath,
                       Problems& problems);

/// Adds `path: unknown key "x"; did you mean "y"?` for each key of `obj` not in `known`.
void reportUnknownKeys(const Json& obj, const std::vector<std::string>& known,
                       const std::string& path, Problems& problems);

/// The schema as JSON, one object per parameter (name, type, default, range, choices, help):
/// what `netsmith-cli ops --json` prints and what forms are generated from.
Json schemaToJson(const ParamSchema& schema);
/// One line per parameter: "kernel_size (int-pair, px, default 3): filter height and width".
std::string schemaToText(const ParamSchema& schema, const std::string& indent);

/// True for a name an open choice takes: [a-z][a-z0-9_]*, at most 64 characters.
bool isPlainName(const std::string& name);

/// Renders a value as a person would type it: 3, 0.5, true, "same", [3, 3].
std::string describeValue(const Json& value);

/// The closest name in `candidates` to `name` (edit distance), or "" when none is close.
/// Names longer than 128 characters get no suggestion, and the search stops after a bounded
/// amount of work (a list of 100,000 candidates is not compared in full).
std::string closestName(const std::string& name, const std::vector<std::string>& candidates);

}  // namespace netsmith::schema
