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

#include <zlib.h>

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

void DatasetSource::targetRow(std::int64_t, float*) const {
  throw Error("this data source has no target table (its targets are class labels)");
}

std::vector<float> DatasetSource::targetValues(std::int64_t i) const {
  std::vector<float> row(static_cast<std::size_t>(std::max<std::int64_t>(0, targetWidth())));
  targetRow(i, row.data());
  return row;
}

LabelList DatasetSource::positiveLabels(std::int64_t) const {
  return {};
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

void settleScanProblems(const std::vector<SkippedItem>& problems, const SourceSpec& spec,
                        ErrorPolicy policy, std::vector<SkippedItem>& skipped) {
  if (!problems.empty() && policy == ErrorPolicy::Fail) {
    throw Error(spec.path + ": " + problems.front().item + ": " + problems.front().reason +
                (problems.size() > 1
                     ? " (and " + std::to_string(problems.size() - 1) + " more such files)"
                     : std::string()) +
                " (data.on_error is \"fail\"; set it to \"skip\" to leave such files out)");
  }
  skipped.insert(skipped.end(), problems.begin(), problems.end());
}

bool hasExtension(const std::string& name, const std::string& extension) {
  std::string ext = std::filesystem::path(name).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == extension;
}

std::map<std::string, std::string> filesByStem(const std::string& dir, const std::string& where,
                                               bool (*accept)(const std::string&),
                                               const std::string& kind,
                                               std::vector<SkippedItem>& skipped,
                                               std::vector<SkippedItem>& clashes) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(dir, ec)) throw Error(where + ": folder not found");
  if (!fs::is_directory(dir, ec)) throw Error(where + ": not a folder");
  std::vector<fs::path> entries;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    std::error_code sec;
    if (!accept(name)) {
      if (entry.is_regular_file(sec))
        skipped.push_back({entry.path().string(), "not " + kind + " (extension)"});
      continue;
    }
    // A FIFO, a folder or a broken link under a file's name is kept: reading it fails by name
    // (skipped or fatal as on_error says), where leaving it out would make, say, a YOLO
    // image without its label file a silent negative.
    entries.push_back(entry.path());
  }
  if (ec) throw Error(where + ": cannot list (" + ec.message() + ")");
  std::sort(entries.begin(), entries.end());
  std::map<std::string, std::string> out;
  for (const auto& p : entries) {
    const auto [it, fresh] = out.emplace(p.stem().string(), p.string());
    if (!fresh)
      clashes.push_back({p.string(), "has the same stem as " + it->second + "; rename one"});
  }
  return out;
}

StemPairs pairByStem(const SourceSpec& spec, const std::string& otherKey,
                     const std::string& otherDir, bool (*accept)(const std::string&),
                     const std::string& kind, std::vector<SkippedItem>& skipped,
                     std::vector<SkippedItem>& problems, const std::string& notASample) {
  const auto images = filesByStem(spec.images, spec.path + ".images: " + spec.images,
                                  isImageFileName, "an image file", skipped, problems);
  const auto others = filesByStem(otherDir, spec.path + "." + otherKey + ": " + otherDir, accept,
                                  kind, skipped, problems);
  StemPairs out;
  for (const auto& [stem, image] : images) {
    const auto o = others.find(stem);
    out.pairs.push_back({stem, image, o == others.end() ? std::string() : o->second});
  }
  for (const auto& [stem, file] : others)
    if (!images.count(stem) && !(stem == notASample && !notASample.empty()))
      out.orphans.push_back({file, "no image named " + stem + " in " + spec.images});
  return out;
}

std::vector<target::Box> DatasetSource::loadBoxes(std::int64_t i, int, int) const {
  throw SampleError(describe(i) + ": this data source has no boxes");
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
  checkImageBytes(bytes, path);
  return bytes;
}

}  // namespace

void checkImageBytes(const std::vector<unsigned char>& bytes, const std::string& path) {
  if (bytes.empty()) throw SampleError(path + ": empty file (0 bytes)");
  // Only the formats an image folder takes reach OpenCV's decoders: imdecode would otherwise
  // try every codec it was built with on a file someone sent (DICOM, whose reader aborts the
  // process on a bad file; GDAL's formats, which it writes to a temporary file first).
  const auto starts = [&](const char* magic, std::size_t n, std::size_t at = 0) {
    return bytes.size() >= at + n &&
           std::equal(magic, magic + n, reinterpret_cast<const char*>(bytes.data()) + at);
  };
  const bool known = starts("\x89PNG\r\n\x1a\n", 8) || starts("\xff\xd8\xff", 3) ||
                     starts("BM", 2) || (starts("RIFF", 4) && starts("WEBP", 4, 8)) ||
                     starts("II*\0", 4) || starts("MM\0*", 4);
  if (!known)
    throw SampleError(path +
                      ": not a readable image (by its first bytes not a PNG, JPEG, BMP, "
                      "WebP or TIFF file)");
  if (const auto pixels = pngPixels(bytes); pixels > kMaxImagePixels) {
    throw SampleError(path + ": not read: " + std::to_string(pixels / 1000000) +
                      " megapixels is more than the " + std::to_string(kMaxImagePixels / 1000000) +
                      " one image may have (a decompression bomb, or a scan to shrink first)");
  }
  if (!pngComplete(bytes))
    throw SampleError(path + ": not a readable image (a PNG cut short: its data ends early)");
}

namespace {

/// decodeImageFile() past the read: its bytes to an RGB or grey picture.
cv::Mat decodeImageBytes(const std::vector<uchar>& bytes, const std::string& path,
                         const RegionChooser& choose) {
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
  if (img.empty()) {
    // OpenCV says nothing more; a large picture may simply not have fitted in memory.
    const auto pixels = pngPixels(bytes);
    throw SampleError(path + ": not a readable image (corrupt or unsupported" +
                      (pixels >= 10'000'000 ? ", or its " + std::to_string(pixels / 1000000) +
                                                  " megapixels did not fit in the memory left"
                                            : std::string()) +
                      ")");
  }
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

}  // namespace

cv::Mat decodeImageFile(const std::string& path, const RegionChooser& choose) {
  const std::vector<uchar> bytes = readImageBytes(path);
  // Memory can run out anywhere in a decode of a large picture (the decoder, the colour
  // conversion): that picture is then a sample that could not be read, named like any other,
  // so a caller that skips bad samples skips it rather than ending.
  const auto noMemory = [&] {
    const auto pixels = pngPixels(bytes);
    return SampleError(
        path + ": not read: " +
        (pixels > 0 ? "its " + std::to_string(std::max<std::uint64_t>(1, pixels / 1000000)) +
                          " megapixels did not fit in the memory left"
                    : std::string("it did not fit in the memory left")));
  };
  try {
    return decodeImageBytes(bytes, path, choose);
  } catch (const std::bad_alloc&) {
    throw noMemory();
  } catch (const cv::Exception& e) {
    if (e.code == cv::Error::StsNoMem) throw noMemory();
    throw SampleError(path + ": not a readable image (" + e.err + ")");
  }
}

}  // namespace netsmith::data

namespace netsmith::data {

namespace {

std::uint32_t bigEndian32(const std::vector<uchar>& b, std::size_t at) {
  return (std::uint32_t(b[at]) << 24) | (std::uint32_t(b[at + 1]) << 16) |
         (std::uint32_t(b[at + 2]) << 8) | std::uint32_t(b[at + 3]);
}

/// A PNG's header fields a mask reader needs (IHDR), when the bytes are a PNG.
struct PngHeader {
  std::uint32_t width = 0, height = 0;
  int bitDepth = 0, colourType = -1, interlace = 0;
};
std::optional<PngHeader> pngHeader(const std::vector<uchar>& b) {
  if (b.size() < 33 || !std::equal(b.begin() + 12, b.begin() + 16, "IHDR")) return std::nullopt;
  return PngHeader{bigEndian32(b, 16), bigEndian32(b, 20), b[24], b[25], b[28]};
}

int paeth(int a, int b, int c) {
  const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  return pa <= pb && pa <= pc ? a : (pb <= pc ? b : c);
}

/// A palette PNG's pixels as their palette indices (OpenCV's decoder gives colours only, and a
/// colour can stand for several indices): the IDAT stream inflated, unfiltered and unpacked
/// here. Every index must have a palette entry. Throws SampleError naming the file.
cv::Mat paletteIndices(const std::vector<uchar>& b, const PngHeader& h, const std::string& path) {
  if (h.interlace != 0)
    throw SampleError(path + ": an interlaced palette mask; save it without interlacing");
  if (h.bitDepth != 1 && h.bitDepth != 2 && h.bitDepth != 4 && h.bitDepth != 8)
    throw SampleError(path + ": a palette PNG of bit depth " + std::to_string(h.bitDepth));
  if (h.width == 0 || h.height == 0) throw SampleError(path + ": a PNG of no pixels");
  std::string idat;
  std::size_t entries = 0, pos = 8;
  while (pos + 12 <= b.size()) {
    const std::size_t length = bigEndian32(b, pos);
    if (length > b.size() - pos - 12) break;
    const auto type = b.begin() + long(pos) + 4;
    if (std::equal(type, type + 4, "PLTE")) entries = std::min<std::size_t>(256, length / 3);
    if (std::equal(type, type + 4, "IDAT"))
      idat.append(reinterpret_cast<const char*>(b.data() + pos + 8), length);
    if (std::equal(type, type + 4, "IEND")) break;
    pos += 12 + length;
  }
  if (entries == 0) throw SampleError(path + ": a palette PNG without a palette (PLTE)");
  const std::size_t rowBytes = (std::size_t(h.width) * std::size_t(h.bitDepth) + 7) / 8;
  // Deflate packs at most 1032 bytes into one: a header announcing more than its data can hold
  // is refused before anything that size is allocated.
  if ((rowBytes + 1) * h.height > idat.size() * 1032 + 1024)
    throw SampleError(path + ": not a readable mask (its image data is cut short)");
  std::vector<uchar> raw((rowBytes + 1) * h.height);
  z_stream z{};
  if (inflateInit(&z) != Z_OK) throw SampleError(path + ": cannot start inflating");
  z.next_in = reinterpret_cast<Bytef*>(idat.data());
  z.avail_in = uInt(idat.size());
  z.next_out = raw.data();
  z.avail_out = uInt(raw.size());
  const int status = inflate(&z, Z_FINISH);
  const bool whole =
      z.avail_out == 0 && (status == Z_STREAM_END || status == Z_OK || status == Z_BUF_ERROR);
  inflateEnd(&z);
  if (!whole) throw SampleError(path + ": not a readable mask (its image data is cut short)");
  cv::Mat out(int(h.height), int(h.width), CV_8UC1);
  std::vector<uchar> prior(rowBytes, 0);
  for (std::uint32_t y = 0; y < h.height; ++y) {
    uchar* line = raw.data() + std::size_t(y) * (rowBytes + 1);
    const int filter = line[0];
    uchar* x = line + 1;
    for (std::size_t i = 0; i < rowBytes; ++i) {
      const int a = i > 0 ? x[i - 1] : 0, up = prior[i], c = i > 0 ? prior[i - 1] : 0;
      switch (filter) {
        case 0:
          break;
        case 1:
          x[i] = uchar(x[i] + a);
          break;
        case 2:
          x[i] = uchar(x[i] + up);
          break;
        case 3:
          x[i] = uchar(x[i] + (a + up) / 2);
          break;
        case 4:
          x[i] = uchar(x[i] + paeth(a, up, c));
          break;
        default:
          throw SampleError(path + ": not a readable mask (row " + std::to_string(y) +
                            " has the unknown filter " + std::to_string(filter) + ")");
      }
    }
    std::copy(x, x + rowBytes, prior.begin());
    uchar* o = out.ptr<uchar>(int(y));
    const int perByte = 8 / h.bitDepth, mask = (1 << h.bitDepth) - 1;
    for (std::uint32_t px = 0; px < h.width; ++px) {
      const int byte = x[px / std::uint32_t(perByte)];
      const int shift = 8 - h.bitDepth * (1 + int(px % std::uint32_t(perByte)));
      o[px] = uchar((byte >> shift) & mask);
      if (o[px] >= entries)
        throw SampleError(path + ": pixel (" + std::to_string(px) + ", " + std::to_string(y) +
                          ") has the palette index " + std::to_string(int(o[px])) +
                          " but the palette has " + std::to_string(entries) + " colours");
    }
  }
  return out;
}

}  // namespace

cv::Mat decodeMaskFile(const std::string& path) {
  return decodeMaskBytes(readImageBytes(path), path);
}

cv::Mat decodeMaskBytes(const std::vector<unsigned char>& bytes, const std::string& path) {
  checkImageBytes(bytes, path);
  if (bytes.size() < 8 || bytes[0] != 0x89 || bytes[1] != 'P')
    throw SampleError(path + ": a mask must be a PNG file");
  const auto header = pngHeader(bytes);
  if (header && header->colourType == 3) return paletteIndices(bytes, *header, path);
  cv::Mat img;
  try {
    // Grey + alpha (PNG colour type 4): the grey plane (OpenCV would expand it to 4 channels).
    img = cv::imdecode(bytes, header && header->colourType == 4
                                  ? (cv::IMREAD_GRAYSCALE | cv::IMREAD_ANYDEPTH)
                                  : (cv::IMREAD_UNCHANGED | cv::IMREAD_ANYDEPTH));
  } catch (const cv::Exception&) {
    img.release();
  }
  if (img.empty()) throw SampleError(path + ": not a readable mask (corrupt or unsupported)");
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
  // OpenCV stretches 1-, 2- and 4-bit grey to 0..255; a mask's values are the file's own.
  if (header && header->colourType == 0 && header->bitDepth < 8)
    img /= 255 / ((1 << header->bitDepth) - 1);
  return img;
}

/// The size of sample i's image, read from its header where the format allows (a one-pixel
/// region: JPEGs are not decoded).
static cv::Size imageSizeOf(const DatasetSource& source, std::int64_t i) {
  cv::Size size;
  (void)source.loadRegion(i, [&size](cv::Size s) {
    size = s;
    return cv::Rect(0, 0, std::min(1, s.width), std::min(1, s.height));
  });
  return size;
}

std::vector<target::Box> readBoxes(const DatasetSource& source, std::int64_t i) {
  const cv::Size size = imageSizeOf(source, i);
  return source.loadBoxes(i, size.width, size.height);
}

cv::Mat readMask(const DatasetSource& source, std::int64_t i) {
  const cv::Size size = imageSizeOf(source, i);
  cv::Mat mask = source.loadMask(i);
  if (mask.size() != size)
    throw SampleError(source.describe(i) + ": the image is " + std::to_string(size.width) + "x" +
                      std::to_string(size.height) + " but its mask is " +
                      std::to_string(mask.cols) + "x" + std::to_string(mask.rows));
  return mask;
}

}  // namespace netsmith::data
