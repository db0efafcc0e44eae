// IDX files (MNIST, Fashion-MNIST, KMNIST, EMNIST layout), gzipped or raw.
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "common/file_util.h"
#include "data/dataset_source.h"

namespace netsmith::data {

namespace {

constexpr std::uint32_t kImageMagic = 0x00000803;  // unsigned bytes, 3 dimensions
constexpr std::uint32_t kLabelMagic = 0x00000801;  // unsigned bytes, 1 dimension

/// The most pixel bytes an IDX images file may announce (the whole of EMNIST is ~0.6 GB).
constexpr std::uint64_t kMaxIdxBytes = std::uint64_t(16) << 30;

// Reads at most `limit` bytes of a file, inflating it when gzipped (zlib reads plain files
// unchanged): a header first, then exactly what the header announced, so a file that
// decompresses without end (or /dev/zero) costs no more than its header claims.
std::vector<unsigned char> readMaybeGzip(const std::string& path, const std::string& where,
                                         std::uint64_t limit) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw Error(where + ": file not found: " + path);
  try {
    requireRegularFile(path);
  } catch (const Error& e) {
    throw Error(where + ": " + e.what());
  }
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw Error(where + ": cannot open " + path);
  std::vector<unsigned char> out;
  unsigned char buf[1 << 16];
  while (out.size() < limit) {
    const auto want =
        static_cast<unsigned>(std::min<std::uint64_t>(sizeof buf, limit - out.size()));
    const int n = gzread(f, buf, want);
    if (n < 0) {
      int err = 0;
      const std::string msg = gzerror(f, &err);
      gzclose(f);
      throw Error(where + ": " + path + ": corrupt or truncated gzip data (" + msg + ")");
    }
    if (n == 0) break;
    out.insert(out.end(), buf, buf + n);
  }
  gzclose(f);
  return out;
}

std::uint32_t bigEndian(const unsigned char* p) {
  return (std::uint32_t(p[0]) << 24) | (std::uint32_t(p[1]) << 16) | (std::uint32_t(p[2]) << 8) |
         std::uint32_t(p[3]);
}

std::string hex(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08X", v);
  return buf;
}

class IdxSource : public DatasetSource {
 public:
  IdxSource(const SourceSpec& spec, const std::vector<std::string>& classes, ErrorPolicy policy)
      : m_imagesPath(spec.images) {
    const std::string imgWhere = spec.path + ".images: " + spec.images;
    const std::string lblWhere = spec.path + ".labels: " + spec.labels;
    m_pixels = readMaybeGzip(spec.images, spec.path + ".images", 16);
    if (m_pixels.size() < 16)
      throw Error(imgWhere + ": too short for an IDX image file (" +
                  std::to_string(m_pixels.size()) + " bytes)");
    if (bigEndian(m_pixels.data()) != kImageMagic) {
      throw Error(imgWhere + ": not an IDX image file (magic number " +
                  hex(bigEndian(m_pixels.data())) + ", expected " + hex(kImageMagic) + ")" +
                  (bigEndian(m_pixels.data()) == kLabelMagic
                       ? "; this looks like a labels file: swap images and labels"
                       : ""));
    }
    const std::int64_t count = bigEndian(m_pixels.data() + 4);
    m_rows = bigEndian(m_pixels.data() + 8);
    m_cols = bigEndian(m_pixels.data() + 12);
    if (m_rows <= 0 || m_cols <= 0 || m_rows > 65535 || m_cols > 65535) {
      throw Error(imgWhere + ": implausible image size " + std::to_string(m_rows) + "x" +
                  std::to_string(m_cols));
    }
    // count < 2^32 and rows, cols < 2^16: the product fits in 64 bits unsigned.
    const std::uint64_t announced =
        std::uint64_t(count) * std::uint64_t(m_rows) * std::uint64_t(m_cols);
    if (announced > kMaxIdxBytes) {
      throw Error(imgWhere + ": the header announces " + std::to_string(count) + " images of " +
                  std::to_string(m_rows) + "x" + std::to_string(m_cols) + " (" +
                  std::to_string(announced >> 20) + " MiB), more than the " +
                  std::to_string(kMaxIdxBytes >> 30) + " GiB an IDX file may hold");
    }
    const auto need = static_cast<std::int64_t>(announced);
    m_pixels = readMaybeGzip(spec.images, spec.path + ".images", 16 + announced);
    const std::int64_t have = static_cast<std::int64_t>(m_pixels.size()) - 16;
    if (have < need) {
      throw Error(imgWhere + ": truncated: the header announces " + std::to_string(count) +
                  " images of " + std::to_string(m_rows) + "x" + std::to_string(m_cols) + " (" +
                  std::to_string(need) + " bytes) but only " + std::to_string(have) +
                  " bytes follow");
    }
    auto labels = readMaybeGzip(spec.labels, spec.path + ".labels", 8);
    if (labels.size() < 8) throw Error(lblWhere + ": too short for an IDX label file");
    if (bigEndian(labels.data()) != kLabelMagic) {
      throw Error(lblWhere + ": not an IDX label file (magic number " +
                  hex(bigEndian(labels.data())) + ", expected " + hex(kLabelMagic) + ")");
    }
    const std::int64_t labelCount = bigEndian(labels.data() + 4);
    if (labelCount != count) {
      throw Error(spec.path + ": the images file has " + std::to_string(count) +
                  " images but the labels file has " + std::to_string(labelCount) + " labels");
    }
    labels = readMaybeGzip(spec.labels, spec.path + ".labels", 8 + std::uint64_t(count));
    if (static_cast<std::int64_t>(labels.size()) - 8 < labelCount) {
      throw Error(lblWhere + ": truncated: the header announces " + std::to_string(labelCount) +
                  " labels but only " + std::to_string(labels.size() - 8) + " bytes follow");
    }
    std::int64_t maxLabel = 0;
    for (std::int64_t i = 0; i < count; ++i)
      maxLabel = std::max<std::int64_t>(maxLabel, labels[8 + i]);
    if (classes.empty()) {
      for (std::int64_t k = 0; k <= maxLabel; ++k)
        m_classes.push_back(std::to_string(k));
    } else {
      m_classes = classes;
    }
    for (std::int64_t i = 0; i < count; ++i) {
      const std::int64_t label = labels[8 + i];
      if (label >= numClasses()) {
        const std::string item = spec.labels + " record " + std::to_string(i);
        const std::string reason = "label " + std::to_string(label) + " is out of range for " +
                                   std::to_string(numClasses()) + " classes";
        if (policy == ErrorPolicy::Fail) throw Error(spec.path + ": " + item + ": " + reason);
        m_skipped.push_back({item, reason});
        continue;
      }
      m_index.push_back(i);
      m_labels.push_back(label);
    }
  }

  std::int64_t size() const override { return static_cast<std::int64_t>(m_index.size()); }
  std::int64_t label(std::int64_t i) const override {
    return m_labels.at(static_cast<std::size_t>(i));
  }
  cv::Mat load(std::int64_t i) const override {
    const std::int64_t record = m_index.at(static_cast<std::size_t>(i));
    const unsigned char* p = m_pixels.data() + 16 + record * m_rows * m_cols;
    return cv::Mat(static_cast<int>(m_rows), static_cast<int>(m_cols), CV_8UC1,
                   const_cast<unsigned char*>(p))
        .clone();
  }
  std::string describe(std::int64_t i) const override {
    return m_imagesPath + " #" + std::to_string(m_index.at(static_cast<std::size_t>(i)));
  }

 private:
  std::string m_imagesPath;
  std::vector<unsigned char> m_pixels;
  std::int64_t m_rows = 0, m_cols = 0;
  std::vector<std::int64_t> m_index;  // usable records
  std::vector<std::int64_t> m_labels;
};

}  // namespace

std::shared_ptr<DatasetSource> openIdxSource(const SourceSpec& spec,
                                             const std::vector<std::string>& classes,
                                             ErrorPolicy policy) {
  return std::make_shared<IdxSource>(spec, classes, policy);
}

}  // namespace netsmith::data
