#pragma once

// The safetensors format (https://github.com/huggingface/safetensors): an 8-byte little-endian
// header length, a JSON header naming each tensor's dtype, shape and byte range, then the raw
// little-endian data. Data only: reading never executes anything from the file.
#include <torch/torch.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace netsmith::checkpoint {

using NamedTensors = std::vector<std::pair<std::string, torch::Tensor>>;

/// The file's bytes for `tensors` (moved to CPU, made contiguous) and string `metadata`.
std::string encodeSafetensors(const NamedTensors& tensors,
                              const std::map<std::string, std::string>& metadata = {});

/// Writes atomically (temporary file, fsync, rename): a crash leaves the previous file intact.
/// Throws netsmith::Error naming the path.
void writeSafetensors(const std::string& path, const NamedTensors& tensors,
                      const std::map<std::string, std::string>& metadata = {});

struct SafetensorsFile {
  std::map<std::string, std::string> metadata;
  NamedTensors tensors;  ///< in file order of their data
};

/// Parses bytes; `name` is used in messages. Throws netsmith::Error for anything that is not a
/// well-formed safetensors file: truncated, corrupt header, unknown dtype, a byte range that
/// does not match the shape or lies outside the data, overlapping tensors.
SafetensorsFile decodeSafetensors(const std::string& bytes, const std::string& name);
SafetensorsFile readSafetensors(const std::string& path);

}  // namespace netsmith::checkpoint
