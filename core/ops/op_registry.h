#pragma once

#include <string>
#include <vector>

#include "ops/op_def.h"

namespace netsmith::ops {

/// The set of layer types a graph may use. Built once by the program and passed to whoever
/// needs it (no global registry):
///   const auto registry = ops::OpRegistry::withBuiltins();
///   const OpDef* conv = registry.find("Conv2d");
class OpRegistry {
 public:
  /// A registry holding every op family Netsmith ships.
  static OpRegistry withBuiltins();

  /// Adds an op; throws netsmith::Error when the name is taken.
  void add(OpDef def);
  const OpDef* find(const std::string& name) const;
  const std::vector<OpDef>& all() const { return m_ops; }
  std::vector<std::string> names() const;
  /// Palette groups in display order.
  std::vector<std::string> groups() const;

 private:
  std::vector<OpDef> m_ops;
};

// One registration function per op family file (ops/*_ops.cpp).
void registerInputOps(OpRegistry& registry);
void registerConvOps(OpRegistry& registry);
void registerNormOps(OpRegistry& registry);
void registerActivationOps(OpRegistry& registry);
void registerPoolOps(OpRegistry& registry);
void registerLinearOps(OpRegistry& registry);
void registerMergeOps(OpRegistry& registry);
void registerReshapeOps(OpRegistry& registry);
void registerDropoutOps(OpRegistry& registry);

}  // namespace netsmith::ops
