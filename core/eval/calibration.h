#pragma once

// How far a classifier's scores can be trusted: the reliability diagram, the expected and
// maximum calibration errors (ECE, MCE) over 15 equal-width confidence bins, and temperature
// scaling (Guo et al., "On Calibration of Modern Neural Networks", 2017): one number T the
// logits are divided by, fitted on the validation split to minimise its negative
// log-likelihood. Plain numbers: no LibTorch.
#include <cstdint>
#include <string>
#include <vector>

#include "common/json.h"

namespace netsmith::eval {

/// The bins of the reliability diagram. Bin b holds the samples whose confidence (the largest
/// class probability) lies in (b / 15, (b + 1) / 15]; a confidence of 0 falls in the first.
inline constexpr int kCalibrationBins = 15;

struct ReliabilityBin {
  double lower = 0, upper = 0;
  std::int64_t count = 0;
  double confidence = 0;  ///< mean confidence of its samples (NaN when empty)
  double accuracy = 0;    ///< share of its samples predicted right (NaN when empty)
};

struct Calibration {
  std::vector<ReliabilityBin> bins;
  std::int64_t samples = 0;
  /// sum over bins of count / samples x |accuracy - confidence|
  double ece = 0;
  /// the largest |accuracy - confidence| over the bins that hold samples
  double mce = 0;
  Json toJson() const;
};

/// The bin of a confidence: ceil(c x 15) - 1, clamped to [0, 14].
int calibrationBin(double confidence);

/// Sums samples into the bins as they come.
class CalibrationCounter {
 public:
  CalibrationCounter();
  void add(double confidence, bool correct);
  Calibration finish() const;

 private:
  std::vector<std::int64_t> m_count, m_correct;
  std::vector<double> m_confidence;
};

/// A temperature fitted on the validation split, with the figures before and after.
struct TemperatureFit {
  double temperature = 1;
  std::int64_t samples = 0;  ///< validation samples it was fitted on
  double nllBefore = 0, nllAfter = 0;
  double eceBefore = 0, eceAfter = 0;
  Json toJson() const;
};

/// The temperature in (0.05, 20) minimising the mean negative log-likelihood of `labels` under
/// softmax(logits / T) (row-major n x classes); golden-section search on log T, where the
/// likelihood has one minimum. Fills the before/after figures. Throws netsmith::Error when
/// there is no sample.
TemperatureFit fitTemperature(const std::vector<float>& logits, std::int64_t classes,
                              const std::vector<std::int64_t>& labels);

/// Mean negative log-likelihood of softmax(logits / temperature).
double meanNll(const std::vector<float>& logits, std::int64_t classes,
               const std::vector<std::int64_t>& labels, double temperature);

/// The calibration of softmax(logits / temperature).
Calibration calibrationOf(const std::vector<float>& logits, std::int64_t classes,
                          const std::vector<std::int64_t>& labels, double temperature);

/// A temperature file (`eval --fit-temperature` writes it beside the checkpoint:
/// CHECKPOINT-STEM.calibration.json) or a number. Throws netsmith::Error naming the file or
/// the value when it is neither, or the temperature is not in (0.01, 100).
double readTemperature(const std::string& valueOrFile);

/// Where `eval --fit-temperature` records the fit of `checkpoint`.
std::string calibrationFileFor(const std::string& checkpoint);

/// Records `fit` for `checkpoint` (calibrationFileFor; written atomically, a link there is
/// replaced, not followed). Returns the file.
std::string writeCalibrationFile(const std::string& checkpoint, const TemperatureFit& fit);

}  // namespace netsmith::eval
