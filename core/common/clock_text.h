#pragma once

// A span of seconds as a clock shows it ("04:07", "1:02:09"), for progress lines and bars
// (the CLI's and the studio's alike). No Qt, no LibTorch.
#include <cmath>
#include <cstdio>
#include <string>

namespace netsmith {

/// "MM:SS" under an hour, "H:MM:SS" from one; "--:--" for a negative or unknown span.
inline std::string clockText(double seconds) {
  if (!(seconds >= 0)) return "--:--";
  const auto s = static_cast<long long>(std::llround(seconds));
  char text[32];
  if (s >= 3600)
    std::snprintf(text, sizeof text, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
  else
    std::snprintf(text, sizeof text, "%02lld:%02lld", s / 60, s % 60);
  return text;
}

}  // namespace netsmith
