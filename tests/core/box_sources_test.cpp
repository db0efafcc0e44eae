// Detection data from the three formats people have (data/box_sources.cpp): the boxes
// `make-dataset scenes` writes as YOLO labels, a COCO JSON and Pascal VOC files read back the
// same, and each is the tight box of its item's pixels in the scene's mask (an independent
// record of where the item was pasted).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <opencv2/imgcodecs.hpp>

#include "data/dataset_source.h"
#include "data/example_datasets.h"
#include "data_fixtures.h"
#include "test_support.h"

using namespace netsmith;
using namespace netsmith::data;
using testutil::TempDir;
namespace fs = std::filesystem;

namespace {

/// Fashion-MNIST-like items: a bright rectangle of a size and place of its own, ringed by a
/// faint border (which the masks mark ignore and the boxes leave out).
testutil::IdxData items(int count) {
  testutil::IdxData d;
  for (int i = 0; i < count; ++i) {
    std::vector<unsigned char> img(28 * 28, 0);
    const int x0 = 2 + i % 9, y0 = 3 + i % 7, w = 6 + i % 11, h = 5 + i % 13;
    for (int y = y0 - 1; y <= y0 + h; ++y)
      for (int x = x0 - 1; x <= x0 + w; ++x) {
        const bool inside = y >= y0 && y < y0 + h && x >= x0 && x < x0 + w;
        img[std::size_t(y * 28 + x)] = inside ? 200 : 20;
      }
    d.images.push_back(img);
    d.labels.push_back(static_cast<unsigned char>(i % 10));
  }
  return d;
}

SourceSpec boxSpec(SourceFormat format, const fs::path& split) {
  SourceSpec s;
  s.format = format;
  s.path = "data.train";
  s.images = (split / "images").string();
  if (format == SourceFormat::Yolo) s.labels = (split / "labels").string();
  if (format == SourceFormat::Coco) s.annotations = (split / "annotations.json").string();
  if (format == SourceFormat::Voc) s.annotations = (split / "annotations").string();
  return s;
}

}  // namespace

TEST(BoxSources, TheScenesBoxesReadTheSameFromYoloCocoAndVoc) {
  TempDir dir;
  fs::create_directories(dir.path() / "fm");
  for (const char* prefix : {"train", "t10k"})
    testutil::writeIdx(
        items(30), 28, 28,
        (dir.path() / "fm" / (std::string(prefix) + "-images-idx3-ubyte.gz")).string(),
        (dir.path() / "fm" / (std::string(prefix) + "-labels-idx1-ubyte.gz")).string(), true);
  ExampleDatasetOptions options;
  options.name = "scenes";
  options.out = (dir.path() / "scenes").string();
  options.source = (dir.path() / "fm").string();
  options.train = 24;
  options.test = 6;
  makeExampleDataset(options);
  const fs::path train = dir.path() / "scenes" / "train";

  // YOLO's names from the data.yaml beside its labels; VOC's from the project.
  const auto yolo = openSource(boxSpec(SourceFormat::Yolo, train), {}, ErrorPolicy::Fail);
  const auto coco = openSource(boxSpec(SourceFormat::Coco, train), {}, ErrorPolicy::Fail);
  const auto voc =
      openSource(boxSpec(SourceFormat::Voc, train), fashionMnistClasses(), ErrorPolicy::Fail);
  EXPECT_EQ(yolo->classNames(), fashionMnistClasses());
  EXPECT_EQ(coco->classNames(), fashionMnistClasses());
  ASSERT_EQ(yolo->size(), 24);
  ASSERT_EQ(coco->size(), 24);
  ASSERT_EQ(voc->size(), 24);
  EXPECT_TRUE(yolo->hasBoxes() && coco->hasBoxes() && voc->hasBoxes());
  int boxes = 0, empty = 0;
  for (std::int64_t i = 0; i < 24; ++i) {
    SCOPED_TRACE(yolo->describe(i));
    EXPECT_EQ(yolo->describe(i), coco->describe(i));
    EXPECT_EQ(yolo->describe(i), voc->describe(i));
    const auto a = yolo->loadBoxes(i, 64, 64);
    const auto b = coco->loadBoxes(i, 64, 64);
    const auto c = voc->loadBoxes(i, 64, 64);
    ASSERT_EQ(a.size(), b.size());
    ASSERT_EQ(a.size(), c.size());
    boxes += int(a.size());
    empty += a.empty();
    // The item's pixels in the mask (class + 1) touch each side of its box from inside, and
    // the box holds only pixels of the item or the background.
    const fs::path stem = fs::path(yolo->describe(i)).stem();
    const cv::Mat mask =
        cv::imread((train / "masks" / (stem.string() + ".png")).string(), cv::IMREAD_UNCHANGED);
    ASSERT_FALSE(mask.empty());
    for (std::size_t k = 0; k < a.size(); ++k) {
      EXPECT_EQ(a[k].cls, b[k].cls);
      EXPECT_EQ(a[k].cls, c[k].cls);
      // COCO and VOC hold whole pixels; YOLO's normalised numbers come back within rounding.
      EXPECT_EQ(b[k], c[k]);
      for (const auto& [p, q] : {std::pair{a[k].x0, b[k].x0},
                                 {a[k].y0, b[k].y0},
                                 {a[k].x1, b[k].x1},
                                 {a[k].y1, b[k].y1}})
        EXPECT_NEAR(p, q, 1e-4);
      const cv::Rect r(int(b[k].x0), int(b[k].y0), int(b[k].x1 - b[k].x0), int(b[k].y1 - b[k].y0));
      const cv::Mat inside = mask(r) == uchar(b[k].cls + 1);
      EXPECT_GT(cv::countNonZero(inside.row(0)), 0);
      EXPECT_GT(cv::countNonZero(inside.row(r.height - 1)), 0);
      EXPECT_GT(cv::countNonZero(inside.col(0)), 0);
      EXPECT_GT(cv::countNonZero(inside.col(r.width - 1)), 0);
    }
  }
  EXPECT_GT(boxes, 24);  // 1 to 3 items a scene, most placed

  // An image whose size is not the annotation's is refused by name.
  EXPECT_NE(testutil::errorOf([&] { coco->loadBoxes(0, 32, 64); }).find("the image is 32x64"),
            std::string::npos);
}

TEST(BoxSources, MismatchedFilesAreNamedSkippedOrFatal) {
  TempDir dir;
  const fs::path split = dir.path();
  fs::create_directories(split / "images");
  fs::create_directories(split / "labels");
  cv::imwrite((split / "images" / "a.png").string(), cv::Mat::zeros(10, 20, CV_8UC1));
  cv::imwrite((split / "images" / "b.png").string(), cv::Mat::zeros(10, 20, CV_8UC1));
  std::ofstream((split / "labels" / "a.txt").string()) << "1 0.5 0.5 0.5 0.4\n";
  std::ofstream((split / "labels" / "orphan.txt").string()) << "0 0.5 0.5 0.1 0.1\n";
  std::ofstream((split / "labels" / "classes.txt").string()) << "cat\ndog\n";
  const auto yolo = openSource(boxSpec(SourceFormat::Yolo, split), {}, ErrorPolicy::Skip);
  EXPECT_EQ(yolo->classNames(), (std::vector<std::string>{"cat", "dog"}));
  ASSERT_EQ(yolo->size(), 2);
  // a: a dog in the middle, 10 x 4 pixels; b: no label file, no object.
  const auto a = yolo->loadBoxes(0, 20, 10);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].cls, 1);
  EXPECT_NEAR(a[0].x0, 5, 1e-5);
  EXPECT_NEAR(a[0].x1, 15, 1e-5);
  EXPECT_NEAR(a[0].y0, 3, 1e-5);
  EXPECT_NEAR(a[0].y1, 7, 1e-5);
  EXPECT_TRUE(yolo->loadBoxes(1, 20, 10).empty());
  ASSERT_EQ(yolo->skippedAtScan().size(), 1u);
  EXPECT_NE(yolo->skippedAtScan()[0].reason.find("no image named orphan"), std::string::npos);
  EXPECT_NE(testutil::errorOf([&] {
              openSource(boxSpec(SourceFormat::Yolo, split), {}, ErrorPolicy::Fail);
            }).find("orphan.txt"),
            std::string::npos);
  // A class past the names is refused when the sample is read, naming the file.
  std::ofstream((split / "labels" / "b.txt").string()) << "2 0.5 0.5 0.1 0.1\n";
  const auto again = openSource(boxSpec(SourceFormat::Yolo, split), {}, ErrorPolicy::Skip);
  EXPECT_NE(testutil::errorOf([&] { again->loadBoxes(1, 20, 10); }).find("b.txt"),
            std::string::npos);
  // VOC needs the class names from the project.
  EXPECT_NE(testutil::errorOf([&] {
              openSource(boxSpec(SourceFormat::Voc, split), {}, ErrorPolicy::Skip);
            }).find("set data.classes"),
            std::string::npos);
}
