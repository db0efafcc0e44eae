// CIFAR-10 binary batches: records of 1 label byte + 3072 bytes (1024 R, 1024 G, 1024 B; 32x32).
#include <filesystem>

#include "common/file_util.h"
#include "data/dataset_source.h"

namespace netsmith::data {

namespace {

constexpr std::size_t kRecord = 1 + 3 * 32 * 32;
const std::vector<std::string> kCifar10Classes = {
    "airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"};

class CifarSource : public DatasetSource {
 public:
  CifarSource(const SourceSpec& spec, const std::vector<std::string>& classes, ErrorPolicy policy) {
    m_classes = classes.empty() ? kCifar10Classes : classes;
    for (const auto& file : spec.files) {
      const std::string where = spec.path + ".files: " + file;
      std::error_code ec;
      if (!std::filesystem::exists(file, ec)) throw Error(where + ": file not found");
      std::string bytes = readTextFile(file);
      if (bytes.empty() || bytes.size() % kRecord != 0) {
        throw Error(where + ": not a CIFAR-10 binary batch: " + std::to_string(bytes.size()) +
                    " bytes is not a whole number of 3073-byte records (truncated?)");
      }
      const std::size_t base = m_data.size();
      m_data += bytes;
      for (std::size_t r = 0; r < bytes.size() / kRecord; ++r) {
        const auto label = static_cast<unsigned char>(bytes[r * kRecord]);
        if (label >= m_classes.size()) {
          const std::string item = file + " record " + std::to_string(r);
          const std::string reason = "label " + std::to_string(label) + " is out of range for " +
                                     std::to_string(m_classes.size()) + " classes";
          if (policy == ErrorPolicy::Fail) throw Error(spec.path + ": " + item + ": " + reason);
          m_skipped.push_back({item, reason});
          continue;
        }
        m_offsets.push_back(base + r * kRecord);
        m_labels.push_back(label);
        m_names.push_back(file + " #" + std::to_string(r));
      }
    }
  }

  std::int64_t size() const override { return static_cast<std::int64_t>(m_offsets.size()); }
  std::int64_t label(std::int64_t i) const override {
    return m_labels.at(static_cast<std::size_t>(i));
  }
  cv::Mat load(std::int64_t i) const override {
    const unsigned char* rec = reinterpret_cast<const unsigned char*>(m_data.data()) +
                               m_offsets.at(static_cast<std::size_t>(i));
    cv::Mat img(32, 32, CV_8UC3);
    for (int p = 0; p < 1024; ++p) {
      auto* px = img.ptr<unsigned char>() + p * 3;
      px[0] = rec[1 + p];
      px[1] = rec[1 + 1024 + p];
      px[2] = rec[1 + 2048 + p];
    }
    return img;
  }
  std::string describe(std::int64_t i) const override {
    return m_names.at(static_cast<std::size_t>(i));
  }

 private:
  std::string m_data;
  std::vector<std::size_t> m_offsets;
  std::vector<std::int64_t> m_labels;
  std::vector<std::string> m_names;
};

}  // namespace

std::shared_ptr<DatasetSource> openCifarSource(const SourceSpec& spec,
                                               const std::vector<std::string>& classes,
                                               ErrorPolicy policy) {
  return std::make_shared<CifarSource>(spec, classes, policy);
}

}  // namespace netsmith::data
