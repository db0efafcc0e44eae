// Dataset sources over real files the tests write: correct images and labels, and a clear
// error (or a counted skip) for every kind of bad input.
#include <opencv2/imgcodecs.hpp>

#include "common/file_util.h"
#include "data/data_module.h"
#include "data/dataset_stats.h"
#include "data/manifest_edit.h"
#include "data/sample_processor.h"
#include "data/source_formats.h"
#include "data_fixtures.h"
#include "test_support.h"

using namespace netsmith;
using namespace netsmith::data;
using testutil::TempDir;

namespace {

SourceSpec idxSpec(const std::string& images, const std::string& labels) {
  SourceSpec s;
  s.format = SourceFormat::Idx;
  s.path = "data.train";
  s.images = images;
  s.labels = labels;
  return s;
}

SourceSpec folderSpec(const std::string& root) {
  SourceSpec s;
  s.format = SourceFormat::ImageFolder;
  s.path = "data.train";
  s.root = root;
  return s;
}

SourceSpec csvSpec(const std::string& manifest) {
  SourceSpec s;
  s.format = SourceFormat::Csv;
  s.path = "data.train";
  s.manifest = manifest;
  return s;
}

using testutil::errorOf;

#define EXPECT_CONTAINS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

}  // namespace

TEST(IdxSource, ReadsRawAndGzippedFiles) {
  TempDir dir;
  const auto d = testutil::makeIdxData(30, 5, 4, 3);
  for (bool gz : {false, true}) {
    const auto img = dir.file(gz ? "i.gz" : "i.idx"), lbl = dir.file(gz ? "l.gz" : "l.idx");
    testutil::writeIdx(d, 5, 4, img, lbl, gz);
    const auto src = openSource(idxSpec(img, lbl), {}, ErrorPolicy::Skip);
    ASSERT_EQ(src->size(), 30);
    EXPECT_EQ(src->numClasses(), 3);
    for (int i : {0, 7, 29}) {
      EXPECT_EQ(src->label(i), i % 3);
      const cv::Mat m = src->load(i);
      ASSERT_EQ(m.type(), CV_8UC1);
      ASSERT_EQ(m.rows, 5);
      ASSERT_EQ(m.cols, 4);
      for (int p = 0; p < 20; ++p)
        EXPECT_EQ(m.data[p], d.images[static_cast<std::size_t>(i)][static_cast<std::size_t>(p)]);
    }
    EXPECT_CONTAINS(src->describe(7), "#7");
  }
}

TEST(IdxSource, BadFilesNameTheFileAndTheProblem) {
  TempDir dir;
  const auto d = testutil::makeIdxData(10, 4, 4, 2);
  const auto img = dir.file("i.idx"), lbl = dir.file("l.idx");
  testutil::writeIdx(d, 4, 4, img, lbl, false, 0x1234);
  EXPECT_CONTAINS(errorOf([&] { openSource(idxSpec(img, lbl), {}, ErrorPolicy::Skip); }),
                  "data.train.images: " + img +
                      ": not an IDX image file (magic number 0x00001234, expected 0x00000803)");
  testutil::writeIdx(d, 4, 4, img, lbl, false, 0x803, -1, 5);
  EXPECT_CONTAINS(errorOf([&] { openSource(idxSpec(img, lbl), {}, ErrorPolicy::Skip); }),
                  "truncated");
  testutil::writeIdx(d, 4, 4, img, lbl, false, 0x803, 9);
  EXPECT_CONTAINS(errorOf([&] { openSource(idxSpec(img, lbl), {}, ErrorPolicy::Skip); }),
                  "the images file has 10 images but the labels file has 9 labels");
  EXPECT_CONTAINS(
      errorOf([&] { openSource(idxSpec(dir.file("nope.gz"), lbl), {}, ErrorPolicy::Skip); }),
      "data.train.images: file not found: " + dir.file("nope.gz"));
  // Swapped images and labels get a hint.
  testutil::writeIdx(d, 4, 4, img, lbl, false);
  EXPECT_CONTAINS(errorOf([&] { openSource(idxSpec(lbl, img), {}, ErrorPolicy::Skip); }),
                  "swap images and labels");
  // A truncated gzip stream.
  const auto gz = dir.file("t.gz");
  testutil::writeIdx(d, 4, 4, gz, dir.file("tl.gz"), true);
  std::filesystem::resize_file(gz, std::filesystem::file_size(gz) - 40);
  EXPECT_CONTAINS(
      errorOf([&] { openSource(idxSpec(gz, dir.file("tl.gz")), {}, ErrorPolicy::Skip); }), gz);
}

TEST(IdxSource, LabelsOutOfRangeAreSkippedOrFail) {
  TempDir dir;
  const auto d = testutil::makeIdxData(12, 3, 3, 4);  // labels 0..3
  const auto img = dir.file("i"), lbl = dir.file("l");
  testutil::writeIdx(d, 3, 3, img, lbl, false);
  const std::vector<std::string> three = {"a", "b", "c"};
  const auto src = openSource(idxSpec(img, lbl), three, ErrorPolicy::Skip);
  EXPECT_EQ(src->size(), 9);
  ASSERT_EQ(src->skippedAtScan().size(), 3u);
  EXPECT_CONTAINS(src->skippedAtScan()[0].reason, "label 3 is out of range for 3 classes");
  EXPECT_CONTAINS(errorOf([&] { openSource(idxSpec(img, lbl), three, ErrorPolicy::Fail); }),
                  "record 3: label 3 is out of range");
}

TEST(ImageFolderSource, ClassesSortedImagesDecoded) {
  TempDir dir;
  testutil::writeImageFolder(dir.path(), {"zebra", "apple", "mango"}, 3, 10, 12, 3, ".png");
  cv::imwrite((dir.path() / "apple" / "photo.JPG").string(), testutil::patternImage(20, 16, 3, 99));
  std::ofstream(dir.file("apple/notes.txt")) << "not an image";
  const auto src = openSource(folderSpec(dir.path().string()), {}, ErrorPolicy::Skip);
  EXPECT_EQ(src->classNames(), (std::vector<std::string>{"apple", "mango", "zebra"}));
  ASSERT_EQ(src->size(), 10);
  EXPECT_EQ(src->label(0), 0);
  EXPECT_EQ(src->label(9), 2);
  ASSERT_EQ(src->skippedAtScan().size(), 1u);
  EXPECT_CONTAINS(src->skippedAtScan()[0].item, "notes.txt");
  const cv::Mat png = src->load(0);  // apple/img_0.png, written from BGR pattern seed 3
  ASSERT_EQ(png.type(), CV_8UC3);
  const cv::Mat expected = testutil::patternImage(10, 12, 3, 3);
  // Loaded as RGB: channel 0 of the result is channel 2 of what cv::imwrite was given.
  EXPECT_EQ(png.at<cv::Vec3b>(2, 3)[0], expected.at<cv::Vec3b>(2, 3)[2]);
  EXPECT_EQ(png.at<cv::Vec3b>(2, 3)[2], expected.at<cv::Vec3b>(2, 3)[0]);
  const cv::Mat jpg = src->load(3);  // apple/photo.JPG sorts after img_*.png
  EXPECT_EQ(jpg.rows, 20);
  EXPECT_EQ(jpg.cols, 16);
}

TEST(ImageFolderSource, BadFolders) {
  TempDir dir;
  EXPECT_CONTAINS(
      errorOf([&] { openSource(folderSpec(dir.file("missing")), {}, ErrorPolicy::Skip); }),
      "data.train.root: " + dir.file("missing") + ": folder not found");
  EXPECT_CONTAINS(
      errorOf([&] { openSource(folderSpec(dir.path().string()), {}, ErrorPolicy::Skip); }),
      "no class folders");
  testutil::writeImageFolder(dir.path(), {"cat"}, 2, 8, 8, 1);
  std::filesystem::create_directories(dir.path() / "dog");
  EXPECT_CONTAINS(
      errorOf([&] { openSource(folderSpec(dir.path().string()), {}, ErrorPolicy::Skip); }),
      "class folder \"dog\" has no images");
  // Every problem in one pass: both empty folders, and the files the listing skipped (here the
  // reason: images saved as .gif).
  std::filesystem::create_directories(dir.path() / "emu");
  std::ofstream(dir.path() / "emu" / "a.gif") << "GIF89a";
  const std::string all =
      errorOf([&] { openSource(folderSpec(dir.path().string()), {}, ErrorPolicy::Skip); });
  EXPECT_CONTAINS(all, "class folders \"dog\", \"emu\" have no images");
  EXPECT_CONTAINS(all, "1 file skipped while listing:\n  " +
                           (dir.path() / "emu" / "a.gif").string() +
                           ": not an image file (extension)");
  std::filesystem::remove_all(dir.path() / "emu");
  testutil::writeImageFolder(dir.path(), {"dog"}, 1, 8, 8, 1);
  EXPECT_CONTAINS(errorOf([&] {
                    openSource(folderSpec(dir.path().string()), {"dog", "cat"}, ErrorPolicy::Skip);
                  }),
                  "data.classes: does not match the class folders");
}

TEST(ImageFolderSource, CorruptAndEmptyImagesFailAtDecodeNamingTheFile) {
  TempDir dir;
  testutil::writeImageFolder(dir.path(), {"a"}, 1, 8, 8, 3);
  std::ofstream(dir.file("a/broken.png")) << "this is not a png";
  std::ofstream(dir.file("a/empty.jpg"));
  const auto src = openSource(folderSpec(dir.path().string()), {}, ErrorPolicy::Skip);
  ASSERT_EQ(src->size(), 3);  // broken.png, empty.jpg, img_0.png (sorted)
  EXPECT_CONTAINS(errorOf([&] { src->load(0); }), "broken.png: not a readable image");
  EXPECT_CONTAINS(errorOf([&] { src->load(1); }), "empty.jpg: empty file (0 bytes)");
  EXPECT_NO_THROW(src->load(2));
}

TEST(ImageFolderSource, MixedSizesAndChannelsAreConvertedAndFitted) {
  TempDir dir;
  std::filesystem::create_directories(dir.path() / "a");
  cv::imwrite(dir.file("a/grey.png"), testutil::patternImage(30, 40, 1, 1));
  cv::imwrite(dir.file("a/colour.png"), testutil::patternImage(12, 9, 3, 2));
  cv::Mat rgba(16, 16, CV_8UC4, cv::Scalar(10, 20, 30, 128));
  cv::imwrite(dir.file("a/alpha.png"), rgba);
  const auto src = openSource(folderSpec(dir.path().string()), {}, ErrorPolicy::Skip);
  SampleSet set{"train", src, {0, 1, 2}};
  for (int channels : {1, 3}) {
    for (auto fit : {FitPolicy::Resize, FitPolicy::ResizeCrop}) {
      SampleProcessor proc({channels, 24, 20, fit}, nullptr, {}, {});
      std::vector<float> buf(static_cast<std::size_t>(channels * 24 * 20));
      for (int k = 0; k < 3; ++k) {
        proc.process(set, k, false, 0, 0, buf.data());
        const cv::Mat img = proc.plain(set, k);
        EXPECT_EQ(img.rows, 24);
        EXPECT_EQ(img.cols, 20);
        EXPECT_EQ(img.channels(), channels);
        EXPECT_EQ(img.type(), CV_MAKETYPE(CV_32F, channels));
      }
    }
  }
  // Grey to RGB repeats the grey value; values scale to [0, 1].
  SampleProcessor rgb({3, 30, 40, FitPolicy::Resize}, nullptr, {}, {});
  const cv::Mat grey = rgb.plain(set, 2);  // grey.png (sorted: alpha, colour, grey)
  const auto px = grey.at<cv::Vec3f>(5, 7);
  EXPECT_FLOAT_EQ(px[0], px[1]);
  EXPECT_FLOAT_EQ(px[0], testutil::patternImage(30, 40, 1, 1).at<unsigned char>(5, 7) / 255.0f);
  // RGBA drops alpha: BGRA (10,20,30) is RGB (30,20,10).
  const cv::Mat alpha =
      SampleProcessor({3, 16, 16, FitPolicy::Resize}, nullptr, {}, {}).plain(set, 0);
  EXPECT_NEAR(alpha.at<cv::Vec3f>(0, 0)[0], 30 / 255.0, 1e-6);
}

TEST(ImageList, FilesAndFoldersWithoutTargets) {
  TempDir dir;
  testutil::writeImageFolder(dir.path(), {"b", "a"}, 2, 8, 8, 1);  // a/img_*.png, b/img_*.png
  std::filesystem::create_directories(dir.path() / "a" / ".hidden");
  cv::imwrite((dir.path() / "a" / ".hidden" / "x.png").string(),
              testutil::patternImage(8, 8, 1, 1));
  std::ofstream(dir.file("a/notes.txt")) << "not an image";
  std::filesystem::create_directory_symlink("..", dir.path() / "a" / "up");  // a loop
  const std::string single = dir.file("b/img_0.png");
  std::ofstream(dir.file("named.dat")) << "named by the user";
  // A file named twice (here also found under a folder) is listed once, where first named.
  const auto src = openImageList({single, dir.path().string(), dir.file("named.dat")}, {"x"});
  EXPECT_FALSE(src->labelled());
  EXPECT_EQ(src->classNames(), std::vector<std::string>{"x"});
  ASSERT_EQ(src->size(), 5);
  EXPECT_EQ(src->describe(0), single);
  EXPECT_EQ(src->label(1), -1);
  EXPECT_EQ(src->describe(4), dir.file("named.dat"));
  int notImage = 0, loops = 0;
  for (const auto& s : src->skippedAtScan()) {
    notImage += s.item.find("notes.txt") != std::string::npos;
    loops += s.reason == "a link to a folder already listed";
    EXPECT_EQ(s.item.find(".hidden"), std::string::npos) << s.item;
  }
  EXPECT_EQ(notImage, 1);
  EXPECT_EQ(loops, 1);
  // The file named by the user is decoded, and refused by its bytes.
  EXPECT_CONTAINS(errorOf([&] { src->load(4); }), "named.dat: not a readable image");
  EXPECT_NO_THROW(src->load(0));
  EXPECT_CONTAINS(errorOf([&] { openImageList({dir.file("missing")}, {}); }),
                  dir.file("missing") + ": not found");
  TempDir empty;
  std::ofstream(empty.file("a.txt")) << "x";
  EXPECT_CONTAINS(errorOf([&] { openImageList({empty.path().string()}, {}); }),
                  "no image to predict on in 1 input(s) (skipped: " + empty.file("a.txt") +
                      ": not an image file (extension))");
}

TEST(CsvSource, PathsRelativeToTheManifestAndLabels) {
  TempDir dir;
  testutil::writeImageFolder(dir.path() / "imgs", {"x"}, 4, 6, 6, 3);
  std::ofstream(dir.file("m.csv"))
      << "id,path,label\n1,imgs/x/img_0.png,1\n2,\"imgs/x/img_1.png\",0\n3,"
      << dir.file("imgs/x/img_2.png") << ",1\n";
  const auto src = openSource(csvSpec(dir.file("m.csv")), {}, ErrorPolicy::Skip);
  ASSERT_EQ(src->size(), 3);
  EXPECT_EQ(src->numClasses(), 2);
  EXPECT_EQ(src->label(0), 1);
  EXPECT_EQ(src->label(1), 0);
  EXPECT_EQ(src->load(2).rows, 6);
  // Class names as labels.
  std::ofstream(dir.file("n.csv")) << "path,label\nimgs/x/img_0.png,dog\nimgs/x/img_1.png,cat\n";
  const auto named = openSource(csvSpec(dir.file("n.csv")), {}, ErrorPolicy::Skip);
  EXPECT_EQ(named->classNames(), (std::vector<std::string>{"cat", "dog"}));
  EXPECT_EQ(named->label(0), 1);
}

TEST(CsvSource, BadManifests) {
  TempDir dir;
  testutil::writeImageFolder(dir.path() / "imgs", {"x"}, 2, 6, 6, 3);
  std::ofstream(dir.file("cols.csv")) << "file,class\na.png,0\n";
  EXPECT_CONTAINS(
      errorOf([&] { openSource(csvSpec(dir.file("cols.csv")), {}, ErrorPolicy::Skip); }),
      "line 1: the header must have columns \"path\" and \"label\"");
  std::ofstream(dir.file("bad.csv"))
      << "path,label\nimgs/x/img_0.png,0\nimgs/x/missing.png,1\nimgs/x/img_1.png,7\n";
  const std::vector<std::string> two = {"a", "b"};
  const auto src = openSource(csvSpec(dir.file("bad.csv")), two, ErrorPolicy::Skip);
  EXPECT_EQ(src->size(), 1);
  ASSERT_EQ(src->skippedAtScan().size(), 2u);
  EXPECT_CONTAINS(src->skippedAtScan()[0].item, "bad.csv line 3");
  EXPECT_CONTAINS(src->skippedAtScan()[0].reason, "image not found");
  EXPECT_CONTAINS(src->skippedAtScan()[1].reason, "label 7 is out of range for 2 classes");
  EXPECT_CONTAINS(
      errorOf([&] { openSource(csvSpec(dir.file("bad.csv")), two, ErrorPolicy::Fail); }),
      "line 3: image not found");
  EXPECT_CONTAINS(
      errorOf([&] { openSource(csvSpec(dir.file("none.csv")), {}, ErrorPolicy::Skip); }),
      "file not found");
}

TEST(CifarSource, PlanesBecomeRgbPixels) {
  TempDir dir;
  testutil::writeCifar(dir.file("b1.bin"), 12, /*badLabelAt=*/5);
  SourceSpec s;
  s.format = SourceFormat::Cifar10;
  s.path = "data.train";
  s.files = {dir.file("b1.bin")};
  const auto src = openSource(s, {}, ErrorPolicy::Skip);
  EXPECT_EQ(src->size(), 11);
  EXPECT_EQ(src->classNames().at(0), "airplane");
  EXPECT_EQ(src->skippedAtScan().size(), 1u);
  const cv::Mat m = src->load(3);
  EXPECT_EQ(src->label(3), 3);
  EXPECT_EQ(m.at<cv::Vec3b>(10, 10), cv::Vec3b(3, 6, 9));
  EXPECT_EQ(src->load(5).at<cv::Vec3b>(0, 0),
            cv::Vec3b(6, 12, 18));  // record 6 after the skipped one
  std::filesystem::resize_file(dir.file("b1.bin"), 3073 * 2 + 100);
  EXPECT_CONTAINS(errorOf([&] { openSource(s, {}, ErrorPolicy::Skip); }),
                  "not a whole number of 3073-byte records");
}

TEST(Splits, StratifiedCountsAreRightDisjointAndSeeded) {
  // 3 classes of 50, 30 and 20 samples.
  std::vector<std::int64_t> labels;
  for (int i = 0; i < 50; ++i)
    labels.push_back(0);
  for (int i = 0; i < 30; ++i)
    labels.push_back(1);
  for (int i = 0; i < 20; ++i)
    labels.push_back(2);
  auto label = [&](std::int64_t i) { return labels[static_cast<std::size_t>(i)]; };
  const auto s = splitTrainValidation(100, label, 3, 0.25, 7, true);
  std::vector<int> valPerClass(3, 0);
  for (auto i : s.validation)
    ++valPerClass[static_cast<std::size_t>(label(i))];
  EXPECT_EQ(valPerClass, (std::vector<int>{13, 8, 5}));  // round(12.5)=13, 7.5->8, 5
  EXPECT_EQ(s.train.size() + s.validation.size(), 100u);
  std::vector<std::int64_t> all = s.train;
  all.insert(all.end(), s.validation.begin(), s.validation.end());
  std::sort(all.begin(), all.end());
  for (std::int64_t i = 0; i < 100; ++i)
    EXPECT_EQ(all[static_cast<std::size_t>(i)], i);
  EXPECT_EQ(splitTrainValidation(100, label, 3, 0.25, 7, true).validation, s.validation);
  EXPECT_NE(splitTrainValidation(100, label, 3, 0.25, 8, true).validation, s.validation);
  EXPECT_EQ(splitTrainValidation(100, label, 3, 0.25, 7, false).validation.size(), 25u);
}

TEST(DataModule, OpensSplitsWithLimits) {
  TempDir dir;
  const auto d = testutil::makeIdxData(200, 4, 4, 4);
  testutil::writeIdx(d, 4, 4, dir.file("i"), dir.file("l"), true);
  Problems problems;
  const auto config = parseDataConfig(
      Json::parse(R"({"train": {"format": "idx", "images": "i", "labels": "l", "limit": 120},
                      "validation": {"fraction": 0.25, "seed": 3},
                      "test": {"format": "idx", "images": "i", "labels": "l", "limit": 40},
                      "classes": ["a", "b", "c", "d"]})"),
      dir.path().string(), problems);
  ASSERT_TRUE(problems.empty()) << formatProblems(problems);
  const auto m = openDataModule(config);
  // 120 samples, 30 per class; round(0.25 * 30) = 8 per class go to validation.
  EXPECT_EQ(m.train.size(), 88);
  EXPECT_EQ(m.validation.size(), 32);
  EXPECT_EQ(m.test.size(), 40);
  EXPECT_EQ(classCounts(m.validation, 4), (std::vector<std::int64_t>{8, 8, 8, 8}));
}

// data.exclude leaves the samples it names out of every split (relative entries against the
// project's folder, as excludeEntryFor writes them), before limits and the validation split;
// entries naming nothing are reported, a bad list is a problem naming its entry.
TEST(DataModule, ExcludedSamplesAreLeftOutOfEverySplit) {
  TempDir dir;
  const auto d = testutil::makeIdxData(100, 4, 4, 4);
  testutil::writeIdx(d, 4, 4, dir.file("i"), dir.file("l"), false);
  testutil::writeImageFolder(dir.path() / "test", {"a", "b", "c", "d"}, 3, 4, 4, 1);
  const std::string base = dir.path().string();
  const std::string testImage = (dir.path() / "test" / "b" / "img_1.png").string();
  EXPECT_EQ(excludeEntryFor(dir.file("i") + " #7", base), "i #7");
  EXPECT_EQ(excludeEntryFor(testImage, base), "test/b/img_1.png");
  EXPECT_EQ(excludeEntryFor("/elsewhere/x.png", base), "/elsewhere/x.png");
  Json data = Json::parse(R"({"train": {"format": "idx", "images": "i", "labels": "l"},
                              "validation": {"fraction": 0.2},
                              "test": {"format": "image_folder", "root": "test"},
                              "classes": ["a", "b", "c", "d"]})");
  Problems problems;
  const auto plain = openDataModule(parseDataConfig(data, base, problems));
  ASSERT_TRUE(problems.empty()) << formatProblems(problems);
  data["exclude"] = {"i #7", "i #8", excludeEntryFor(testImage, base), "test/a/missing.png"};
  const auto config = parseDataConfig(data, base, problems);
  ASSERT_TRUE(problems.empty()) << formatProblems(problems);
  const auto m = openDataModule(config);
  EXPECT_EQ(m.train.size() + m.validation.size(), 98);
  EXPECT_EQ(m.test.size(), 11);
  for (const auto* set : {&m.train, &m.validation})
    for (const auto i : set->indices)
      EXPECT_TRUE(i != 7 && i != 8) << set->name;
  for (std::int64_t k = 0; k < m.test.size(); ++k)
    EXPECT_NE(m.test.describe(k), testImage);
  EXPECT_EQ(plain.test.size(), 12);
  std::string said;
  for (const auto& line : m.subsets)
    said += line + "\n";
  EXPECT_NE(said.find("data.exclude: 2 of the 100 samples of data.train left out"),
            std::string::npos)
      << said;
  EXPECT_NE(said.find("data.exclude: 1 of the 12 samples of data.test left out"), std::string::npos)
      << said;
  EXPECT_NE(said.find("1 entry names no sample of the data (the first: " +
                      (dir.path() / "test" / "a" / "missing.png").string()),
            std::string::npos)
      << said;
  // Bad lists.
  for (const auto& [bad, where] :
       std::vector<std::pair<Json, std::string>>{{Json("i #7"), "data.exclude"},
                                                 {Json::array({"i #7", 3}), "data.exclude[1]"},
                                                 {Json::array({""}), "data.exclude[0]"}}) {
    data["exclude"] = bad;
    Problems p;
    parseDataConfig(data, base, p);
    ASSERT_EQ(p.size(), 1u) << bad.dump();
    EXPECT_EQ(p[0].path, where);
  }
  // Excluding every test image is refused by name.
  data["exclude"] = Json::array();
  for (const auto& c : {"a", "b", "c", "d"})
    for (int k = 0; k < 3; ++k)
      data["exclude"].push_back("test/" + std::string(c) + "/img_" + std::to_string(k) + ".png");
  Problems p;
  EXPECT_NE(errorOf([&] {
              openDataModule(parseDataConfig(data, base, p));
            }).find("data.exclude: leaves data.test without samples"),
            std::string::npos);
}

// Relabel in a CSV manifest: only the row's label cell changes (CRLF, quotes and the other rows
// kept byte for byte); undo is the reverse call; a changed file, an unknown image and a link
// are refused, leaving the file as it was.
TEST(ManifestEdit, RelabelsOneRowAndUndoesIt) {
  TempDir dir;
  testutil::writeImageFolder(dir.path() / "imgs", {"x"}, 3, 6, 6, 3);
  const std::string original =
      "path,label,note\r\nimgs/x/img_0.png,cat,\"a, b\"\r\n\r\n\"imgs/x/img_1.png\" , dog ,c\r\n"
      "imgs/x/img_2.png,cat,d";
  { std::ofstream(dir.file("m.csv"), std::ios::binary) << original; }
  const std::string image = (dir.path() / "imgs" / "x" / "img_1.png").string();
  EXPECT_EQ(manifestLabel(dir.file("m.csv"), image), "dog");
  const auto done = relabelInManifest(dir.file("m.csv"), image, "dog", "cat");
  EXPECT_EQ(done.line, 4);
  EXPECT_EQ(done.before, "dog");
  EXPECT_EQ(readTextFile(dir.file("m.csv")),
            "path,label,note\r\nimgs/x/img_0.png,cat,\"a, b\"\r\n\r\nimgs/x/img_1.png,cat,c\r\n"
            "imgs/x/img_2.png,cat,d");
  const auto src = openSource(csvSpec(dir.file("m.csv")), {}, ErrorPolicy::Skip);
  EXPECT_EQ(src->classNames(), (std::vector<std::string>{"cat"}));
  // The last line, without a line end; then back.
  relabelInManifest(dir.file("m.csv"), (dir.path() / "imgs" / "x" / "img_2.png").string(), "cat",
                    "dog");
  const std::string relabelled = readTextFile(dir.file("m.csv"));
  EXPECT_EQ(relabelled.substr(relabelled.size() - 24), "\r\nimgs/x/img_2.png,dog,d");
  relabelInManifest(dir.file("m.csv"), (dir.path() / "imgs" / "x" / "img_2.png").string(), "dog",
                    "cat");
  relabelInManifest(dir.file("m.csv"), image, "cat", "dog");
  const std::string undone = readTextFile(dir.file("m.csv"));
  EXPECT_NE(undone.find("imgs/x/img_1.png,dog,c\r\n"), std::string::npos) << undone;
  // Refusals, each naming the manifest; nothing written.
  EXPECT_NE(errorOf([&] {
              relabelInManifest(dir.file("m.csv"), image, "cat", "bird");
            }).find("m.csv: line 4: the label is \"dog\", not \"cat\""),
            std::string::npos);
  EXPECT_NE(errorOf([&] {
              relabelInManifest(dir.file("m.csv"), dir.file("nope.png"), "dog", "x");
            }).find("no row names"),
            std::string::npos);
  EXPECT_NE(errorOf([&] {
              relabelInManifest(dir.file("m.csv"), image, "dog", "two\nlines");
            }).find("one non-empty line"),
            std::string::npos);
  EXPECT_EQ(readTextFile(dir.file("m.csv")), undone);
  std::filesystem::create_symlink(dir.file("m.csv"), dir.file("link.csv"));
  EXPECT_NE(errorOf([&] {
              relabelInManifest(dir.file("link.csv"), image, "dog", "cat");
            }).find("is a link"),
            std::string::npos);
  EXPECT_EQ(readTextFile(dir.file("m.csv")), undone);
}

// The move list of relabelled image-folder samples: one row per image (the latest move), a row
// removed by an empty target; quotes kept; a link refused.
TEST(ManifestEdit, TheMoveListKeepsOneRowPerImage) {
  TempDir dir;
  const std::string list = dir.file("moves.csv");
  EXPECT_EQ(setMove(list, "/d/cat/a.png", "/d/dog/a.png"), 1u);
  EXPECT_EQ(setMove(list, "/d/cat/b, 2.png", "/d/dog/b, 2.png"), 2u);
  EXPECT_EQ(setMove(list, "/d/cat/a.png", "/d/bird/a.png"), 2u);
  EXPECT_EQ(readTextFile(list),
            "from,to\n\"/d/cat/b, 2.png\",\"/d/dog/b, 2.png\"\n/d/cat/a.png,/d/bird/a.png\n");
  EXPECT_EQ(setMove(list, "/d/cat/a.png", ""), 1u);
  EXPECT_EQ(readTextFile(list), "from,to\n\"/d/cat/b, 2.png\",\"/d/dog/b, 2.png\"\n");
  std::filesystem::create_symlink(list, dir.file("link.csv"));
  EXPECT_NE(errorOf([&] { setMove(dir.file("link.csv"), "x", "y"); }).find("is a link"),
            std::string::npos);
}

TEST(DataConfig, ProblemsNameTheirPath) {
  Problems problems;
  parseDataConfig(
      Json::parse(R"({"train": {"format": "idxx", "images": "a"}, "validation": {"fraction": 1.5},
                                  "normalize": {"mean": [0.5]}, "fit": "stretch", "on_error": "ignore", "clases": []})"),
      "/base", problems);
  const auto text = formatProblems(problems);
  EXPECT_CONTAINS(text, "data.train.format: unknown format \"idxx\"");
  EXPECT_CONTAINS(text, "data.validation.fraction: must be a number in [0, 1), got 1.5");
  EXPECT_CONTAINS(text, "data.normalize: needs both \"mean\" and \"std\"");
  EXPECT_CONTAINS(text, "data.fit: must be \"resize\" or \"resize_crop\"");
  EXPECT_CONTAINS(text, "data.on_error: must be \"skip\" or \"fail\"");
  EXPECT_CONTAINS(text, "data: unknown key \"clases\"; did you mean \"classes\"?");
  Problems missing;
  parseDataConfig(Json::parse(R"({"train": {"format": "idx"}})"), "/base", missing);
  EXPECT_CONTAINS(formatProblems(missing), "data.train.images: missing");
  EXPECT_CONTAINS(formatProblems(missing), "data.train.labels: missing");
  Problems relative;
  const auto c =
      parseDataConfig(Json::parse(R"({"train": {"format": "image_folder", "root": "../imgs"}})"),
                      "/base/proj", relative);
  EXPECT_EQ(c.train.root, "/base/imgs");
}

// Every source format is read through its description (source_formats.h): its example parses,
// each of its keys is required and named when missing, an unknown key gets a "did you mean",
// paths are resolved against the project's folder, and sourcePaths lists what it names.
TEST(DataConfig, EachFormatIsCheckedAgainstItsDescription) {
  std::vector<std::string> names;
  for (const auto& def : sourceFormats())
    names.push_back(def.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"idx", "image_folder", "csv", "cifar10", "multilabel_csv",
                                      "regression_csv", "mask_folders", "yolo", "coco", "voc"}));
  for (const auto& def : sourceFormats()) {
    SCOPED_TRACE(def.name);
    Problems problems;
    const auto c = parseDataConfig(Json{{"train", def.example}}, "/base", problems);
    ASSERT_TRUE(problems.empty()) << formatProblems(problems);
    EXPECT_EQ(c.train.format, def.format);
    EXPECT_EQ(sourceFormatName(c.train.format), def.name);
    // What the example names, resolved by hand.
    std::vector<std::string> expected;
    for (const auto& field : def.fields) {
      const Json& v = def.example.at(field.key);
      for (const auto& item : v.is_array() ? v : Json::array({v}))
        expected.push_back("/base/" + item.get<std::string>());
    }
    EXPECT_EQ(sourcePaths(c.train), expected);
    for (const auto& field : def.fields) {
      Json without = def.example;
      without.erase(field.key);
      Problems missing;
      parseDataConfig(Json{{"train", without}}, "/base", missing);
      EXPECT_CONTAINS(formatProblems(missing), "data.train." + field.key + ": missing");
      Json typo = def.example;
      typo[field.key + "s"] = typo[field.key];
      Problems unknown;
      parseDataConfig(Json{{"test", typo}, {"train", def.example}}, "/base", unknown);
      EXPECT_CONTAINS(formatProblems(unknown), "data.test: unknown key \"" + field.key + "s\"");
      Json wrong = def.example;
      wrong[field.key] = 7;
      Problems typed;
      parseDataConfig(Json{{"train", wrong}}, "/base", typed);
      EXPECT_CONTAINS(formatProblems(typed), "data.train." + field.key + ": must be");
    }
  }
  Problems badList;
  parseDataConfig(Json::parse(R"({"train": {"format": "cifar10", "files": ["a.bin", ""]}})"),
                  "/base", badList);
  EXPECT_CONTAINS(formatProblems(badList), "data.train.files: must hold file names, got \"\"");
  // What `netsmith-cli formats --json` prints lists each format's keys and "limit".
  const Json all = sourceFormatsToJson();
  ASSERT_EQ(all.size(), sourceFormats().size());
  EXPECT_EQ(all[0]["keys"].size(), 3u);  // idx: images, labels, limit
  EXPECT_EQ(all[0]["keys"][1]["key"], "labels");
  EXPECT_EQ(all[1]["keys"][0]["kind"], "folder");
}

TEST(DatasetStats, MeanAndStdEqualADirectComputation) {
  TempDir dir;
  testutil::writeImageFolder(dir.path(), {"a", "b"}, 5, 7, 9, 3);
  const auto src = openSource(folderSpec(dir.path().string()), {}, ErrorPolicy::Skip);
  SampleSet set{"train", src, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}};
  const SampleProcessor proc({3, 7, 9, FitPolicy::Resize}, nullptr, {}, {});
  int calls = 0;
  const auto stats =
      computeChannelStats(set, proc, ErrorPolicy::Skip, [&](std::int64_t, std::int64_t) {
        ++calls;
        return true;
      });
  ASSERT_TRUE(stats);
  EXPECT_GT(calls, 0);
  // Direct: every pixel of every image, read straight from the PNGs.
  for (int c = 0; c < 3; ++c) {
    double sum = 0, sumSq = 0;
    int n = 0;
    for (int k = 0; k < 10; ++k) {
      const cv::Mat bgr = cv::imread(src->describe(k));
      for (int y = 0; y < bgr.rows; ++y) {
        for (int x = 0; x < bgr.cols; ++x) {
          const double v = bgr.at<cv::Vec3b>(y, x)[2 - c] / 255.0;
          sum += v;
          sumSq += v * v;
          ++n;
        }
      }
    }
    const double mean = sum / n;
    EXPECT_NEAR(stats->mean[static_cast<std::size_t>(c)], mean, 1e-6);
    EXPECT_NEAR(stats->std[static_cast<std::size_t>(c)], std::sqrt(sumSq / n - mean * mean), 1e-6);
  }
  // Cancellation returns nothing.
  EXPECT_FALSE(computeChannelStats(set, proc, ErrorPolicy::Skip,
                                   [](std::int64_t, std::int64_t) { return false; }));
}
