#include "ops/export_emit.h"

#include <cstdio>
#include <cstdlib>

namespace netsmith::ops {

std::string pyPair(const std::array<std::int64_t, 2>& v) {
  return "(" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + ")";
}

std::string pyNumber(double v) {
  char buf[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos && s != "inf" && s != "nan") s += ".0";
  return s;
}

std::string onnxPassThrough(OnnxEmitter&, const EmitNode& node) {
  return node.inputs.at(0);
}

PyNode pyModule(std::string module, const EmitNode& node) {
  return {std::move(module), "$m(" + node.inputs.at(0) + ")"};
}

}  // namespace netsmith::ops
