// Segmentation's data and figures: images and masks paired by stem over real files (every
// mismatch named, skipped or fatal), grey and palette PNG masks, masks moved with their images
// by the geometric transforms and by CutMix, and the task's figures and loss against values
// worked out here by hand.
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <zlib.h>

#include <cmath>
#include <fstream>

#include "augment/transform.h"
#include "data/data_loader.h"
#include "data/data_scan.h"
#include "data/dataset_source.h"
#include "data/sample_processor.h"
#include "data_fixtures.h"
#include "graph/model_graph.h"
#include "ops/op_registry.h"
#include "project/project.h"
#include "registries/registries.h"
#include "task/segmentation.h"
#include "test_support.h"

using namespace netsmith;
using namespace netsmith::data;
using testutil::TempDir;
namespace fs = std::filesystem;

namespace {

#define EXPECT_CONTAINS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

SourceSpec maskSpec(const TempDir& dir) {
  SourceSpec s;
  s.format = SourceFormat::MaskFolders;
  s.path = "data.train";
  s.images = dir.file("images");
  s.masks = dir.file("masks");
  return s;
}

/// An image whose grey level is 40 x the class of its mask at every pixel, so a mask moved with
/// its image can be checked pixel by pixel.
void writePair(const TempDir& dir, const std::string& stem, const cv::Mat& mask) {
  cv::Mat image = mask * 40;
  cv::imwrite(dir.file("images/" + stem + ".png"), image);
  cv::imwrite(dir.file("masks/" + stem + ".png"), mask);
}

/// A mask with class c in column block c (w / classes wide).
cv::Mat stripes(int h, int w, int classes) {
  cv::Mat m(h, w, CV_8UC1);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      m.at<uchar>(y, x) = static_cast<uchar>(x * classes / w);
  return m;
}

void putBigEndian32(std::string& out, std::uint32_t v) {
  for (int s = 24; s >= 0; s -= 8)
    out += static_cast<char>((v >> s) & 0xFF);
}

void chunk(std::string& png, const char* type, const std::string& data) {
  putBigEndian32(png, static_cast<std::uint32_t>(data.size()));
  const std::string body = std::string(type, 4) + data;
  png += body;
  putBigEndian32(png, static_cast<std::uint32_t>(crc32(
                          0, reinterpret_cast<const Bytef*>(body.data()), uInt(body.size()))));
}

/// A palette PNG (colour type 3; or grey, type 0, when `palette` is empty) of `indices` at
/// `depth` bits per pixel, written by hand: OpenCV writes no palette or 1-bit PNGs. Rows use
/// filter 1 (sub) from the second on, so the reader's unfiltering is exercised.
void writePalettePng(const std::string& path, const cv::Mat& indices,
                     const std::vector<cv::Vec3b>& palette, int depth = 8) {
  std::string png("\x89PNG\r\n\x1a\n", 8);
  std::string ihdr;
  putBigEndian32(ihdr, std::uint32_t(indices.cols));
  putBigEndian32(ihdr, std::uint32_t(indices.rows));
  ihdr += char(depth);
  ihdr += char(palette.empty() ? 0 : 3);
  ihdr += std::string("\x00\x00\x00", 3);
  chunk(png, "IHDR", ihdr);
  if (!palette.empty()) {
    std::string plte;
    for (const auto& c : palette)
      plte += std::string{char(c[0]), char(c[1]), char(c[2])};
    chunk(png, "PLTE", plte);
  }
  std::string raw;
  const int perByte = 8 / depth;
  const std::size_t rowBytes = (std::size_t(indices.cols) * std::size_t(depth) + 7) / 8;
  for (int y = 0; y < indices.rows; ++y) {
    std::string row(rowBytes, '\0');
    for (int x = 0; x < indices.cols; ++x)
      row[std::size_t(x / perByte)] =
          char(uchar(row[std::size_t(x / perByte)]) |
               (indices.at<uchar>(y, x) << (8 - depth * (1 + x % perByte))));
    const bool sub = y > 0;
    raw += char(sub ? 1 : 0);
    for (std::size_t i = 0; i < rowBytes; ++i)
      raw += char(uchar(row[i]) - (sub && i > 0 ? uchar(row[i - 1]) : 0));
  }
  uLongf size = compressBound(uLong(raw.size()));
  std::string z(size, '\0');
  compress(reinterpret_cast<Bytef*>(z.data()), &size, reinterpret_cast<const Bytef*>(raw.data()),
           uLong(raw.size()));
  z.resize(size);
  chunk(png, "IDAT", z);
  chunk(png, "IEND", "");
  std::ofstream(path, std::ios::binary) << png;
}

augment::Pipeline pipelineOf(const std::string& json, int size) {
  augment::TransformContext ctx;
  ctx.channels = 1;
  ctx.height = ctx.width = size;
  ctx.mean = {0.0};
  ctx.std = {1.0};
  ctx.pixelTargets = true;
  Problems problems;
  auto p = augment::Pipeline::fromJson(Json::parse(json),
                                       augment::TransformRegistry::withBuiltins(), ctx, problems);
  EXPECT_TRUE(problems.empty()) << formatProblems(problems);
  return p;
}

/// The mask a batch image shows (its grey level / 40), for pixels of the image's own classes.
torch::Tensor classesOfImage(const torch::Tensor& images) {
  return (images.squeeze(1) * 255.0 / 40.0).round().to(torch::kLong);
}

const std::vector<std::string> kThree{"bg", "a", "b"};

}  // namespace

TEST(MaskFolderSource, PairsByStemAndNamesEveryMismatch) {
  TempDir dir;
  fs::create_directories(dir.path() / "images");
  fs::create_directories(dir.path() / "masks");
  writePair(dir, "a", stripes(6, 6, 3));
  writePair(dir, "b", stripes(6, 6, 3));
  cv::imwrite(dir.file("images/lonely.png"), cv::Mat::zeros(6, 6, CV_8UC1));
  cv::imwrite(dir.file("masks/orphan.png"), cv::Mat::zeros(6, 6, CV_8UC1));
  std::ofstream(dir.file("images/notes.txt")) << "x";

  const auto source = openSource(maskSpec(dir), kThree, ErrorPolicy::Skip);
  ASSERT_EQ(source->size(), 2);
  EXPECT_TRUE(source->hasMasks());
  EXPECT_EQ(source->label(0), -1);
  EXPECT_EQ(source->numStrata(), 1);
  EXPECT_EQ(source->classNames(), kThree);
  std::string skipped;
  for (const auto& s : source->skippedAtScan())
    skipped += s.item + ": " + s.reason + "\n";
  EXPECT_CONTAINS(skipped, "lonely.png: no mask lonely.png in");
  EXPECT_CONTAINS(skipped, "orphan.png: no image named orphan in");
  EXPECT_CONTAINS(skipped, "notes.txt: not an image file");
  const cv::Mat mask = source->loadMask(1);
  EXPECT_EQ(cv::countNonZero(mask != stripes(6, 6, 3)), 0);

  const std::string fatal =
      testutil::errorOf([&] { openSource(maskSpec(dir), kThree, ErrorPolicy::Fail); });
  EXPECT_CONTAINS(fatal, "no mask lonely.png");
  EXPECT_CONTAINS(fatal, "data.on_error is \"fail\"");
  EXPECT_CONTAINS(testutil::errorOf([&] { openSource(maskSpec(dir), {}, ErrorPolicy::Skip); }),
                  "set data.classes");
}

TEST(MaskFolderSource, ValuesThatAreNoClassAndOtherSizesAreNamed) {
  TempDir dir;
  fs::create_directories(dir.path() / "images");
  fs::create_directories(dir.path() / "masks");
  cv::Mat bad = stripes(6, 6, 3);
  bad.at<uchar>(4, 2) = 7;
  bad.at<uchar>(0, 0) = 255;  // ignore: fine
  writePair(dir, "a", bad);
  cv::imwrite(dir.file("images/b.png"), cv::Mat::zeros(8, 8, CV_8UC1));
  cv::imwrite(dir.file("masks/b.png"), cv::Mat::zeros(6, 6, CV_8UC1));
  cv::Mat rgb(6, 6, CV_8UC3, cv::Scalar(1, 2, 3));
  cv::imwrite(dir.file("images/c.png"), cv::Mat::zeros(6, 6, CV_8UC1));
  cv::imwrite(dir.file("masks/c.png"), rgb);
  const auto source = openSource(maskSpec(dir), kThree, ErrorPolicy::Skip);
  ASSERT_EQ(source->size(), 3);
  EXPECT_CONTAINS(testutil::errorOf([&] { source->loadMask(0); }),
                  "a.png: pixel (2, 4) has the value 7, which is no class (data.classes has 3");
  EXPECT_CONTAINS(testutil::errorOf([&] { source->loadMask(2); }),
                  "c.png: a mask must have one channel");

  const SampleSet set{"train", source, {0, 1, 2}};
  const SampleProcessor proc({1, 6, 6, FitPolicy::Resize}, nullptr, {}, {});
  std::vector<float> image(36);
  std::vector<std::uint8_t> mask(36);
  EXPECT_CONTAINS(
      testutil::errorOf([&] { proc.process(set, 1, false, 0, 0, image.data(), mask.data()); }),
      "b.png: the image is 8x8 but its mask is 6x6");
}

TEST(MaskFiles, PalettePngsGiveTheirIndicesAndGreyPngsTheirValues) {
  TempDir dir;
  cv::Mat indices(4, 5, CV_8UC1);
  for (int i = 0; i < 20; ++i)
    indices.at<uchar>(i / 5, i % 5) = static_cast<uchar>(i % 4 == 3 ? 255 : i % 4);
  // Pascal VOC's first colours; index 255 is (224, 224, 192).
  std::vector<cv::Vec3b> palette(256, cv::Vec3b(9, 9, 9));
  palette[0] = {0, 0, 0};
  palette[1] = {128, 0, 0};
  palette[2] = {0, 128, 0};
  palette[255] = {224, 224, 192};
  for (int k = 3; k < 255; ++k)
    palette[std::size_t(k)] = cv::Vec3b(uchar(k), uchar(255 - k), uchar(k / 2));
  writePalettePng(dir.file("voc.png"), indices, palette);
  const cv::Mat read = decodeMaskFile(dir.file("voc.png"));
  ASSERT_EQ(read.type(), CV_8UC1);
  EXPECT_EQ(cv::countNonZero(read != indices), 0);

  // A palette whose colours repeat (padded with black, as many writers do) and a 4-bit one:
  // the indices come back, not the first index of each colour.
  std::vector<cv::Vec3b> padded(5, cv::Vec3b(0, 0, 0));
  padded[1] = {128, 0, 0};
  cv::Mat small(3, 5, CV_8UC1);
  for (int i = 0; i < 15; ++i)
    small.at<uchar>(i / 5, i % 5) = static_cast<uchar>(i % 5);
  writePalettePng(dir.file("padded.png"), small, padded, 4);
  EXPECT_EQ(cv::countNonZero(decodeMaskFile(dir.file("padded.png")) != small), 0);
  // An index past the palette's end is named, not read as black.
  writePalettePng(dir.file("short.png"), small, {padded.begin(), padded.begin() + 3});
  EXPECT_CONTAINS(testutil::errorOf([&] { decodeMaskFile(dir.file("short.png")); }),
                  "has the palette index 3 but the palette has 3 colours");
  // A 1-bit grey mask keeps its 0 and 1 (OpenCV alone would stretch 1 to 255, "ignore").
  cv::Mat binary = small > 2;
  binary /= 255;
  writePalettePng(dir.file("binary.png"), binary, {}, 1);
  EXPECT_EQ(cv::countNonZero(decodeMaskFile(dir.file("binary.png")) != binary), 0);

  cv::imwrite(dir.file("grey.png"), indices);
  EXPECT_EQ(cv::countNonZero(decodeMaskFile(dir.file("grey.png")) != indices), 0);
  cv::Mat wide(3, 3, CV_16UC1, cv::Scalar(300));
  cv::imwrite(dir.file("wide.png"), wide);
  EXPECT_CONTAINS(testutil::errorOf([&] { decodeMaskFile(dir.file("wide.png")); }),
                  "a 16-bit mask with the value 300");
  std::ofstream(dir.file("cut.png"), std::ios::binary) << std::string("\x89PNG\r\n\x1a\n", 8);
  EXPECT_CONTAINS(testutil::errorOf([&] { decodeMaskFile(dir.file("cut.png")); }), "cut.png");
}

// Bytes of a format no image folder takes never reach OpenCV's decoders: a DICOM file named .png
// (GDCM, inside imdecode, aborts the process on a bad one; found by fuzz_jpeg).
TEST(MaskFiles, OtherFormatsAreRefusedBeforeAnyDecoder) {
  TempDir dir;
  std::string dicom(128, '\0');
  dicom += "DICM";
  dicom += std::string("\x02\x00\x10\x00UI\x14\x00", 8) + std::string(20, '1');
  std::ofstream(dir.file("scan.png"), std::ios::binary) << dicom;
  EXPECT_CONTAINS(testutil::errorOf([&] { decodeMaskFile(dir.file("scan.png")); }),
                  "scan.png: not a readable image (by its first bytes not a PNG");
  EXPECT_CONTAINS(testutil::errorOf([&] { decodeImageFile(dir.file("scan.png")); }),
                  "scan.png: not a readable image (by its first bytes not a PNG");
  cv::imwrite(dir.file("real.bmp"), cv::Mat::zeros(3, 3, CV_8UC1));
  EXPECT_CONTAINS(testutil::errorOf([&] { decodeMaskFile(dir.file("real.bmp")); }),
                  "real.bmp: a mask must be a PNG file");
  EXPECT_EQ(decodeImageFile(dir.file("real.bmp")).rows, 3);
}

TEST(MaskTargets, GeometricStepsAndCutMixMoveTheMaskWithTheImage) {
  TempDir dir;
  fs::create_directories(dir.path() / "images");
  fs::create_directories(dir.path() / "masks");
  for (int i = 0; i < 8; ++i) {
    cv::Mat m = stripes(16, 16, 3);
    cv::rotate(m, m, i % 2 ? cv::ROTATE_90_CLOCKWISE : cv::ROTATE_180);
    writePair(dir, "s" + std::to_string(i), m);
  }
  const auto source = openSource(maskSpec(dir), kThree, ErrorPolicy::Fail);
  SampleSet set{"train", source, {0, 1, 2, 3, 4, 5, 6, 7}};
  // Exact geometry (no interpolation): flips, crops with padding (filled with 0 in the image
  // and 255 in the mask), 90-degree-free so every moved pixel keeps its value.
  const auto pipeline = pipelineOf(
      R"([{"transform": "HorizontalFlip", "p": 0.5}, {"transform": "VerticalFlip", "p": 0.5},
          {"transform": "RandomCrop", "size": 16, "padding": 3},
          {"transform": "CutMix", "alpha": 1.0, "p": 1.0}])",
      16);
  const SampleProcessor proc({1, 16, 16, FitPolicy::Resize}, &pipeline, {}, {});
  task::TaskSetup setup;
  setup.dataClasses = 3;
  setup.outputShape = {3, 16, 16};
  auto seg = std::make_shared<task::SegmentationTask>(setup);
  LoaderOptions o;
  o.batchSize = 8;
  o.workers = 2;
  o.seed = 5;
  o.collator = seg;
  o.mixes = pipeline.batchMixes();
  ASSERT_EQ(o.mixes.size(), 1u);
  DataLoader loader(set, proc, o);
  LoaderOptions unmixed = o;
  unmixed.mixes.clear();
  DataLoader plain(set, proc, unmixed);
  bool moved = false, pasted = false;
  for (std::int64_t epoch = 0; epoch < 3; ++epoch) {
    loader.startEpoch(epoch);
    plain.startEpoch(epoch);
    while (auto batch = loader.next()) {
      // The same samples and draws without CutMix: the masks differ only where a box was pasted.
      const auto alone = plain.next();
      ASSERT_TRUE(alone.has_value());
      pasted = pasted || !torch::equal(alone->target, batch->target);
      ASSERT_EQ(batch->target.sizes(), (std::vector<std::int64_t>{8, 16, 16}));
      ASSERT_EQ(batch->target.scalar_type(), torch::kLong);
      const auto fromImage = classesOfImage(batch->images);
      const auto padded = batch->target.eq(255);
      // Every pixel: the image's class is the mask's, or the mask is 255 where padding came in.
      EXPECT_TRUE(fromImage.eq(batch->target)
                      .logical_or(padded.logical_and(fromImage.eq(0)))
                      .all()
                      .item<bool>());
      moved = moved || padded.any().item<bool>();
    }
  }
  EXPECT_TRUE(moved);   // the crops did bring padding in
  EXPECT_TRUE(pasted);  // and CutMix pasted boxes of other masks
}

TEST(MaskTargets, MixUpIsRefusedWhereMasksMoveWithTheImage) {
  augment::TransformContext ctx;
  ctx.pixelTargets = true;
  Problems problems;
  augment::Pipeline::fromJson(Json::parse(R"([{"transform": "MixUp"}, {"transform": "CutMix"}])"),
                              augment::TransformRegistry::withBuiltins(), ctx, problems);
  ASSERT_EQ(problems.size(), 1u) << formatProblems(problems);
  EXPECT_EQ(problems[0].path, "augment[0].transform");
  EXPECT_CONTAINS(problems[0].message, "MixUp moves or mixes pixels but cannot move a mask");
}

TEST(SegmentationTask, FiguresFromThePixelConfusionWorkedByHand) {
  task::TaskSetup setup;
  setup.dataClasses = 4;
  setup.outputShape = {4, 2, 3};
  task::SegmentationTask seg(setup);
  // Truth and prediction of one 2x3 image; class 3 is absent from both (left out of the means),
  // the 255 pixel is ignored whatever is predicted there.
  const auto truth = torch::tensor({0, 0, 1, 1, 2, 255}, torch::kLong).view({1, 2, 3});
  const auto predicted = torch::tensor({0, 1, 1, 1, 0, 2}, torch::kLong).view({1, 2, 3});
  const auto logits = torch::one_hot(predicted, 4).permute({0, 3, 1, 2}).to(torch::kFloat) * 10.0;
  auto sums = seg.evalSums();
  sums->add(logits, truth);
  const auto m = sums->finish();
  // class 0: TP 1, FP 1 (the 2 predicted 0), FN 1 (a 0 predicted 1) -> IoU 1/3, Dice 2/4
  // class 1: TP 2, FP 1, FN 0 -> IoU 2/3, Dice 4/5
  // class 2: TP 0, FP 0 (the ignored pixel), FN 1 -> IoU 0, Dice 0
  EXPECT_NEAR(m.perClass.at("iou")[0], 1.0 / 3, 1e-12);
  EXPECT_NEAR(m.perClass.at("iou")[1], 2.0 / 3, 1e-12);
  EXPECT_EQ(m.perClass.at("iou")[2], 0.0);
  EXPECT_TRUE(std::isnan(m.perClass.at("iou")[3]));
  EXPECT_NEAR(m.figures.at("miou"), (1.0 / 3 + 2.0 / 3 + 0) / 3, 1e-12);
  EXPECT_NEAR(m.figures.at("dice"), (0.5 + 0.8 + 0) / 3, 1e-12);
  EXPECT_NEAR(m.figures.at("pixel_accuracy"), 3.0 / 5, 1e-12);
  EXPECT_EQ(m.confusion[0], (std::vector<std::int64_t>{1, 1, 0, 0}));
  EXPECT_EQ(m.confusion[2], (std::vector<std::int64_t>{1, 0, 0, 0}));
  EXPECT_NEAR(m.perClass.at("pixel_share")[1], 2.0 / 5, 1e-12);
  // Two processes' sums add up to the same figures as one pass over both.
  auto other = seg.evalSums();
  other->add(logits, truth);
  auto both = sums->sums();
  const auto more = other->sums();
  for (std::size_t i = 0; i < both.size(); ++i)
    both[i] += more[i];
  sums->setSums(both);
  EXPECT_NEAR(sums->finish().figures.at("miou"), m.figures.at("miou"), 1e-12);
  EXPECT_EQ(sums->finish().samples, 2);
  // The Evaluation page's view of the sample: its masks as given, its IoU that of the one image
  // (the same mean as above), the 255 pixel kept as 255.
  const auto views = seg.describeSamples(logits, truth);
  ASSERT_EQ(views.size(), 1u);
  EXPECT_EQ(views[0].height, 2);
  EXPECT_EQ(views[0].width, 3);
  EXPECT_EQ(views[0].trueMask, (std::vector<std::uint8_t>{0, 0, 1, 1, 2, 255}));
  EXPECT_EQ(views[0].predictedMask, (std::vector<std::uint8_t>{0, 1, 1, 1, 0, 2}));
  EXPECT_NEAR(views[0].score, (1.0 / 3 + 2.0 / 3 + 0) / 3, 1e-12);
  // An image whose every pixel is ignored has no IoU.
  const auto ignored = seg.describeSamples(logits, torch::full({1, 2, 3}, 255, torch::kLong));
  EXPECT_TRUE(std::isnan(ignored.at(0).score));
}

TEST(SegmentationTask, LossesLeaveIgnoredPixelsOut) {
  task::TaskSetup setup;
  setup.dataClasses = 2;
  const auto target = torch::tensor({0, 1, 255, 1}, torch::kLong).view({1, 2, 2});
  auto logits = torch::zeros({1, 2, 2, 2});
  // Right and sure on every pixel but the ignored one, where it is sure of class 1 (not 0,
  // the value an ignored pixel's one-hot would fall back to).
  logits.index_put_({0, 0, 0, 0}, 20.0);
  logits.index_put_({0, 1, 0, 1}, 20.0);
  logits.index_put_({0, 1, 1, 0}, 20.0);
  logits.index_put_({0, 1, 1, 1}, 20.0);
  for (const char* loss : {"cross_entropy", "dice", "ce_dice"}) {
    setup.loss = loss;
    task::SegmentationTask seg(setup);
    EXPECT_LT(seg.loss(logits, target, {}).item<double>(), 1e-3) << loss;
    // The same logits against a wrong class where it counts cost something.
    const auto wrong = torch::tensor({1, 1, 255, 1}, torch::kLong).view({1, 2, 2});
    EXPECT_GT(seg.loss(logits, wrong, {}).item<double>(), 0.1) << loss;
  }
  setup.loss = "mse";
  EXPECT_CONTAINS(testutil::errorOf([&] { task::SegmentationTask{setup}; }),
                  "train.loss: the segmentation task takes");
  // Every pixel ignored: no loss rather than NaN.
  setup.loss = "";
  task::SegmentationTask seg(setup);
  const auto ignored = torch::full({1, 2, 2}, 255, torch::kLong);
  EXPECT_EQ(seg.loss(logits, ignored, {}).item<double>(), 0.0);
}

// The Data page's scan of mask data: class pixels counted over the training masks as written
// here, a mask that cannot be read skipped and left out of the counts (as training leaves it),
// or fatal under on_error "fail".
TEST(MaskFolderSource, TheDataScanCountsClassPixelsAndSkipsUnreadableMasks) {
  TempDir dir;
  fs::create_directories(dir.path() / "images");
  fs::create_directories(dir.path() / "masks");
  cv::Mat one = stripes(6, 6, 3);
  one.at<uchar>(0, 0) = 255;  // ignored
  writePair(dir, "a", one);
  writePair(dir, "b", stripes(6, 6, 3));
  cv::Mat bad = stripes(6, 6, 3);
  bad.at<uchar>(1, 1) = 9;
  writePair(dir, "c", bad);
  const auto projectWith = [&dir](const std::string& onError) {
    project::Project p;
    p.name = "scan";
    p.task = "segmentation";
    p.model.input = {1, 6, 6};
    p.data = Json{{"train", Json{{"format", "mask_folders"},
                                 {"images", dir.file("images")},
                                 {"masks", dir.file("masks")}}},
                  {"classes", kThree},
                  {"normalize", "none"},
                  {"on_error", onError}};
    return p;
  };
  data::DataScanOptions options;
  options.samplesPerClass = 2;
  options.targetStatistics = Registries::builtins()->tasks.statisticsOf("segmentation");
  const auto s = data::scanProjectData(projectWith("skip"), dir.path().string(),
                                       Registries::builtins()->transforms, options);
  EXPECT_EQ(s.train, 2);
  ASSERT_EQ(s.skipped.size(), 1u);
  EXPECT_CONTAINS(s.skipped[0].item + ": " + s.skipped[0].reason, "c.png");
  EXPECT_CONTAINS(s.skipped[0].reason, "the value 9");
  // Two readable masks of 12 pixels per class (2 columns x 6 rows), one pixel ignored.
  EXPECT_FALSE(s.oneClassPerSample);
  ASSERT_TRUE(s.targetSummary);
  EXPECT_EQ(s.targetSummary->jsonKey, "pixels");
  EXPECT_EQ(s.targetSummary->json["train"], Json::parse(R"({"bg": 23, "a": 24, "b": 24})"));
  EXPECT_EQ(s.targetSummary->json["ignored"], 1);
  // Each sample shown with its mask over it and the mask's classes as its caption.
  ASSERT_EQ(s.samples.size(), 2u);
  EXPECT_EQ(s.samples[0].channels(), 3);
  EXPECT_EQ(s.sampleLabels[0], -1);
  EXPECT_CONTAINS(s.sampleCaptions[0], "a ");
  EXPECT_CONTAINS(testutil::errorOf([&] {
                    data::scanProjectData(projectWith("fail"), dir.path().string(),
                                          Registries::builtins()->transforms, options);
                  }),
                  "c.png");
}
