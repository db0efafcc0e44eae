#include "common/text_format.h"

#include <cmath>
#include <cstdarg>
#include <cstdio>

namespace netsmith {

std::string formatted(const char* pattern, ...) {
  char buffer[1024];
  va_list args;
  va_start(args, pattern);
  std::vsnprintf(buffer, sizeof buffer, pattern, args);
  va_end(args);
  return buffer;
}

std::string percentText(double fraction) {
  return std::isfinite(fraction) ? formatted("%.2f%%", 100.0 * fraction) : std::string("-");
}

}  // namespace netsmith
