#pragma once

// Shared by the fuzz targets: the readers under test take paths (the same code the CLI runs),
// so each input is written to a file in a private temporary folder first.
#include <cstddef>
#include <cstdint>
#include <string>

namespace netsmith::fuzz {

/// A 0700 folder of this process, made on first use, removed at exit.
const std::string& scratchDir();

/// Writes `size` bytes to scratchDir()/name and returns the path.
std::string writeScratch(const std::string& name, const std::uint8_t* data, std::size_t size);

/// Splits an input in two: the first two bytes (little-endian) give the first part's length
/// (modulo what is left), the rest is the second part.
struct TwoParts {
  std::string first, second;
};
TwoParts splitInput(const std::uint8_t* data, std::size_t size);

}  // namespace netsmith::fuzz
