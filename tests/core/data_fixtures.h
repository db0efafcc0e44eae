#pragma once

// Real files for data tests: IDX (raw and gzipped), image folders (PNG/JPEG), CSV manifests,
// CIFAR-10 batches, all written by the tests into a temporary folder.
#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

namespace netsmith::testutil {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    static int counter = 0;
    m_path = fs::temp_directory_path() /
             ("netsmith-data-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(m_path);
    fs::create_directories(m_path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(m_path, ec);
  }
  std::string file(const std::string& name) const { return (m_path / name).string(); }
  const fs::path& path() const { return m_path; }

 private:
  fs::path m_path;
};

inline void putBigEndian(std::string& out, std::uint32_t v) {
  out += char(v >> 24);
  out += char((v >> 16) & 0xFF);
  out += char((v >> 8) & 0xFF);
  out += char(v & 0xFF);
}

inline void writeBytes(const std::string& path, const std::string& bytes, bool gzip) {
  if (gzip) {
    gzFile f = gzopen(path.c_str(), "wb");
    gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
    gzclose(f);
  } else {
    std::ofstream(path, std::ios::binary)
        .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
}

/// Image i has every pixel = (i * 7 + label) % 256 at (0,0) and a gradient elsewhere; label i %
/// classes.
struct IdxData {
  std::vector<std::vector<unsigned char>> images;
  std::vector<unsigned char> labels;
};

inline IdxData makeIdxData(int count, int rows, int cols, int classes) {
  IdxData d;
  for (int i = 0; i < count; ++i) {
    std::vector<unsigned char> img(static_cast<std::size_t>(rows * cols));
    for (int p = 0; p < rows * cols; ++p)
      img[static_cast<std::size_t>(p)] = static_cast<unsigned char>((i * 7 + p * 3) % 256);
    d.images.push_back(img);
    d.labels.push_back(static_cast<unsigned char>(i % classes));
  }
  return d;
}

inline void writeIdx(const IdxData& d, int rows, int cols, const std::string& imagesPath,
                     const std::string& labelsPath, bool gzip, std::uint32_t imageMagic = 0x803,
                     int labelCount = -1, std::size_t truncateImages = 0) {
  std::string img;
  putBigEndian(img, imageMagic);
  putBigEndian(img, static_cast<std::uint32_t>(d.images.size()));
  putBigEndian(img, static_cast<std::uint32_t>(rows));
  putBigEndian(img, static_cast<std::uint32_t>(cols));
  for (const auto& im : d.images)
    img.append(reinterpret_cast<const char*>(im.data()), im.size());
  if (truncateImages) img.resize(img.size() - truncateImages);
  std::string lbl;
  putBigEndian(lbl, 0x801);
  const int n = labelCount < 0 ? static_cast<int>(d.labels.size()) : labelCount;
  putBigEndian(lbl, static_cast<std::uint32_t>(n));
  for (int i = 0; i < n; ++i)
    lbl += char(d.labels[static_cast<std::size_t>(i) % d.labels.size()]);
  writeBytes(imagesPath, img, gzip);
  writeBytes(labelsPath, lbl, gzip);
}

/// A colour image whose pixels encode (seed, x, y): distinct, non-uniform content.
inline cv::Mat patternImage(int h, int w, int channels, int seed) {
  cv::Mat m(h, w, channels == 1 ? CV_8UC1 : CV_8UC3);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      for (int c = 0; c < channels; ++c) {
        m.ptr<unsigned char>(y)[x * channels + c] =
            static_cast<unsigned char>((seed * 31 + x * 5 + y * 11 + c * 60) % 256);
      }
    }
  }
  return m;
}

/// root/<class>/img_<i>.<ext> with `perClass` images each.
inline void writeImageFolder(const fs::path& root, const std::vector<std::string>& classes,
                             int perClass, int h, int w, int channels,
                             const std::string& ext = ".png") {
  int seed = 0;
  for (const auto& c : classes) {
    fs::create_directories(root / c);
    for (int i = 0; i < perClass; ++i) {
      cv::imwrite((root / c / ("img_" + std::to_string(i) + ext)).string(),
                  patternImage(h, w, channels, seed++));
    }
  }
}

/// CIFAR-10 records: label i % 10, R plane = i, G plane = 2i, B plane = 3i (mod 256).
inline void writeCifar(const std::string& path, int records, int badLabelAt = -1) {
  std::string bytes;
  for (int i = 0; i < records; ++i) {
    bytes += char(i == badLabelAt ? 42 : i % 10);
    bytes += std::string(1024, char(i % 256));
    bytes += std::string(1024, char((2 * i) % 256));
    bytes += std::string(1024, char((3 * i) % 256));
  }
  writeBytes(path, bytes, false);
}

/// A small classifier project (Flatten + Linear on 8x8 grey images, `classes` outputs) with the
/// given `data` section, written to DIR/p.netsmith.json.
inline std::string writeClassifierProject(const TempDir& dir, const std::string& data,
                                          int classes) {
  const std::string path = dir.file("p.netsmith.json");
  std::ofstream(path) << R"({"format": "netsmith-project", "version": 1, "name": "small",
    "model": {"input": {"channels": 1, "height": 8, "width": 8}, "nodes": [
      {"id": "input", "op": "Input"}, {"id": "flat", "op": "Flatten", "inputs": ["input"]},
      {"id": "fc", "op": "Linear", "params": {"out_features": )"
                      << classes << R"(}, "inputs": ["flat"]}]},
    "data": )" << data << R"(, "augment": [],
    "train": {"epochs": 1, "batch_size": 50, "threads": 1, "workers": 1,
              "optimizer": {"type": "sgd", "lr": 0.05}}})";
  return path;
}

}  // namespace netsmith::testutil
