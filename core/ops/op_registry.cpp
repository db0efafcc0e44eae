#include "ops/op_registry.h"

#include <algorithm>

#include "common/error.h"

namespace netsmith::ops {

std::string initSchemeName(InitScheme scheme) {
  switch (scheme) {
    case InitScheme::Default: return "default";
    case InitScheme::KaimingNormal: return "kaiming_normal";
    case InitScheme::KaimingUniform: return "kaiming_uniform";
    case InitScheme::XavierUniform: return "xavier_uniform";
    case InitScheme::XavierNormal: return "xavier_normal";
    case InitScheme::Zeros: return "zeros";
  }
  return "default";
}

std::vector<std::string> initSchemeNames() {
  return {"default", "kaiming_normal", "kaiming_uniform", "xavier_uniform", "xavier_normal",
          "zeros"};
}

std::optional<InitScheme> parseInitScheme(const std::string& name) {
  for (auto s : {InitScheme::Default, InitScheme::KaimingNormal, InitScheme::KaimingUniform,
                 InitScheme::XavierUniform, InitScheme::XavierNormal, InitScheme::Zeros}) {
    if (initSchemeName(s) == name) return s;
  }
  return std::nullopt;
}

OpRegistry OpRegistry::withBuiltins() {
  OpRegistry r;
  registerInputOps(r);
  registerConvOps(r);
  registerNormOps(r);
  registerActivationOps(r);
  registerPoolOps(r);
  registerLinearOps(r);
  registerMergeOps(r);
  registerReshapeOps(r);
  registerDropoutOps(r);
  return r;
}

void OpRegistry::add(OpDef def) {
  if (find(def.name)) throw Error("op \"" + def.name + "\" is registered twice");
  m_ops.push_back(std::move(def));
}

const OpDef* OpRegistry::find(const std::string& name) const {
  for (const auto& op : m_ops) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

std::vector<std::string> OpRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& op : m_ops) out.push_back(op.name);
  return out;
}

std::vector<std::string> OpRegistry::groups() const {
  std::vector<std::string> out;
  for (const auto& op : m_ops) {
    if (std::find(out.begin(), out.end(), op.group) == out.end()) out.push_back(op.group);
  }
  return out;
}

}  // namespace netsmith::ops
