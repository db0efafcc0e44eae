#pragma once

// The address a listening socket binds to while a ScopedBindAddress lives. LibTorch's TCPStore
// server (1.13, and 2.x) listens on every interface, whatever host it is given: under a
// torchrun- or Slurm-style launch with MASTER_ADDR=127.0.0.1, rank 0 served the job's store on
// 0.0.0.0. While a scope is active, a bind() to the wildcard address of MASTER_ADDR's family is
// made to MASTER_ADDR itself, and one to the other family's wildcard fails (the server then
// tries the next address), so the store listens where MASTER_ADDR says and nowhere else. No
// LibTorch here.
#include <string>

namespace netsmith::distributed {

class ScopedBindAddress {
 public:
  /// Resolves `host` (a name or a numeric address); throws netsmith::Error naming it when it
  /// does not resolve. Only one scope may be active at a time.
  explicit ScopedBindAddress(const std::string& host);
  ~ScopedBindAddress();
  ScopedBindAddress(const ScopedBindAddress&) = delete;
  ScopedBindAddress& operator=(const ScopedBindAddress&) = delete;

  /// False in sanitizer builds, where bind() is not redirected (the store listens on every
  /// interface there, as LibTorch does).
  static bool supported();
};

}  // namespace netsmith::distributed
