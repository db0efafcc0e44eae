#pragma once
// printf into a string: a line of a report or a cell of a table.
#include <string>

namespace netsmith {

/// `pattern` formatted as printf would, at most 1,023 characters.
std::string formatted(const char* pattern, ...) __attribute__((format(printf, 1, 2)));
/// A fraction as a percentage with two decimals ("91.05%"); "-" when it is not finite.
std::string percentText(double fraction);

}  // namespace netsmith
