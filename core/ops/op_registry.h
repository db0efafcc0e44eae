#pragma once

#include <string>
#include <vector>

#include "common/named_registry.h"
#include "ops/op_def.h"

namespace netsmith::ops {

/// The set of layer types a graph may use. Built once by the program and passed to whoever
/// needs it (no global registry):
///   const auto registry = ops::OpRegistry::withBuiltins();
///   const OpDef* conv = registry.find("Conv2d");
class OpRegistry : public NamedRegistry<OpDef> {
 public:
  /// A registry holding every op family Netsmith ships.
  static OpRegistry withBuiltins();
};

// One registration function per op family file (ops/*_ops.cpp).
void registerInputOps(OpRegistry& registry);
void registerConvOps(OpRegistry& registry);
void registerNormOps(OpRegistry& registry);
void registerActivationOps(OpRegistry& registry);
void registerPoolOps(OpRegistry& registry);
void registerUpsampleOps(OpRegistry& registry);
void registerLinearOps(OpRegistry& registry);
void registerMergeOps(OpRegistry& registry);
void registerReshapeOps(OpRegistry& registry);
void registerDropoutOps(OpRegistry& registry);

}  // namespace netsmith::ops
