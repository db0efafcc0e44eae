#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace netsmith {

/// The shape of one sample's tensor, batch dimension excluded: {C, H, W} or {features}.
using Shape = std::vector<std::int64_t>;

/// "32x14x14"; "?" for an unknown (empty) shape.
std::string formatShape(const Shape& shape);

/// Product of the dimensions (1 for a scalar).
std::int64_t shapeNumel(const Shape& shape);

}  // namespace netsmith
