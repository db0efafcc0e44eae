#include "common/error.h"

namespace netsmith {

std::string Problem::toString() const {
  std::string out = path.empty() ? message : path + ": " + message;
  if (!fix.empty()) out += "; " + fix;
  return out;
}

std::string formatProblems(const Problems& problems) {
  std::string out;
  for (const auto& p : problems) {
    out += p.toString();
    out += '\n';
  }
  return out;
}

}  // namespace netsmith
