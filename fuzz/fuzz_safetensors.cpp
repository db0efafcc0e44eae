// The safetensors reader: header length, JSON header (dtypes, shapes, byte ranges), data.
// Only netsmith::Error may come out; a tensor that decodes must match its declared shape.
#include "checkpoint/safetensors.h"
#include "common/error.h"

using namespace netsmith;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    const auto file = checkpoint::decodeSafetensors(bytes, "fuzz.safetensors");
    std::int64_t total = 0;
    for (const auto& [name, tensor] : file.tensors) {
      if (!tensor.defined() || !tensor.is_contiguous()) __builtin_trap();
      total += tensor.numel() * static_cast<std::int64_t>(tensor.element_size());
    }
    // Every decoded byte came from the file: the tensors cannot hold more than it did.
    if (total > static_cast<std::int64_t>(size)) __builtin_trap();
  } catch (const Error&) {
  }
  return 0;
}
