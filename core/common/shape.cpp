#include "common/shape.h"

namespace netsmith {

std::string formatShape(const Shape& shape) {
  if (shape.empty()) return "?";
  std::string out;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) out += 'x';
    out += std::to_string(shape[i]);
  }
  return out;
}

std::int64_t shapeNumel(const Shape& shape) {
  std::int64_t n = 1;
  for (auto d : shape)
    n *= d;
  return n;
}

}  // namespace netsmith
