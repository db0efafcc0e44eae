#include <algorithm>

#include "augment/transform.h"
#include "common/error.h"

namespace netsmith::augment {

TransformRegistry TransformRegistry::withBuiltins() {
  TransformRegistry r;
  registerGeometricTransforms(r);
  registerColorTransforms(r);
  registerNoiseTransforms(r);
  registerPolicyTransforms(r);
  registerNormalizeTransform(r);
  registerBatchTransforms(r);
  return r;
}

void TransformRegistry::add(TransformDef def) {
  if (find(def.name)) throw Error("transform \"" + def.name + "\" is registered twice");
  m_defs.push_back(std::move(def));
}

const TransformDef* TransformRegistry::find(const std::string& name) const {
  for (const auto& d : m_defs) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

std::vector<std::string> TransformRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& d : m_defs) out.push_back(d.name);
  return out;
}

std::vector<std::string> TransformRegistry::groups() const {
  std::vector<std::string> out;
  for (const auto& d : m_defs) {
    if (std::find(out.begin(), out.end(), d.group) == out.end()) out.push_back(d.group);
  }
  return out;
}

}  // namespace netsmith::augment
