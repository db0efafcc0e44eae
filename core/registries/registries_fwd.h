#pragma once
// The registries bundle by name only, for headers that pass it along (registries.h has it).

#include <memory>

namespace netsmith {
struct Registries;
using RegistriesPtr = std::shared_ptr<const Registries>;
}  // namespace netsmith
