#include "data/dataset_source.h"
#include "data/source_formats.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <opencv2/core/utils/logger.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <optional>

namespace netsmith::data {

std::shared_ptr<DatasetSource> openSource(const SourceSpec& spec,
                                          const std::vector<std::string>& classes,
                                          ErrorPolicy policy) {
  return sourceFormat(spec.format).open(spec, classes, policy);
}

std::int64_t FileListSource::size() const {
  return static_cast<std::int64_t>(m_files.size());
}

std::int64_t FileListSource::label(std::int64_t i) const {
  return m_labels.at(static_cast<std::size_t>(i));
}

cv::Mat FileListSource::load(std::int64_t i) const {
  return decodeImageFile(m_files.at(static_cast<std::size_t>(i)));
}

cv::Mat FileListSource::loadRegion(std::int64_t i, const RegionChooser& choose) const {
  return decodeImageFile(m_files.at(static_cast<std::size_t>(i)), choose);
}

cv::Mat DatasetSource::loadMask(std::int64_t i) const {
  throw SampleError(describe(i) + ": this data source has no masks");
}

const float* DatasetSource::targetRow(std::int64_t) const {
  throw Error("this data source has no target table (its targets are class labels)");
}

cv::Mat DatasetSource::loadRegion(std::int64_t i, const RegionChooser& choose) const {
  const cv::Mat image = load(i);
  return image(chosenRegion(choose, image.size()));
}

std::string FileListSource::describe(std::int64_t i) const {
  return m_files.at(static_cast<std::size_t>(i));
}

bool isImageFileName(const std::string& name) {
  std::string ext = std::filesystem::path(name).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  static const char* kExts[] = {".png", ".jpg", ".jpeg", ".bmp", ".webp", ".tif", ".tiff"};
  return std::find(std::begin(kExts), std::end(kExts), ext) != std::end(kExts);
}

namespace {

/// For a PNG, whether its chunks run on to IEND inside the file. libpng reports a truncated
/// file on stderr itself ("libpng error: PNG input buffer is incomplete") before OpenCV can
/// fail quietly, so a cut file is caught here first. Not a PNG: true.
bool pngComplete(const std::vector<uchar>& b) {
  static const uchar kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  if (b.size() < 8 || !std::equal(kSignature, kSignature + 8, b.begin())) return true;
  std::size_t pos = 8;
  while (pos + 12 <= b.size()) {
    const std::size_t length = (std::size_t(b[pos]) << 24) | (std::size_t(b[pos + 1]) << 16) |
                               (std::size_t(b[pos + 2]) << 8) | std::size_t(b[pos + 3]);
    if (length > b.size() - pos - 12) return false;
    if (std::equal(b.begin() + long(pos) + 4, b.begin() + long(pos) + 8, "IEND")) return true;
    pos += 12 + length;
  }
  return false;
}

/// A PNG's width x height from its IHDR chunk (0 when not a PNG or too short to say).
std::uint64_t pngPixels(const std::vector<uchar>& b) {
  if (b.size() < 24 || !std::equal(b.begin() + 12, b.begin() + 16, "IHDR")) return 0;
  auto be32 = [&](std::size_t at) {
    return (std::uint64_t(b[at]) << 24) | (std::uint64_t(b[at + 1]) << 16) |
           (std::uint64_t(b[at + 2]) << 8) | std::uint64_t(b[at + 3]);
  };
  return be32(16) * be32(20);
}

}  // namespace

namespace {

/// The bytes of an image or mask file, after the checks every decode makes: a regular file, at
/// most 256 MiB, not empty, a PNG not announcing more than kMaxImagePixels or cut short.
std::vector<uchar> readImageBytes(const std::string& path) {
  // OpenCV's decoders print their own warnings ("PNG input buffer is incomplete") straight to
  // stderr, where they break progress bars; the SampleError below names the file and the reason.
  static std::once_flag quiet;
  std::call_once(quiet, [] {
    cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_ERROR);
    // OpenCV's own ceiling for any format (its default is 1 GP); an environment value set by
    // the user wins.
    ::setenv("OPENCV_IO_MAX_IMAGE_PIXELS", std::to_string(kMaxImagePixels).c_str(), 0);
  });
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))  // a FIFO would block the read
    throw SampleError(path + ": cannot open (not a regular file)");
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw SampleError(path + ": cannot open");
  // One read of the file's size (a byte-by-byte stream iterator was 2% of a JPEG sample).
  const auto size = static_cast<std::streamoff>(in.tellg());
  if (size < 0) throw SampleError(path + ": cannot read");
  constexpr std::streamoff kMaxImageFileBytes = std::streamoff(256) << 20;
  if (size > kMaxImageFileBytes) {
    throw SampleError(path + ": not read: " + std::to_string(size >> 20) +
                      " MiB is more than the 256 MiB one image file may have");
  }
  std::vector<uchar> bytes(static_cast<std::size_t>(size));
  in.seekg(0);
  if (size > 0 && !in.read(reinterpret_cast<char*>(bytes.data()), size))
    throw SampleError(path + ": cannot read (the file changed while it was read)");
  if (bytes.empty()) throw SampleError(path + ": empty file (0 bytes)");
  if (const auto pixels = pngPixels(bytes); pixels > kMaxImagePixels) {
    throw SampleError(path + ": not read: " + std::to_string(pixels / 1000000) +
                      " megapixels is more than the " + std::to_string(kMaxImagePixels / 1000000) +
                      " one image may have (a decompression bomb, or a scan to shrink first)");
  }
  if (!pngComplete(bytes))
    throw SampleError(path + ": not a readable image (a PNG cut short: its data ends early)");
  return bytes;
}

}  // namespace

cv::Mat decodeImageFile(const std::string& path, const RegionChooser& choose) {
  const std::vector<uchar> bytes = readImageBytes(path);
  if (looksLikeJpeg(bytes)) {
    // Straight to RGB, and only the region asked for; CMYK and YCCK files go to OpenCV.
    auto jpeg = decodeJpeg(bytes, path, kMaxImagePixels, choose);
    if (jpeg.handled) return jpeg.image;
  }
  cv::Mat img;
  try {
    img = cv::imdecode(bytes, cv::IMREAD_UNCHANGED | cv::IMREAD_ANYDEPTH);
  } catch (const cv::Exception&) {
    img.release();
  }
  if (img.empty()) throw SampleError(path + ": not a readable image (corrupt or unsupported)");
  if (img.depth() != CV_8U) {
    double scale = 1.0;
    if (img.depth() == CV_16U) scale = 1.0 / 257.0;
    if (img.depth() == CV_32F || img.depth() == CV_64F) scale = 255.0;
    img.convertTo(img, CV_8U, scale);
  }
  cv::Mat out;
  switch (img.channels()) {
    case 1:
      out = img;
      break;
    case 3:
      cv::cvtColor(img, out, cv::COLOR_BGR2RGB);
      break;
    case 4:
      cv::cvtColor(img, out, cv::COLOR_BGRA2RGB);
      break;
    case 2: {
      std::vector<cv::Mat> planes;
      cv::split(img, planes);
      out = planes[0];  // grey + alpha
      break;
    }
    default:
      throw SampleError(path + ": unsupported channel count " + std::to_string(img.channels()));
  }
  return choose ? out(chosenRegion(choose, out.size())) : out;
}

}  // namespace netsmith::data

namespace netsmith::data {

namespace {

std::uint32_t bigEndian32(const std::vector<uchar>& b, std::size_t at) {
  return (std::uint32_t(b[at]) << 24) | (std::uint32_t(b[at + 1]) << 16) |
         (std::uint32_t(b[at + 2]) << 8) | std::uint32_t(b[at + 3]);
}

/// A palette PNG's colours in index order (RGB), or none for any other file.
std::optional<std::vector<cv::Vec3b>> pngPalette(const std::vector<uchar>& b) {
  // IHDR's colour type (byte 25) is 3 for indexed colour.
  if (b.size() < 33 || !std::equal(b.begin() + 12, b.begin() + 16, "IHDR") || b[25] != 3)
    return std::nullopt;
  std::size_t pos = 8;
  while (pos + 12 <= b.size()) {
    const std::size_t length = bigEndian32(b, pos);
    if (length > b.size() - pos - 12) break;
    if (std::equal(b.begin() + long(pos) + 4, b.begin() + long(pos) + 8, "PLTE")) {
      std::vector<cv::Vec3b> colours;
      for (std::size_t k = 0; k + 3 <= length && colours.size() < 256; k += 3)
        colours.emplace_back(b[pos + 8 + k], b[pos + 9 + k], b[pos + 10 + k]);
      return colours;
    }
    pos += 12 + length;
  }
  return std::vector<cv::Vec3b>{};
}

}  // namespace

cv::Mat decodeMaskFile(const std::string& path) {
  const std::vector<uchar> bytes = readImageBytes(path);
  const auto palette = pngPalette(bytes);
  cv::Mat img;
  try {
    img = cv::imdecode(bytes,
                       palette ? cv::IMREAD_COLOR : (cv::IMREAD_UNCHANGED | cv::IMREAD_ANYDEPTH));
  } catch (const cv::Exception&) {
    img.release();
  }
  if (img.empty()) throw SampleError(path + ": not a readable mask (corrupt or unsupported)");
  if (palette) {
    if (palette->empty()) throw SampleError(path + ": a palette PNG without a palette (PLTE)");
    // OpenCV expands the indices to colours; each colour goes back to the first index that has
    // it (Pascal VOC's palette gives every index its own colour).
    std::map<std::uint32_t, uchar> indexOf;
    for (std::size_t k = palette->size(); k-- > 0;) {
      const auto& c = (*palette)[k];
      indexOf[(std::uint32_t(c[0]) << 16) | (std::uint32_t(c[1]) << 8) | c[2]] = uchar(k);
    }
    cv::Mat out(img.rows, img.cols, CV_8UC1);
    std::uint32_t lastKey = 0xFFFFFFFF;
    uchar lastIndex = 0;
    for (int r = 0; r < img.rows; ++r) {
      const auto* in = img.ptr<cv::Vec3b>(r);
      auto* o = out.ptr<uchar>(r);
      for (int x = 0; x < img.cols; ++x) {
        const std::uint32_t key =
            (std::uint32_t(in[x][2]) << 16) | (std::uint32_t(in[x][1]) << 8) | in[x][0];
        if (key != lastKey) {
          const auto it = indexOf.find(key);
          if (it == indexOf.end())
            throw SampleError(path + ": pixel (" + std::to_string(x) + ", " + std::to_string(r) +
                              ") has a colour that is not in the file's palette");
          lastKey = key;
          lastIndex = it->second;
        }
        o[x] = lastIndex;
      }
    }
    return out;
  }
  if (img.channels() == 2) {
    std::vector<cv::Mat> planes;
    cv::split(img, planes);
    img = planes[0];  // grey + alpha
  }
  if (img.channels() != 1)
    throw SampleError(path +
                      ": a mask must have one channel (the class index per pixel) or a "
                      "palette; this one has " +
                      std::to_string(img.channels()) + " colour channels");
  if (img.depth() == CV_16U) {
    double highest = 0;
    cv::minMaxLoc(img, nullptr, &highest);
    if (highest > 255)
      throw SampleError(path + ": a 16-bit mask with the value " + std::to_string(int(highest)) +
                        "; class indices go up to 254 (255: ignore)");
    img.convertTo(img, CV_8U);
  }
  if (img.depth() != CV_8U)
    throw SampleError(path + ": a mask must hold whole numbers (8- or 16-bit), not floats");
  return img;
}

}  // namespace netsmith::data
