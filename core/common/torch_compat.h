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

#include <ATen/Tensor.h>
#include <c10/util/StringUtil.h>

#include <string>
#include <type_traits>

namespace netsmith::compat {

/// The key an optimizer's per-parameter state map uses for `param`: a string of the
/// TensorImpl address in LibTorch 1.x, the address itself in newer versions.
///   auto it = optimizer.state().find(compat::stateKey(optimizer.state(), param));
template <typename StateMap>
auto stateKey(const StateMap&, const at::Tensor& param) {
  using Key = typename StateMap::key_type;
  if constexpr (std::is_same_v<Key, std::string>) {
    return c10::guts::to_string(param.unsafeGetTensorImpl());
  } else {
    return static_cast<Key>(param.unsafeGetTensorImpl());
  }
}

/// "1.13.0"
inline const char* torchVersion() {
  return TORCH_VERSION;
}

}  // namespace netsmith::compat
