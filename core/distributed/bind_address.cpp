#include "distributed/bind_address.h"

#include <dlfcn.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "common/error.h"

#if defined(__SANITIZE_ADDRESS__)
#define NETSMITH_REDIRECT_BIND 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NETSMITH_REDIRECT_BIND 0
#endif
#endif
#ifndef NETSMITH_REDIRECT_BIND
#define NETSMITH_REDIRECT_BIND 1
#endif

namespace netsmith::distributed {

namespace {

sockaddr_storage g_address{};
socklen_t g_length = 0;
std::atomic<bool> g_active{false};

/// The address to bind instead of `addr` while a scope is active: true with `replacement`
/// filled for the wildcard of MASTER_ADDR's family; false with `refuse` set for the other
/// family's wildcard; false for anything else (bound as asked).
bool redirectedBind(const sockaddr* addr, socklen_t len, sockaddr_storage& replacement,
                    socklen_t& replacementLength, bool& refuse);

}  // namespace

ScopedBindAddress::ScopedBindAddress(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &found);
  if (rc != 0 || !found) {
    throw Error("MASTER_ADDR \"" + printable(host) + "\" does not resolve (" + ::gai_strerror(rc) +
                ")");
  }
  std::memcpy(&g_address, found->ai_addr, found->ai_addrlen);
  g_length = found->ai_addrlen;
  ::freeaddrinfo(found);
  if (g_active.exchange(true)) throw Error("internal: two bind scopes at once");
}

ScopedBindAddress::~ScopedBindAddress() {
  g_active = false;
}

bool ScopedBindAddress::supported() {
  return NETSMITH_REDIRECT_BIND != 0;
}

namespace {

bool redirectedBind(const sockaddr* addr, socklen_t len, sockaddr_storage& replacement,
                    socklen_t& replacementLength, bool& refuse) {
  refuse = false;
  if (!g_active || !addr) return false;
  const bool anyV4 =
      addr->sa_family == AF_INET && len >= sizeof(sockaddr_in) &&
      reinterpret_cast<const sockaddr_in*>(addr)->sin_addr.s_addr == htonl(INADDR_ANY);
  const bool anyV6 =
      addr->sa_family == AF_INET6 && len >= sizeof(sockaddr_in6) &&
      IN6_IS_ADDR_UNSPECIFIED(&reinterpret_cast<const sockaddr_in6*>(addr)->sin6_addr);
  if (!anyV4 && !anyV6) return false;
  if (addr->sa_family != g_address.ss_family) {
    refuse = true;  // the other family's wildcard: the server goes on to the next address
    return false;
  }
  replacement = g_address;
  replacementLength = g_length;
  if (addr->sa_family == AF_INET) {
    reinterpret_cast<sockaddr_in*>(&replacement)->sin_port =
        reinterpret_cast<const sockaddr_in*>(addr)->sin_port;
  } else {
    reinterpret_cast<sockaddr_in6*>(&replacement)->sin6_port =
        reinterpret_cast<const sockaddr_in6*>(addr)->sin6_port;
  }
  return true;
}

}  // namespace

}  // namespace netsmith::distributed

#if NETSMITH_REDIRECT_BIND
// Interposes libc's bind() for this program (LibTorch's calls included): see the header.
extern "C" int bind(int fd, const struct sockaddr* addr, socklen_t len) noexcept {
  using Bind = int (*)(int, const struct sockaddr*, socklen_t);
  static const Bind real = reinterpret_cast<Bind>(::dlsym(RTLD_NEXT, "bind"));
  if (!real) {
    errno = ENOSYS;
    return -1;
  }
  sockaddr_storage replacement{};
  socklen_t replacementLength = 0;
  bool refuse = false;
  if (netsmith::distributed::redirectedBind(addr, len, replacement, replacementLength, refuse))
    return real(fd, reinterpret_cast<const sockaddr*>(&replacement), replacementLength);
  if (refuse) {
    errno = EADDRNOTAVAIL;
    return -1;
  }
  return real(fd, addr, len);
}
#endif
