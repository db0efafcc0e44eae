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
/// The most records an IDX file may announce: 20x EMNIST's 0.8 million. Every sample costs
/// index and split entries beyond its pixels, so 2^28 images of 1x1 (a 0.5 MB gzip) would
/// cost gigabytes of bookkeeping for 256 MiB of data.
constexpr std::int64_t kMaxIdxRecords = std::int64_t(1) << 24;

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
    const std::int64_t count = readImageFile(spec, imgWhere);
    readLabelFile(spec, lblWhere, count);
    chooseClasses(classes, count);
    indexUsableRecords(spec, policy, count);
  }

  std::int64_t size() const override { return m_size; }
  std::int64_t label(std::int64_t i) const override {
    return m_labels[8 + static_cast<std::size_t>(record(i))];
  }
  cv::Mat load(std::int64_t i) const override {
    const std::int64_t record = this->record(i);
    const unsigned char* p = m_pixels.data() + 16 + record * m_rows * m_cols;
    return cv::Mat(static_cast<int>(m_rows), static_cast<int>(m_cols), CV_8UC1,
                   const_cast<unsigned char*>(p))
        .clone();
  }
  std::string describe(std::int64_t i) const override {
    return m_imagesPath + " #" + std::to_string(record(i));
  }

 private:
  static constexpr std::size_t kMaxSkippedListed = 10000;

  /// Reads the images file into m_pixels and its image size into m_rows, m_cols: the header
  /// first, checked, then what it announces. Returns the count of images.
  std::int64_t readImageFile(const SourceSpec& spec, const std::string& imgWhere) {
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
    if (count > kMaxIdxRecords) {
      throw Error(imgWhere + ": the header announces " + std::to_string(count) +
                  " images; an IDX file may hold at most " + std::to_string(kMaxIdxRecords) +
                  " (split larger data into several files, or use an image folder)");
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
    return count;
  }

  /// Reads the labels file into m_labels: the header first, checked against the `count` of
  /// images, then the labels.
  void readLabelFile(const SourceSpec& spec, const std::string& lblWhere, std::int64_t count) {
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
    m_labels = std::move(labels);
  }

  /// Sets m_classes: the project's `classes`, else 0 .. the largest of the `count` labels.
  void chooseClasses(const std::vector<std::string>& classes, std::int64_t count) {
    const unsigned char* label = m_labels.data() + 8;
    std::int64_t maxLabel = 0;
    for (std::int64_t i = 0; i < count; ++i)
      maxLabel = std::max<std::int64_t>(maxLabel, label[i]);
    if (classes.empty()) {
      for (std::int64_t k = 0; k <= maxLabel; ++k)
        m_classes.push_back(std::to_string(k));
    } else {
      m_classes = classes;
    }
  }

  /// Skips (or, by `policy`, refuses) the records whose label is out of range, listing the
  /// usable ones in m_index once one is skipped; sets m_indexed and m_size.
  void indexUsableRecords(const SourceSpec& spec, ErrorPolicy policy, std::int64_t count) {
    const unsigned char* label = m_labels.data() + 8;
    // Records are their own index unless some are skipped: the file's bytes are all the memory
    // a source of 2^28 records takes (no 16 bytes of index and label a record).
    bool indexed = false;
    std::size_t skipped = 0;
    for (std::int64_t i = 0; i < count; ++i) {
      if (label[i] < numClasses()) {
        if (indexed) m_index.push_back(static_cast<std::uint32_t>(i));
        continue;
      }
      if (!indexed) {  // the first one skipped: from here on the usable records are listed
        indexed = true;
        m_index.reserve(static_cast<std::size_t>(count));
        for (std::int64_t k = 0; k < i; ++k)
          m_index.push_back(static_cast<std::uint32_t>(k));
      }
      const std::string item = spec.labels + " record " + std::to_string(i);
      const std::string reason = "label " + std::to_string(label[i]) + " is out of range for " +
                                 std::to_string(numClasses()) + " classes";
      if (policy == ErrorPolicy::Fail) throw Error(spec.path + ": " + item + ": " + reason);
      if (++skipped <= kMaxSkippedListed) m_skipped.push_back({item, reason});
    }
    if (skipped > kMaxSkippedListed) {
      m_skipped.push_back({spec.labels, "and " + std::to_string(skipped - kMaxSkippedListed) +
                                            " more records with labels out of range (" +
                                            std::to_string(skipped) + " in all)"});
    }
    m_index.shrink_to_fit();
    m_indexed = indexed;
    m_size = indexed ? static_cast<std::int64_t>(m_index.size()) : count;
  }

  std::int64_t record(std::int64_t i) const {
    if (i < 0 || i >= m_size) throw Error(m_imagesPath + ": no sample " + std::to_string(i));
    return m_indexed ? std::int64_t(m_index[static_cast<std::size_t>(i)]) : i;
  }

  std::string m_imagesPath;
  std::vector<unsigned char> m_pixels;  // the file: 16 bytes of header, then the images
  std::vector<unsigned char> m_labels;  // the file: 8 bytes of header, then a byte a label
  std::int64_t m_rows = 0, m_cols = 0;
  std::int64_t m_size = 0;
  bool m_indexed = false;              // some records skipped: m_index lists the usable ones
  std::vector<std::uint32_t> m_index;  // usable records, when some are skipped (else: all)
};

}  // namespace

std::shared_ptr<DatasetSource> openIdxSource(const SourceSpec& spec,
                                             const std::vector<std::string>& classes,
                                             ErrorPolicy policy) {
  return std::make_shared<IdxSource>(spec, classes, policy);
}

}  // namespace netsmith::data
