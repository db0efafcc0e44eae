#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "common/error.h"

namespace netsmith {

/// A list of definitions looked up by their `name` (ops, transforms, schedules). Built by the
/// program and passed along: never global.
template <typename Def>
class NamedRegistry {
 public:
  /// Adds a definition; throws netsmith::Error when the name is taken.
  void add(Def def) {
    if (find(def.name)) throw Error("\"" + def.name + "\" is registered twice");
    m_defs.push_back(std::move(def));
  }
  const Def* find(const std::string& name) const {
    for (const auto& d : m_defs) {
      if (d.name == name) return &d;
    }
    return nullptr;
  }
  const std::vector<Def>& all() const { return m_defs; }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& d : m_defs)
      out.push_back(d.name);
    return out;
  }
  /// Distinct `group` values in registration order (for palettes and menus).
  std::vector<std::string> groups() const {
    std::vector<std::string> out;
    for (const auto& d : m_defs) {
      if (std::find(out.begin(), out.end(), d.group) == out.end()) out.push_back(d.group);
    }
    return out;
  }

 private:
  std::vector<Def> m_defs;
};

}  // namespace netsmith
