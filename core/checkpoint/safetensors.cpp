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
  auto fail = [&](const std::string& why) -> Error {
    return Error(name + ": not a valid safetensors file: " + why);
  };
  if (bytes.size() < 8) throw fail("too short (" + std::to_string(bytes.size()) + " bytes)");
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i)
    n = (n << 8) | static_cast<unsigned char>(bytes[static_cast<std::size_t>(i)]);
  if (n > kMaxHeader || n > bytes.size() - 8)
    throw fail("header length " + std::to_string(n) +
               " does not fit the file (truncated or foreign)");
  try {
    checkJsonNesting(bytes.substr(8, n), "the header");
  } catch (const Error& e) {
    throw fail(e.what());
  }
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(bytes.substr(8, n));
  } catch (const std::exception&) {
    throw fail("the header is not JSON (corrupt or foreign)");
  }
  if (!header.is_object()) throw fail("the header is not a JSON object");
  const std::uint64_t dataSize = bytes.size() - 8 - n;
  const char* base = bytes.data() + 8 + n;
  SafetensorsFile out;
  struct Entry {
    std::string name;
    const DtypeInfo* dtype;
    std::vector<std::int64_t> shape;
    std::uint64_t begin, end;
  };
  std::vector<Entry> entries;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") {
      if (!it.value().is_object()) throw fail("__metadata__ must be an object of strings");
      for (auto m = it.value().begin(); m != it.value().end(); ++m) {
        if (!m.value().is_string()) throw fail("__metadata__ must be an object of strings");
        out.metadata[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    const auto& v = it.value();
    const std::string where = "tensor \"" + it.key() + "\"";
    if (!v.is_object() || !v.contains("dtype") || !v.contains("shape") ||
        !v.contains("data_offsets")) {
      throw fail(where + " lacks dtype, shape or data_offsets");
    }
    Entry e;
    e.name = it.key();
    e.dtype = v["dtype"].is_string() ? byName(v["dtype"].get<std::string>()) : nullptr;
    if (!e.dtype) throw fail(where + " has an unsupported dtype " + v["dtype"].dump());
    std::uint64_t numel = 1;
    if (!v["shape"].is_array()) throw fail(where + " has a malformed shape");
    bool empty = false;
    for (const auto& d : v["shape"]) {
      if (!d.is_number_unsigned() && !(d.is_number_integer() && d.get<std::int64_t>() >= 0))
        throw fail(where + " has a malformed shape");
      const std::uint64_t size = d.get<std::uint64_t>();
      // Checked: a shape such as [4, 2^62] must not wrap its element count around.
      if (size > std::uint64_t(std::numeric_limits<std::int64_t>::max()) ||
          (size > 0 && numel > bytes.size() / size))
        throw fail(where + " has a shape " + v["shape"].dump() + " larger than the file");
      if (size == 0) empty = true;
      e.shape.push_back(static_cast<std::int64_t>(size));
      numel = empty ? 0 : numel * size;
    }
    const auto& off = v["data_offsets"];
    if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() ||
        !off[1].is_number_unsigned()) {
      throw fail(where + " has malformed data_offsets");
    }
    e.begin = off[0].get<std::uint64_t>();
    e.end = off[1].get<std::uint64_t>();
    if (e.end < e.begin || e.end > dataSize)
      throw fail(where + " lies outside the data (truncated file?)");
    if (e.end - e.begin != numel * e.dtype->bytes)
      throw fail(where + ": its byte range does not match its shape and dtype");
    entries.push_back(std::move(e));
  }
  // By offset; an empty tensor shares its offset with the next one and goes before it.
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  std::uint64_t expected = 0;
  for (const auto& e : entries) {
    if (e.begin != expected)
      throw fail("tensor \"" + e.name + "\" overlaps another or leaves a gap");
    expected = e.end;
    auto t = torch::empty(e.shape, torch::TensorOptions().dtype(e.dtype->type));
    if (e.end > e.begin) std::memcpy(t.data_ptr(), base + e.begin, e.end - e.begin);
    out.tensors.emplace_back(e.name, std::move(t));
  }
  if (expected != dataSize)
    throw fail("the data holds " + std::to_string(dataSize - expected) + " bytes no tensor claims");
  return out;
}

SafetensorsFile readSafetensors(const std::string& path) {
  return decodeSafetensors(readTextFile(path), path);
}

}  // namespace netsmith::checkpoint
