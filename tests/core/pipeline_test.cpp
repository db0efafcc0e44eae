// The augment section: bad entries name augment[i].param; training vs evaluation steps.
#include "augment/pipeline.h"

#include <opencv2/core.hpp>

#include "data/project_data.h"
#include "test_support.h"

using namespace netsmith;
using namespace netsmith::augment;

namespace {

std::string problemsOf(const std::string& json, int size = 28) {
  Problems problems;
  TransformContext ctx;
  ctx.height = ctx.width = size;
  Pipeline::fromJson(Json::parse(json), TransformRegistry::withBuiltins(), ctx, problems);
  return formatProblems(problems);
}

#define EXPECT_PROBLEM(json, expected)                         \
  do {                                                         \
    const auto text = problemsOf(json);                        \
    EXPECT_NE(text.find(expected), std::string::npos) << text; \
  } while (0)

}  // namespace

TEST(Pipeline, BadEntriesNameTheirPath) {
  EXPECT_PROBLEM(R"([{"transform": "HorizontalFlip", "p": -0.5}])",
                 "augment[0].p: must be a probability in [0, 1], got -0.5");
  EXPECT_PROBLEM(
      R"([{"transform": "HorizontalFlip"}, {"transform": "HorizantalFlip"}])",
      R"(augment[1].transform: unknown transform "HorizantalFlip"; did you mean "HorizontalFlip"?)");
  EXPECT_PROBLEM(R"([{"transform": "RandomCrop", "size": 32, "padding": 0}])",
                 "augment[0].size: 32x32 is larger than the 28x28 input");
  EXPECT_PROBLEM(R"([{"transform": "RandomCrop", "padding": -1}])",
                 "augment[0].padding: must be >= 0");
  EXPECT_PROBLEM(R"([{"transform": "GaussianBlur", "kernel_size": 4}])",
                 "augment[0].kernel_size: must be odd");
  EXPECT_PROBLEM(R"([{"transform": "ColorJitter", "brightnes": 0.2}])",
                 R"(augment[0].brightnes: is not known; did you mean "brightness"?)");
  EXPECT_PROBLEM(R"([{"transform": "MixUp", "alpha": 0}])", "augment[0].alpha: must be > 0");
  EXPECT_PROBLEM(R"([{"transform": "HorizontalFlip", "enabled": "yes"}])",
                 "augment[0].enabled: must be true or false");
  EXPECT_PROBLEM(R"([{"name": "HorizontalFlip"}])",
                 "augment[0]: must be an object with a \"transform\" name");
  EXPECT_PROBLEM(R"({"transform": "HorizontalFlip"})", "augment: must be a list");
  EXPECT_PROBLEM(R"([{"transform": "Normalize", "mean": [0.1, 0.2], "std": 1}])",
                 "augment[0].mean: has 2 values but the model input has 1 channel(s)");
}

TEST(Pipeline, TrainingRunsEveryEnabledStepEvaluationOnlyDeterministicOnes) {
  Problems problems;
  TransformContext ctx;
  ctx.height = ctx.width = 8;
  const auto p = Pipeline::fromJson(Json::parse(R"([
      {"transform": "HorizontalFlip", "p": 1.0},
      {"transform": "VerticalFlip", "p": 1.0, "enabled": false},
      {"transform": "Normalize", "mean": 0.5, "std": 0.5},
      {"transform": "CutMix", "alpha": 1.0, "p": 0.5}])"),
                                    TransformRegistry::withBuiltins(), ctx, problems);
  ASSERT_TRUE(problems.empty()) << formatProblems(problems);
  EXPECT_EQ(p.describe(), "HorizontalFlip, Normalize, CutMix(alpha=1)");
  ASSERT_EQ(p.batchMixes().size(), 1u);
  EXPECT_DOUBLE_EQ(p.batchMixes()[0].probability, 0.5);
  EXPECT_TRUE(p.hasNormalize());
  cv::Mat img(8, 8, CV_32F);
  for (int y = 0; y < 8; ++y) {
    for (int x = 0; x < 8; ++x)
      img.at<float>(y, x) = float(x) / 8.0f;
  }
  cv::Mat train = img.clone(), eval = img.clone(), display = img.clone();
  SampleRng rng(1);
  p.apply(train, &rng);
  p.apply(eval, nullptr);
  SampleRng rng2(1);
  p.apply(display, &rng2, /*stopBeforeNormalize=*/true);
  // Training: flipped then normalised; evaluation: only normalised; display: flipped only.
  EXPECT_FLOAT_EQ(train.at<float>(0, 0), (7.0f / 8 - 0.5f) / 0.5f);
  EXPECT_FLOAT_EQ(eval.at<float>(0, 0), (0.0f - 0.5f) / 0.5f);
  EXPECT_FLOAT_EQ(display.at<float>(0, 0), 7.0f / 8);
  EXPECT_FLOAT_EQ(display.at<float>(3, 7), 0.0f);
}

TEST(Pipeline, ProjectValidationCoversDataAndAugment) {
  const auto loaded = project::parseProject(R"({"format": "netsmith-project", "version": 1,
      "model": {"input": {"channels": 3, "height": 32, "width": 32}, "nodes": [{"id": "input", "op": "Input"}]},
      "data": {"train": {"format": "image_folder"}, "normalize": {"mean": [0.5, 0.5], "std": [0.2, 0.2, 0.2]}},
      "augment": [{"transform": "RandomResizedCrop", "scale": [0.9, 0.1]}]})",
                                            "p.netsmith.json");
  const auto text = formatProblems(
      data::validateDataSections(loaded.project, "/tmp", TransformRegistry::withBuiltins()));
  EXPECT_NE(text.find("data.train.root: missing"), std::string::npos) << text;
  EXPECT_NE(text.find("data.normalize.mean: has 2 values but the model input has 3 channel(s)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("augment[0].scale: expects low <= high"), std::string::npos) << text;
  // A model design without data is fine.
  const auto design = project::parseProject(R"({"format": "netsmith-project", "version": 1,
      "model": {"input": {"channels": 1, "height": 8, "width": 8}, "nodes": [{"id": "input", "op": "Input"}]}})",
                                            "d");
  EXPECT_TRUE(
      data::validateDataSections(design.project, "", TransformRegistry::withBuiltins()).empty());
}

// The loader runs leading crops, flips and resizes on the decoded bytes (as torchvision does on
// PIL images) and the rest on floats. The draws must be the very same as on the float path: a
// different crop or flip would differ by far more than the bytes' rounding.
TEST(Pipeline, LeadingGeometryOnBytesDrawsAsTheFloatPathDoes) {
  Problems problems;
  TransformContext ctx;
  ctx.channels = 3;
  ctx.height = ctx.width = 24;
  const auto p = Pipeline::fromJson(Json::parse(R"([
      {"transform": "RandomResizedCrop"},
      {"transform": "HorizontalFlip"},
      {"transform": "ColorJitter", "brightness": 0.4, "contrast": 0.4, "saturation": 0.4},
      {"transform": "VerticalFlip"}])"),
                                    TransformRegistry::withBuiltins(), ctx, problems);
  ASSERT_TRUE(problems.empty()) << formatProblems(problems);
  cv::Mat bytes(40, 60, CV_8UC3);
  for (int y = 0; y < bytes.rows; ++y) {
    for (int x = 0; x < bytes.cols; ++x)
      bytes.at<cv::Vec3b>(y, x) = cv::Vec3b(uchar(4 * x), uchar(6 * y), uchar(2 * (x + y)));
  }
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    cv::Mat floats;
    bytes.convertTo(floats, CV_32F, 1.0 / 255.0);
    SampleRng rngFloat(seed);
    p.apply(floats, &rngFloat);

    cv::Mat lead = bytes.clone();
    SampleRng rngBytes(seed);
    const std::size_t next = p.applyLeading(lead, &rngBytes);
    EXPECT_EQ(next, 2u);  // ColorJitter works on floats only: the flip after it waits too
    EXPECT_EQ(lead.type(), CV_8UC3);
    EXPECT_EQ(lead.size(), cv::Size(24, 24));
    cv::Mat rest;
    lead.convertTo(rest, CV_32F, 1.0 / 255.0);
    p.apply(rest, &rngBytes, false, next);
    ASSERT_EQ(rest.size(), floats.size());
    // Bilinear resampling in bytes rounds to 1/255; jitter can stretch that a little.
    EXPECT_LT(cv::norm(rest, floats, cv::NORM_INF), 3.0 / 255.0) << "seed " << seed;
  }
  // Evaluation: non-deterministic steps are skipped, so a leading Resize still runs on bytes.
  const auto eval = Pipeline::fromJson(Json::parse(R"([
      {"transform": "RandomResizedCrop"}, {"transform": "CenterCrop", "size": 20},
      {"transform": "Normalize", "mean": 0.5, "std": 0.5}])"),
                                       TransformRegistry::withBuiltins(), ctx, problems);
  ASSERT_TRUE(problems.empty()) << formatProblems(problems);
  cv::Mat centre = bytes.clone();
  EXPECT_EQ(eval.applyLeading(centre, nullptr), 2u);
  EXPECT_EQ(centre.size(), cv::Size(20, 20));
  EXPECT_EQ(centre.at<cv::Vec3b>(0, 0), bytes.at<cv::Vec3b>(10, 20));
}
