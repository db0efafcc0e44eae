#pragma once

// The one place where differences between LibTorch versions are handled. Debian ships 1.13
// (CPU); CUDA machines use 2.x. Code elsewhere calls these wrappers instead of testing versions.
#include <torch/version.h>

#define NETSMITH_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) ||           \
   (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

#if !NETSMITH_TORCH_AT_LEAST(1, 13)
#error "Netsmith needs LibTorch 1.13 or newer"
#endif

namespace netsmith::compat {

/// "1.13.0"
inline const char* torchVersion() { return TORCH_VERSION; }

}  // namespace netsmith::compat
