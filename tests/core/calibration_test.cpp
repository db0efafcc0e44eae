// Calibration figures on hand-worked samples, and temperature scaling recovering the
// temperature that made the labels.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <random>

#include "eval/calibration.h"
#include "eval/precision_recall.h"
#include "test_support.h"

namespace netsmith {
namespace {

TEST(Calibration, BinsEceAndMceByHand) {
  // Bin edges are right-closed: 1/15 goes in the first bin, a hair above it in the second.
  EXPECT_EQ(eval::calibrationBin(0.0), 0);
  EXPECT_EQ(eval::calibrationBin(1.0 / 15), 0);
  EXPECT_EQ(eval::calibrationBin(1.0 / 15 + 1e-9), 1);
  EXPECT_EQ(eval::calibrationBin(1.0), 14);
  eval::CalibrationCounter c;
  // Bin 14 (0.95, 0.98): one right, one wrong -> accuracy 0.5, confidence 0.965.
  c.add(0.95, true);
  c.add(0.98, false);
  // Bin 7 ((7/15, 8/15]): 0.5 right -> gap 0.5.
  c.add(0.5, true);
  // Bin 2: 0.2, wrong -> gap 0.2.
  c.add(0.2, false);
  const auto cal = c.finish();
  EXPECT_EQ(cal.samples, 4);
  EXPECT_EQ(cal.bins.size(), 15u);
  EXPECT_EQ(cal.bins[14].count, 2);
  EXPECT_NEAR(cal.bins[14].confidence, 0.965, 1e-12);
  EXPECT_NEAR(cal.bins[14].accuracy, 0.5, 1e-12);
  EXPECT_TRUE(std::isnan(cal.bins[0].accuracy));
  const double ece = 2.0 / 4 * 0.465 + 1.0 / 4 * 0.5 + 1.0 / 4 * 0.2;
  EXPECT_NEAR(cal.ece, ece, 1e-12);
  EXPECT_NEAR(cal.mce, 0.5, 1e-12);
}

TEST(Calibration, TemperatureScalingRecoversTheTemperatureThatMadeTheLabels) {
  // Labels drawn from softmax(z / 2.5): the fitted temperature is near 2.5, lowers the NLL and
  // the ECE.
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0, 4);
  const std::int64_t n = 20000, k = 5;
  std::vector<float> logits(std::size_t(n * k));
  std::vector<std::int64_t> labels(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    std::vector<double> p(static_cast<std::size_t>(k));
    double sum = 0;
    for (std::int64_t c = 0; c < k; ++c) {
      logits[std::size_t(i * k + c)] = normal(rng);
      p[std::size_t(c)] = std::exp(logits[std::size_t(i * k + c)] / 2.5);
      sum += p[std::size_t(c)];
    }
    std::uniform_real_distribution<double> u(0, sum);
    double r = u(rng);
    std::int64_t y = 0;
    while (y < k - 1 && r > p[std::size_t(y)])
      r -= p[std::size_t(y++)];
    labels[std::size_t(i)] = y;
  }
  const auto fit = eval::fitTemperature(logits, k, labels);
  EXPECT_NEAR(fit.temperature, 2.5, 0.15);
  EXPECT_LT(fit.nllAfter, fit.nllBefore);
  EXPECT_LT(fit.eceAfter, fit.eceBefore);
  EXPECT_LT(fit.eceAfter, 0.02);
  EXPECT_NEAR(fit.nllAfter, eval::meanNll(logits, k, labels, fit.temperature), 1e-12);
  // The likelihood is lowest there: a little either side is worse.
  EXPECT_LT(fit.nllAfter, eval::meanNll(logits, k, labels, fit.temperature * 1.05));
  EXPECT_LT(fit.nllAfter, eval::meanNll(logits, k, labels, fit.temperature / 1.05));

  EXPECT_NE(testutil::errorOf([&] { eval::fitTemperature({}, k, {}); }).find("no validation"),
            std::string::npos);
}

TEST(Calibration, TemperatureFromANumberOrAFile) {
  EXPECT_DOUBLE_EQ(eval::readTemperature("1.5"), 1.5);
  EXPECT_NE(testutil::errorOf([] { eval::readTemperature("warm"); }).find("neither a number"),
            std::string::npos);
  EXPECT_NE(testutil::errorOf([] { eval::readTemperature("0"); }).find("outside"),
            std::string::npos);
  const auto dir = std::filesystem::path(::testing::TempDir());
  const std::string file = (dir / "t.calibration.json").string();
  eval::TemperatureFit fit;
  fit.temperature = 0.75;
  const auto written = eval::writeCalibrationFile((dir / "t.safetensors").string(), fit);
  EXPECT_EQ(written, file);
  EXPECT_DOUBLE_EQ(eval::readTemperature(file), 0.75);
  EXPECT_EQ(eval::calibrationFileFor("runs/r/checkpoints/best.safetensors"),
            "runs/r/checkpoints/best.calibration.json");
}

// Worked by hand: thresholds 0.9, 0.8, 0.7 (two samples), 0.1 over 3 positives give (recall,
// precision) (1/3, 1), (1/3, 1/2), (2/3, 1/2), (1, 3/5): AP = 1/3 + 0 + 1/6 + 1/5 = 0.7.
TEST(PrecisionRecall, AveragePrecisionAsWorkedByHand) {
  const auto c = eval::precisionRecall(
      {{0.7f, false}, {0.9f, true}, {0.1f, true}, {0.8f, false}, {0.7f, true}});
  EXPECT_NEAR(c.averagePrecision, 0.7, 1e-12);
  ASSERT_EQ(c.recall.size(), 4u);
  EXPECT_NEAR(c.recall[2], 2.0 / 3, 1e-12);
  EXPECT_NEAR(c.precision[3], 0.6, 1e-12);
  EXPECT_TRUE(std::isnan(eval::precisionRecall({{0.5f, false}}).averagePrecision));
  // A long curve is thinned to the points asked for, its last point kept.
  std::vector<std::pair<float, bool>> many;
  for (int i = 0; i < 1000; ++i)
    many.push_back({float(i) / 1000, i % 3 == 0});
  const auto thin = eval::precisionRecall(many, 50);
  EXPECT_EQ(thin.recall.size(), 50u);
  EXPECT_DOUBLE_EQ(thin.recall.back(), 1.0);
}

}  // namespace
}  // namespace netsmith
