#include "checkpoint/safetensors.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "common/error.h"
#include "common/file_util.h"
#include "common/json.h"

namespace netsmith::checkpoint {

namespace {

struct DtypeInfo {
  const char* name;
  torch::ScalarType type;
  std::size_t bytes;
};

const DtypeInfo kDtypes[] = {
    {"F64", torch::kFloat64, 8},   {"F32", torch::kFloat32, 4}, {"F16", torch::kFloat16, 2},
    {"BF16", torch::kBFloat16, 2}, {"I64", torch::kInt64, 8},   {"I32", torch::kInt32, 4},
    {"I16", torch::kInt16, 2},     {"I8", torch::kInt8, 1},     {"U8", torch::kUInt8, 1},
    {"BOOL", torch::kBool, 1},
};

const DtypeInfo* byType(torch::ScalarType t) {
  for (const auto& d : kDtypes) {
    if (d.type == t) return &d;
  }
  return nullptr;
}

const DtypeInfo* byName(const std::string& n) {
  for (const auto& d : kDtypes) {
    if (n == d.name) return &d;
  }
  return nullptr;
}

constexpr std::uint64_t kMaxHeader = 100u << 20;  // the reference implementation's limit

/// The error for file `name`, which is not a valid safetensors file because of `why`.
Error invalidSafetensors(const std::string& name, const std::string& why) {
  return Error(name + ": not a valid safetensors file: " + why);
}

/// A tensor as the header names it: its dtype, shape and byte range in the data.
struct SafetensorsEntry {
  std::string name;
  const DtypeInfo* dtype;
  std::vector<std::int64_t> shape;
  std::uint64_t begin, end;
};

/// Reads the header's length into `n` and parses the header: bounded by the file and
/// kMaxHeader, nested within bounds, a JSON object.
nlohmann::json readSafetensorsHeader(const std::string& bytes, const std::string& name,
                                     std::uint64_t& n) {
  if (bytes.size() < 8)
    throw invalidSafetensors(name, "too short (" + std::to_string(bytes.size()) + " bytes)");
  n = 0;
  for (int i = 7; i >= 0; --i)
    n = (n << 8) | static_cast<unsigned char>(bytes[static_cast<std::size_t>(i)]);
  if (n > kMaxHeader || n > bytes.size() - 8)
    throw invalidSafetensors(name, "header length " + std::to_string(n) +
                                       " does not fit the file (truncated or foreign)");
  try {
    checkJsonNesting(bytes.substr(8, n), "the header");
  } catch (const Error& e) {
    throw invalidSafetensors(name, e.what());
  }
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(bytes.substr(8, n));
  } catch (const std::exception&) {
    throw invalidSafetensors(name, "the header is not JSON (corrupt or foreign)");
  }
  if (!header.is_object()) throw invalidSafetensors(name, "the header is not a JSON object");
  return header;
}

/// Copies the header's __metadata__ (`value`) into `metadata`; it must be an object of strings.
void readSafetensorsMetadata(const nlohmann::json& value, const std::string& name,
                             std::map<std::string, std::string>& metadata) {
  if (!value.is_object())
    throw invalidSafetensors(name, "__metadata__ must be an object of strings");
  for (auto m = value.begin(); m != value.end(); ++m) {
    if (!m.value().is_string())
      throw invalidSafetensors(name, "__metadata__ must be an object of strings");
    metadata[m.key()] = m.value().get<std::string>();
  }
}

/// Reads `shape` (of the tensor `where`) into `out` and returns its element count: whole
/// numbers, their product checked against the `fileSize`.
std::uint64_t readSafetensorsShape(const nlohmann::json& shape, const std::string& where,
                                   const std::string& name, std::size_t fileSize,
                                   std::vector<std::int64_t>& out) {
  std::uint64_t numel = 1;
  if (!shape.is_array()) throw invalidSafetensors(name, where + " has a malformed shape");
  bool empty = false;
  for (const auto& d : shape) {
    if (!d.is_number_unsigned() && !(d.is_number_integer() && d.get<std::int64_t>() >= 0))
      throw invalidSafetensors(name, where + " has a malformed shape");
    const std::uint64_t size = d.get<std::uint64_t>();
    // Checked: a shape such as [4, 2^62] must not wrap its element count around.
    if (size > std::uint64_t(std::numeric_limits<std::int64_t>::max()) ||
        (size > 0 && numel > fileSize / size))
      throw invalidSafetensors(name,
                               where + " has a shape " + shape.dump() + " larger than the file");
    if (size == 0) empty = true;
    out.push_back(static_cast<std::int64_t>(size));
    numel = empty ? 0 : numel * size;
  }
  return numel;
}

/// Reads the header's entry `key` (`v`): its dtype, its shape, and a byte range that lies in
/// the `dataSize` bytes of data and matches them.
SafetensorsEntry readSafetensorsEntry(const std::string& key, const nlohmann::json& v,
                                      const std::string& name, std::size_t fileSize,
                                      std::uint64_t dataSize) {
  const std::string where = "tensor \"" + key + "\"";
  if (!v.is_object() || !v.contains("dtype") || !v.contains("shape") ||
      !v.contains("data_offsets")) {
    throw invalidSafetensors(name, where + " lacks dtype, shape or data_offsets");
  }
  SafetensorsEntry e;
  e.name = key;
  e.dtype = v["dtype"].is_string() ? byName(v["dtype"].get<std::string>()) : nullptr;
  if (!e.dtype)
    throw invalidSafetensors(name, where + " has an unsupported dtype " + v["dtype"].dump());
  const std::uint64_t numel = readSafetensorsShape(v["shape"], where, name, fileSize, e.shape);
  const auto& off = v["data_offsets"];
  if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() ||
      !off[1].is_number_unsigned()) {
    throw invalidSafetensors(name, where + " has malformed data_offsets");
  }
  e.begin = off[0].get<std::uint64_t>();
  e.end = off[1].get<std::uint64_t>();
  if (e.end < e.begin || e.end > dataSize)
    throw invalidSafetensors(name, where + " lies outside the data (truncated file?)");
  if (e.end - e.begin != numel * e.dtype->bytes)
    throw invalidSafetensors(name, where + ": its byte range does not match its shape and dtype");
  return e;
}

/// Copies each entry's bytes from `base` into a tensor of `tensors`, in the order of their
/// data, refusing entries that overlap or leave bytes of the `dataSize` unclaimed.
void placeSafetensorsData(std::vector<SafetensorsEntry>& entries, const char* base,
                          std::uint64_t dataSize, const std::string& name, NamedTensors& tensors) {
  // By offset; an empty tensor shares its offset with the next one and goes before it.
  std::sort(entries.begin(), entries.end(),
            [](const SafetensorsEntry& a, const SafetensorsEntry& b) {
              return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
            });
  std::uint64_t expected = 0;
  for (const auto& e : entries) {
    if (e.begin != expected)
      throw invalidSafetensors(name, "tensor \"" + e.name + "\" overlaps another or leaves a gap");
    expected = e.end;
    auto t = torch::empty(e.shape, torch::TensorOptions().dtype(e.dtype->type));
    if (e.end > e.begin) std::memcpy(t.data_ptr(), base + e.begin, e.end - e.begin);
    tensors.emplace_back(e.name, std::move(t));
  }
  if (expected != dataSize)
    throw invalidSafetensors(
        name, "the data holds " + std::to_string(dataSize - expected) + " bytes no tensor claims");
}

}  // namespace

std::string encodeSafetensors(const NamedTensors& tensors,
                              const std::map<std::string, std::string>& metadata) {
  // nlohmann::json (sorted keys) for the header, like the reference writer; data in the
  // order given.
  nlohmann::json header = nlohmann::json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::vector<torch::Tensor> data;
  std::uint64_t offset = 0;
  for (const auto& [name, tensor] : tensors) {
    if (name.empty() || name == "__metadata__")
      throw Error("safetensors: invalid tensor name \"" + name + "\"");
    if (header.contains(name)) throw Error("safetensors: tensor \"" + name + "\" appears twice");
    const auto t = tensor.detach().to(torch::kCPU).contiguous();
    const DtypeInfo* d = byType(t.scalar_type());
    if (!d)
      throw Error("safetensors: tensor \"" + name + "\" has an unsupported type " +
                  std::string(c10::toString(t.scalar_type())));
    const std::uint64_t size = static_cast<std::uint64_t>(t.numel()) * d->bytes;
    header[name] = {
        {"dtype", d->name}, {"shape", t.sizes().vec()}, {"data_offsets", {offset, offset + size}}};
    offset += size;
    data.push_back(t);
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // align the data to 8 bytes
  std::string out;
  out.reserve(8 + text.size() + offset);
  const std::uint64_t n = text.size();
  for (int i = 0; i < 8; ++i)
    out += static_cast<char>((n >> (8 * i)) & 0xFF);
  out += text;
  for (const auto& t : data)
    out.append(static_cast<const char*>(t.data_ptr()), t.numel() * t.element_size());
  return out;
}

void writeSafetensors(const std::string& path, const NamedTensors& tensors,
                      const std::map<std::string, std::string>& metadata) {
  writeFileAtomically(path, encodeSafetensors(tensors, metadata));
}

SafetensorsFile decodeSafetensors(const std::string& bytes, const std::string& name) {
  std::uint64_t n = 0;
  const nlohmann::json header = readSafetensorsHeader(bytes, name, n);
  const std::uint64_t dataSize = bytes.size() - 8 - n;
  const char* base = bytes.data() + 8 + n;
  SafetensorsFile out;
  std::vector<SafetensorsEntry> entries;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") {
      readSafetensorsMetadata(it.value(), name, out.metadata);
      continue;
    }
    entries.push_back(readSafetensorsEntry(it.key(), it.value(), name, bytes.size(), dataSize));
  }
  placeSafetensorsData(entries, base, dataSize, name, out.tensors);
  return out;
}

SafetensorsFile readSafetensors(const std::string& path) {
  return decodeSafetensors(readTextFile(path), path);
}

}  // namespace netsmith::checkpoint
