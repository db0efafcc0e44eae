#pragma once

// The figures of one split, as every task reports them: the loss and sample count all tasks
// have, the named figures a task finishes its sums into, and classification's confusion
// matrix. No LibTorch here: events, run records and the studio include it.
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "target/box.h"

namespace netsmith::task {

struct EvalMetrics {
  double loss = 0;
  /// Classification's headline figure (NaN for a task without one); also in `figures`.
  double accuracy = 0;
  std::int64_t samples = 0;
  std::vector<double> perClassAccuracy;              ///< NaN where a class has no sample
  std::vector<std::vector<std::int64_t>> confusion;  ///< [true][predicted]
  /// The task's figures by name ("accuracy"; "mae", "rmse", ...): what train.monitor, the
  /// sweep objective and the run's events name. See Task::figures().
  std::map<std::string, double> figures;
  /// Figures with one value per class or target ("ap", "f1", "threshold"; "mae", "r2"), in
  /// class or target order; NaN where undefined (a label without a positive sample).
  std::map<std::string, std::vector<double>> perClass;
};

/// One evaluated sample as its task's evaluation view shows it (Task::describeSamples), in the
/// user's units.
struct SampleView {
  /// Multi-label: 1 or 0 per label; regression: the true values.
  std::vector<float> truth;
  /// Multi-label: each label's probability; regression: the predicted values.
  std::vector<float> output;
  /// The task's figure of this one sample: multi-label its loss (mean binary cross-entropy over
  /// the labels), regression its mean absolute error, segmentation its IoU (mean over the
  /// classes in its truth or prediction; NaN when every pixel is ignored), detection its
  /// errors (below).
  double score = 0;
  /// Segmentation: the true and predicted class of every pixel (row-major, 255: ignore),
  /// `height` x `width`.
  int height = 0, width = 0;
  std::vector<std::uint8_t> trueMask, predictedMask;
  /// Detection: the true boxes and the detections (box.cls their class, `predictedScores` one
  /// per detection, best first), in the model input's pixels. Its score is its errors at the
  /// view's first score, 0.5 (task::detectionErrors: missed, false, wrong class, poor box).
  std::vector<target::Box> trueBoxes, predictedBoxes;
  std::vector<float> predictedScores;
};

/// The value of a figure that is undefined (no sample, no positive): NaN, written as null.
inline double noFigure() {
  return std::numeric_limits<double>::quiet_NaN();
}

/// A figure a task reports, and which way is better.
struct FigureSpec {
  std::string name;  ///< "accuracy", "mae": train.monitor names it as val_<name> / train_<name>
  bool higherIsBetter = true;
  std::string description;
  bool percent = false;  ///< a share, shown as a percentage ("91.05%")
};

/// The headline among a task's figures: the first (what the dashboard, metrics.csv and "best"
/// show by default), or "" when there are none.
inline std::string headlineOf(const std::vector<FigureSpec>& figures) {
  return figures.empty() ? std::string() : figures.front().name;
}

/// The headline's spec (the first figure), or an empty one (no name) when there are none.
inline FigureSpec headlineSpecOf(const std::vector<FigureSpec>& figures) {
  return figures.empty() ? FigureSpec{} : figures.front();
}

/// The figure of `figures` called `name` (without its split: "accuracy"), or null.
inline const FigureSpec* findFigure(const std::vector<FigureSpec>& figures,
                                    const std::string& name) {
  for (const auto& f : figures)
    if (f.name == name) return &f;
  return nullptr;
}

}  // namespace netsmith::task
