#include "ops/op_registry.h"

namespace netsmith::ops {

std::string initSchemeName(InitScheme scheme) {
  switch (scheme) {
    case InitScheme::Default:
      return "default";
    case InitScheme::KaimingNormal:
      return "kaiming_normal";
    case InitScheme::KaimingUniform:
      return "kaiming_uniform";
    case InitScheme::XavierUniform:
      return "xavier_uniform";
    case InitScheme::XavierNormal:
      return "xavier_normal";
    case InitScheme::Zeros:
      return "zeros";
  }
  return "default";
}

std::vector<std::string> initSchemeNames() {
  return {"default",        "kaiming_normal", "kaiming_uniform",
          "xavier_uniform", "xavier_normal",  "zeros"};
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
  registerUpsampleOps(r);
  registerLinearOps(r);
  registerMergeOps(r);
  registerReshapeOps(r);
  registerDropoutOps(r);
  return r;
}

}  // namespace netsmith::ops
