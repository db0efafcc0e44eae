// The loader's own JPEG decoding (libjpeg-turbo, straight to RGB, a region at a time) against
// OpenCV's decode of the same files, and the loader's region decode against its whole-image path.
#include <cstring>
#include <fstream>
#include <random>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "augment/pipeline.h"
#include "data/dataset_source.h"
#include "data/sample_processor.h"
#include "data_fixtures.h"
#include "test_support.h"

namespace netsmith::testutil {
std::vector<unsigned char> cmykJpeg(int width, int height);  // cmyk_jpeg_writer.cpp
}

using namespace netsmith;
using testutil::TempDir;

namespace {

/// A photo-like image (smooth shapes plus noise) so every DCT coefficient matters.
cv::Mat photoLike(int rows, int cols, unsigned seed) {
  cv::Mat img(rows, cols, CV_8UC3);
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> noise(-20, 20);
  for (int y = 0; y < rows; ++y) {
    for (int x = 0; x < cols; ++x) {
      auto& p = img.at<cv::Vec3b>(y, x);
      p[0] = cv::saturate_cast<uchar>(128 + 100 * std::sin(x * 0.07) + noise(gen));
      p[1] = cv::saturate_cast<uchar>(128 + 100 * std::cos(y * 0.05) + noise(gen));
      p[2] = cv::saturate_cast<uchar>((x * y) % 256 + noise(gen) / 2);
    }
  }
  return img;
}

std::vector<unsigned char> encode(const cv::Mat& img, std::vector<int> params = {}) {
  std::vector<unsigned char> bytes;
  EXPECT_TRUE(cv::imencode(".jpg", img, bytes, params));
  return bytes;
}

/// OpenCV's decode, as RGB (or grey).
cv::Mat openCvDecode(const std::vector<unsigned char>& bytes) {
  cv::Mat img = cv::imdecode(bytes, cv::IMREAD_UNCHANGED);
  if (img.channels() == 3) cv::cvtColor(img, img, cv::COLOR_BGR2RGB);
  return img;
}

cv::Mat decodeRegion(const std::vector<unsigned char>& bytes, cv::Rect region) {
  const data::RegionChooser choose = [region](cv::Size) { return region; };
  auto result = data::decodeJpeg(bytes, "x.jpg", data::kMaxImagePixels, choose);
  EXPECT_TRUE(result.handled);
  return result.image;
}

/// The text of the SampleError `decode` throws ("" when it throws none).
std::string jpegErrorText(const std::vector<unsigned char>& bytes, const std::string& name) {
  try {
    data::decodeJpeg(bytes, name, data::kMaxImagePixels, {});
  } catch (const data::SampleError& e) {
    return e.what();
  }
  return "";
}

double maxDifference(const cv::Mat& a, const cv::Mat& b) {
  if (a.size() != b.size() || a.type() != b.type()) return 1e9;
  return cv::norm(a, b, cv::NORM_INF);
}

}  // namespace

TEST(JpegDecode, WholeImagesEqualOpenCvsDecode) {
  // Baseline 4:2:0 (OpenCV's default) and progressive files, odd sizes, grey.
  const cv::Mat colour = photoLike(75, 101, 1);
  cv::Mat grey;
  cv::cvtColor(colour, grey, cv::COLOR_BGR2GRAY);
  const std::vector<std::vector<unsigned char>> files = {
      encode(colour), encode(colour, {cv::IMWRITE_JPEG_PROGRESSIVE, 1}),
      encode(colour, {cv::IMWRITE_JPEG_QUALITY, 100}), encode(grey)};
  for (std::size_t f = 0; f < files.size(); ++f) {
    const auto ours = data::decodeJpeg(files[f], "x.jpg", data::kMaxImagePixels, {});
    ASSERT_TRUE(ours.handled);
    EXPECT_EQ(maxDifference(ours.image, openCvDecode(files[f])), 0.0) << "file " << f;
  }
  EXPECT_EQ(data::decodeJpeg(files[3], "x.jpg", data::kMaxImagePixels, {}).image.type(), CV_8UC1);
}

TEST(JpegDecode, ARegionHasThePixelsOfTheWholeDecodeThere) {
  const cv::Mat colour = photoLike(120, 173, 2);
  for (const auto& bytes : {encode(colour), encode(colour, {cv::IMWRITE_JPEG_PROGRESSIVE, 1})}) {
    const cv::Mat whole = openCvDecode(bytes);
    std::mt19937 gen(7);
    for (int i = 0; i < 40; ++i) {
      // Unaligned corners and sizes, edges included.
      const int x = std::uniform_int_distribution<int>(0, 160)(gen);
      const int y = std::uniform_int_distribution<int>(0, 110)(gen);
      const int w = std::uniform_int_distribution<int>(1, 173 - x)(gen);
      const int h = std::uniform_int_distribution<int>(1, 120 - y)(gen);
      const cv::Rect r(x, y, w, h);
      EXPECT_EQ(maxDifference(decodeRegion(bytes, r), whole(r)), 0.0) << r;
    }
  }
}

TEST(JpegDecode, BrokenAndOversizedFilesAreNamedErrors) {
  auto bytes = encode(photoLike(40, 60, 3));
  // Garbage after the start marker.
  std::vector<unsigned char> garbage = {0xFF, 0xD8, 0xFF, 0x00, 0x12, 0x34, 0x56};
  EXPECT_EQ(jpegErrorText(garbage, "bad.jpg").rfind("bad.jpg: not a readable image (", 0), 0u)
      << jpegErrorText(garbage, "bad.jpg");
  // A header announcing 60000 x 60000 pixels: refused before anything is allocated.
  auto huge = bytes;
  for (std::size_t i = 2; i + 8 < huge.size(); ++i) {
    if (huge[i] == 0xFF && huge[i + 1] == 0xC0) {  // SOF0: length, precision, height, width
      huge[i + 5] = 0xEA, huge[i + 6] = 0x60, huge[i + 7] = 0xEA, huge[i + 8] = 0x60;
      break;
    }
  }
  EXPECT_EQ(jpegErrorText(huge, "big.jpg"),
            "big.jpg: not read: 3600 megapixels is more than the 100 one image may have (a "
            "decompression bomb, or a scan to shrink first)");
  // A file cut short decodes, as with OpenCV, to an image of its size whose rows before the cut
  // are right (the rest is filled, differently by each decoder); it does not fail.
  const std::vector<unsigned char> cut(bytes.begin(), bytes.begin() + bytes.size() / 2);
  const auto ours = data::decodeJpeg(cut, "cut.jpg", data::kMaxImagePixels, {});
  ASSERT_TRUE(ours.handled);
  EXPECT_EQ(ours.image.size(), cv::Size(60, 40));
  const cv::Rect firstRows(0, 0, 60, 8);
  EXPECT_EQ(maxDifference(ours.image(firstRows), openCvDecode(bytes)(firstRows)), 0.0);
}

// The loader decodes just the RandomResizedCrop region of JPEGs; the sample must be the one the
// whole-image path gives (the same draws, the same pixels, up to byte rounding in the resize).
TEST(JpegDecode, TheLoaderDecodesTheCropRegionAndGetsTheSameSample) {
  TempDir dir;
  std::filesystem::create_directories(dir.path() / "a");
  for (int i = 0; i < 6; ++i)
    cv::imwrite(dir.file("a/p" + std::to_string(i) + ".jpg"), photoLike(90 + 7 * i, 130, 10 + i));
  data::SourceSpec spec;
  spec.format = data::SourceFormat::ImageFolder;
  spec.path = "data.train";
  spec.root = dir.path().string();
  const auto src = data::openSource(spec, {}, data::ErrorPolicy::Fail);
  data::SampleSet set{"train", src, {0, 1, 2, 3, 4, 5}};
  Problems problems;
  augment::TransformContext ctx;
  ctx.channels = 3;
  ctx.height = ctx.width = 48;
  const auto pipeline =
      augment::Pipeline::fromJson(Json::parse(R"([{"transform": "RandomResizedCrop", "p": 0.8},
                      {"transform": "HorizontalFlip"},
                      {"transform": "ColorJitter", "brightness": 0.3}])"),
                                  augment::TransformRegistry::withBuiltins(), ctx, problems);
  ASSERT_TRUE(problems.empty()) << formatProblems(problems);
  ASSERT_TRUE(pipeline.startsWithCut(true));
  EXPECT_FALSE(pipeline.startsWithCut(false));  // evaluation does not run RandomResizedCrop
  const data::SampleProcessor proc({3, 48, 48, data::FitPolicy::Resize}, &pipeline, {}, {});
  for (std::int64_t k = 0; k < 6; ++k) {
    for (std::int64_t epoch = 0; epoch < 4; ++epoch) {
      const cv::Mat sample = proc.preview(set, k, true, 5, epoch);
      // The whole-image path, by hand: decode all, floats, every step on floats.
      cv::Mat whole = data::toModelChannels(src->load(k), 3);
      augment::SampleRng rng(augment::mixSeed(5, std::uint64_t(epoch), std::uint64_t(k)));
      pipeline.apply(whole, &rng, true);
      whole = data::fitImage(whole, 48, 48, data::FitPolicy::Resize);  // when the crop did not run
      ASSERT_EQ(sample.size(), whole.size());
      EXPECT_LT(cv::norm(sample, whole, cv::NORM_INF), 3.0 / 255.0) << k << " " << epoch;
    }
  }
}

// CMYK JPEGs are left to OpenCV (libjpeg-turbo does not turn CMYK into RGB); a region is then
// cut from OpenCV's whole decode.
TEST(JpegDecode, CmykFilesFallBackToOpenCvRegionsIncluded) {
  const auto bytes = testutil::cmykJpeg(45, 30);
  EXPECT_FALSE(data::decodeJpeg(bytes, "cmyk.jpg", data::kMaxImagePixels, {}).handled);
  TempDir dir;
  const std::string path = dir.file("cmyk.jpg");
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  const cv::Mat whole = data::decodeImageFile(path);
  ASSERT_EQ(whole.type(), CV_8UC3);
  ASSERT_EQ(whole.size(), cv::Size(45, 30));
  cv::Mat expected = cv::imread(path, cv::IMREAD_COLOR);
  cv::cvtColor(expected, expected, cv::COLOR_BGR2RGB);
  EXPECT_EQ(maxDifference(whole, expected), 0.0);
  const cv::Rect r(7, 5, 20, 11);
  const cv::Mat region = data::decodeImageFile(path, [r](cv::Size) { return r; });
  EXPECT_EQ(maxDifference(region, expected(r)), 0.0);
}
