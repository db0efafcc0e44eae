// The loader's fast paths against plain per-pixel formulas: the one-pass colour adjustments
// (torchvision's formulas, clamped to [0, 1]), the normalise-and-split that writes a sample's
// planes, and the size-checked file read.
#include <cmath>
#include <fstream>
#include <random>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include "augment/image_ops.h"
#include "common/error.h"
#include "data/dataset_source.h"
#include "data/sample_processor.h"
#include "data_fixtures.h"
#include "test_support.h"

using namespace netsmith;
using testutil::TempDir;

namespace {

cv::Mat randomImage(int rows, int cols, unsigned seed) {
  cv::Mat img(rows, cols, CV_32FC3);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      for (int k = 0; k < 3; ++k)
        img.at<cv::Vec3f>(r, c)[k] = u(gen);
  return img;
}

double clamp01(double v) {
  return std::min(1.0, std::max(0.0, v));
}

double lumaOf(const cv::Vec3f& p) {
  return 0.2989 * p[0] + 0.587 * p[1] + 0.114 * p[2];
}

}  // namespace

TEST(FastPaths, ColourAdjustmentsFollowTheFormulas) {
  const cv::Mat src = randomImage(13, 17, 1);  // odd sizes: no whole SIMD rows
  double meanLuma = 0.0;
  for (int r = 0; r < src.rows; ++r)
    for (int c = 0; c < src.cols; ++c)
      meanLuma += lumaOf(src.at<cv::Vec3f>(r, c));
  meanLuma /= double(src.total());
  for (const double f : {0.0, 0.6, 1.0, 1.4}) {
    cv::Mat b = src.clone(), k = src.clone(), s = src.clone();
    augment::adjustBrightness(b, f);
    augment::adjustContrast(k, f);
    augment::adjustSaturation(s, f);
    for (int r = 0; r < src.rows; ++r) {
      for (int c = 0; c < src.cols; ++c) {
        const auto p = src.at<cv::Vec3f>(r, c);
        for (int ch = 0; ch < 3; ++ch) {
          EXPECT_NEAR(b.at<cv::Vec3f>(r, c)[ch], clamp01(f * p[ch]), 1e-5);
          EXPECT_NEAR(k.at<cv::Vec3f>(r, c)[ch], clamp01(f * p[ch] + (1 - f) * meanLuma), 1e-5);
          EXPECT_NEAR(s.at<cv::Vec3f>(r, c)[ch], clamp01(f * p[ch] + (1 - f) * lumaOf(p)), 1e-5)
              << "saturation " << f << " at " << r << "," << c;
        }
      }
    }
  }
}

TEST(FastPaths, ProcessWritesNormalisedPlanes) {
  TempDir dir;
  std::filesystem::create_directories(dir.path() / "a");
  cv::Mat bgr(6, 5, CV_8UC3);
  cv::randu(bgr, 0, 255);
  cv::imwrite(dir.file("a/x.png"), bgr);
  data::SourceSpec spec;
  spec.format = data::SourceFormat::ImageFolder;
  spec.path = "data.train";
  spec.root = dir.path().string();
  const auto src = data::openSource(spec, {}, data::ErrorPolicy::Fail);
  data::SampleSet set{"train", src, {0}};
  const std::vector<double> mean{0.1, 0.5, 0.9}, stdev{0.2, 0.25, 0.5};
  data::SampleProcessor proc({3, 6, 5, data::FitPolicy::Resize}, nullptr, mean, stdev);
  std::vector<float> out(3 * 6 * 5, -99.0f);
  proc.process(set, 0, false, 0, 0, out.data());
  for (int ch = 0; ch < 3; ++ch) {
    for (int r = 0; r < 6; ++r) {
      for (int c = 0; c < 5; ++c) {
        // The file is BGR; the model's channel 0 is red.
        const double v = bgr.at<cv::Vec3b>(r, c)[2 - ch] / 255.0;
        EXPECT_NEAR(out[std::size_t(ch * 30 + r * 5 + c)],
                    (v - mean[std::size_t(ch)]) / stdev[std::size_t(ch)], 1e-5);
      }
    }
  }
}

TEST(FastPaths, ImageFilesAreReadWholeAndChecked) {
  TempDir dir;
  cv::Mat bgr(7, 9, CV_8UC3, cv::Scalar(1, 2, 3));
  cv::imwrite(dir.file("x.png"), bgr);
  const cv::Mat rgb = data::decodeImageFile(dir.file("x.png"));
  ASSERT_EQ(rgb.rows, 7);
  EXPECT_EQ(rgb.at<cv::Vec3b>(6, 8), cv::Vec3b(3, 2, 1));
  // A file over the per-image ceiling is refused by its size, before it is read.
  {
    std::ofstream big(dir.file("big.jpg"), std::ios::binary);
    big.seekp((std::streamoff(256) << 20) + 1);
    big.put('\0');
  }
  std::string error = "(no error)";
  try {
    data::decodeImageFile(dir.file("big.jpg"));
  } catch (const Error& e) {
    error = e.what();
  }
  EXPECT_NE(
      error.find("big.jpg: not read: 256 MiB is more than the 256 MiB one image file may have"),
      std::string::npos)
      << error;
}
