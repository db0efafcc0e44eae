#include "fuzz_input.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace netsmith::fuzz {

const std::string& scratchDir() {
  static const std::string dir = [] {
    char pattern[] = "/tmp/netsmith-fuzz-XXXXXX";
    const char* made = mkdtemp(pattern);
    if (!made) {
      std::perror("netsmith fuzz: mkdtemp");
      std::abort();
    }
    static const std::string path = made;
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    });
    return path;
  }();
  return dir;
}

std::string writeScratch(const std::string& name, const std::uint8_t* data, std::size_t size) {
  const std::string path = scratchDir() + "/" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  if (!out) {
    std::fprintf(stderr, "netsmith fuzz: cannot write %s\n", path.c_str());
    std::abort();
  }
  return path;
}

TwoParts splitInput(const std::uint8_t* data, std::size_t size) {
  TwoParts parts;
  if (size < 2) {
    parts.second.assign(reinterpret_cast<const char*>(data), size);
    return parts;
  }
  const std::size_t rest = size - 2;
  const std::size_t n = (std::size_t(data[0]) | (std::size_t(data[1]) << 8)) % (rest + 1);
  parts.first.assign(reinterpret_cast<const char*>(data + 2), n);
  parts.second.assign(reinterpret_cast<const char*>(data + 2 + n), rest - n);
  return parts;
}

}  // namespace netsmith::fuzz
