#include "eval/calibration.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

#include "common/error.h"
#include "common/file_util.h"
#include "common/json_text.h"

namespace netsmith::eval {

namespace {

Json figureOrNull(double v) {
  return std::isfinite(v) ? Json(v) : Json();
}

/// log-sum-exp of a row of logits / t, and the row's largest probability and its class.
struct RowFacts {
  double logSumExp = 0;
  double maxProbability = 0;
  std::int64_t argmax = 0;
};

RowFacts rowFacts(const float* z, std::int64_t k, double t) {
  RowFacts f;
  double top = -std::numeric_limits<double>::infinity();
  for (std::int64_t c = 0; c < k; ++c)
    if (z[c] / t > top) {
      top = z[c] / t;
      f.argmax = c;
    }
  double sum = 0;
  for (std::int64_t c = 0; c < k; ++c)
    sum += std::exp(z[c] / t - top);
  f.logSumExp = top + std::log(sum);
  f.maxProbability = 1.0 / sum;
  return f;
}

void checkShapes(const std::vector<float>& logits, std::int64_t classes,
                 const std::vector<std::int64_t>& labels) {
  if (classes < 1 || logits.size() != labels.size() * std::size_t(classes))
    throw Error("calibration: " + std::to_string(labels.size()) + " labels for " +
                std::to_string(logits.size()) + " logits of " + std::to_string(classes) +
                " classes");
}

}  // namespace

Json Calibration::toJson() const {
  Json bins = Json::array();
  for (const auto& b : this->bins)
    bins.push_back(Json{{"lower", b.lower},
                        {"upper", b.upper},
                        {"count", b.count},
                        {"confidence", figureOrNull(b.confidence)},
                        {"accuracy", figureOrNull(b.accuracy)}});
  return Json{
      {"bins", bins}, {"samples", samples}, {"ece", figureOrNull(ece)}, {"mce", figureOrNull(mce)}};
}

int calibrationBin(double confidence) {
  const int b = int(std::ceil(confidence * kCalibrationBins)) - 1;
  return std::clamp(b, 0, kCalibrationBins - 1);
}

CalibrationCounter::CalibrationCounter()
    : m_count(kCalibrationBins, 0),
      m_correct(kCalibrationBins, 0),
      m_confidence(kCalibrationBins, 0.0) {}

void CalibrationCounter::add(double confidence, bool correct) {
  if (!std::isfinite(confidence)) return;
  const auto b = std::size_t(calibrationBin(confidence));
  ++m_count[b];
  m_correct[b] += correct ? 1 : 0;
  m_confidence[b] += confidence;
}

Calibration CalibrationCounter::finish() const {
  Calibration c;
  for (const auto n : m_count)
    c.samples += n;
  for (int b = 0; b < kCalibrationBins; ++b) {
    ReliabilityBin bin;
    bin.lower = double(b) / kCalibrationBins;
    bin.upper = double(b + 1) / kCalibrationBins;
    bin.count = m_count[std::size_t(b)];
    if (bin.count > 0) {
      bin.confidence = m_confidence[std::size_t(b)] / double(bin.count);
      bin.accuracy = double(m_correct[std::size_t(b)]) / double(bin.count);
      const double gap = std::abs(bin.accuracy - bin.confidence);
      c.ece += double(bin.count) / double(c.samples) * gap;
      c.mce = std::max(c.mce, gap);
    } else {
      bin.confidence = bin.accuracy = std::numeric_limits<double>::quiet_NaN();
    }
    c.bins.push_back(bin);
  }
  if (c.samples == 0) c.ece = c.mce = std::numeric_limits<double>::quiet_NaN();
  return c;
}

Json TemperatureFit::toJson() const {
  return Json{{"temperature", temperature},
              {"samples", samples},
              {"nll_before", figureOrNull(nllBefore)},
              {"nll_after", figureOrNull(nllAfter)},
              {"ece_before", figureOrNull(eceBefore)},
              {"ece_after", figureOrNull(eceAfter)}};
}

double meanNll(const std::vector<float>& logits, std::int64_t classes,
               const std::vector<std::int64_t>& labels, double temperature) {
  checkShapes(logits, classes, labels);
  double sum = 0;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const float* z = logits.data() + i * std::size_t(classes);
    sum += rowFacts(z, classes, temperature).logSumExp - z[labels[i]] / temperature;
  }
  return labels.empty() ? 0 : sum / double(labels.size());
}

Calibration calibrationOf(const std::vector<float>& logits, std::int64_t classes,
                          const std::vector<std::int64_t>& labels, double temperature) {
  checkShapes(logits, classes, labels);
  CalibrationCounter counter;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const auto f = rowFacts(logits.data() + i * std::size_t(classes), classes, temperature);
    counter.add(f.maxProbability, f.argmax == labels[i]);
  }
  return counter.finish();
}

TemperatureFit fitTemperature(const std::vector<float>& logits, std::int64_t classes,
                              const std::vector<std::int64_t>& labels) {
  checkShapes(logits, classes, labels);
  if (labels.empty()) throw Error("no validation sample to fit a temperature on");
  for (const auto y : labels)
    if (y < 0 || y >= classes)
      throw Error("calibration: label " + std::to_string(y) + " outside the " +
                  std::to_string(classes) + " classes");
  auto nll = [&](double logT) { return meanNll(logits, classes, labels, std::exp(logT)); };
  double a = std::log(0.05), b = std::log(20.0);
  const double g = (std::sqrt(5.0) - 1) / 2;
  double x1 = b - g * (b - a), x2 = a + g * (b - a);
  double f1 = nll(x1), f2 = nll(x2);
  for (int i = 0; i < 80 && b - a > 1e-7; ++i) {
    if (f1 <= f2) {
      b = x2;
      x2 = x1;
      f2 = f1;
      x1 = b - g * (b - a);
      f1 = nll(x1);
    } else {
      a = x1;
      x1 = x2;
      f1 = f2;
      x2 = a + g * (b - a);
      f2 = nll(x2);
    }
  }
  TemperatureFit fit;
  fit.temperature = std::exp((a + b) / 2);
  fit.samples = std::int64_t(labels.size());
  fit.nllBefore = meanNll(logits, classes, labels, 1.0);
  fit.nllAfter = meanNll(logits, classes, labels, fit.temperature);
  // The search ends within 1e-7 of the minimum; T = 1 is kept when it is as good.
  if (fit.nllAfter > fit.nllBefore) {
    fit.temperature = 1;
    fit.nllAfter = fit.nllBefore;
  }
  fit.eceBefore = calibrationOf(logits, classes, labels, 1.0).ece;
  fit.eceAfter = calibrationOf(logits, classes, labels, fit.temperature).ece;
  return fit;
}

std::string calibrationFileFor(const std::string& checkpoint) {
  std::filesystem::path p(checkpoint);
  return (p.parent_path() / (p.stem().string() + ".calibration.json")).string();
}

std::string writeCalibrationFile(const std::string& checkpoint, const TemperatureFit& fit) {
  const std::string path = calibrationFileFor(checkpoint);
  Json j = fit.toJson();
  j["checkpoint"] = std::filesystem::path(checkpoint).filename().string();
  j["fitted_on"] = "validation";
  writeFileAtomically(path, j.dump(1) + "\n");
  return path;
}

double readTemperature(const std::string& valueOrFile) {
  double t = 0;
  std::error_code ec;
  if (std::filesystem::exists(valueOrFile, ec)) {
    const std::string where = printable(valueOrFile);
    Json j;
    try {
      j = parseJsonText(readTextFile(valueOrFile, 1 << 20), where);
    } catch (const Error& e) {
      throw Error(std::string(e.what()) + "; not a calibration file");
    }
    if (!j.is_object() || !j.contains("temperature") || !j["temperature"].is_number())
      throw Error(where + ": not a calibration file (no \"temperature\" number)");
    t = j["temperature"].get<double>();
  } else {
    std::size_t used = 0;
    try {
      t = std::stod(valueOrFile, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != valueOrFile.size())
      throw Error("--temperature: \"" + printable(valueOrFile) +
                  "\" is neither a number nor a calibration file");
  }
  if (!(t > 0.01 && t < 100))
    throw Error("--temperature: " + std::to_string(t) + " is outside (0.01, 100)");
  return t;
}

}  // namespace netsmith::eval
