#pragma once

// Evaluating a checkpoint on a split through its task: the checkpoint, data and task loaded
// once, then the task's Evaluator (eval/evaluator.h) runs over the split: the task's figures
// (Task::evalSums) and, for classification, what its evaluation view needs besides the totals:
// every sample's prediction, loss and top-3 probabilities (and a small picture of it),
// per-class precision / recall / F1 and top-k accuracy. `netsmith-cli eval` and the studio's
// Evaluation page both call this, so they print the same numbers. No LibTorch in this header.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <opencv2/core/mat.hpp>

#include "common/json.h"
#include "eval/calibration.h"
#include "eval/evaluator.h"
#include "eval/precision_recall.h"
#include "registries/registries_fwd.h"
#include "run/events.h"
#include "task/figures.h"
#include "task/task_registry.h"

namespace netsmith::eval {

struct EvaluationOptions {
  std::string checkpoint;
  /// Another project file, or a folder of class sub-folders ("" : the checkpoint's own data).
  std::string data;
  /// Read the checkpoint's own data even where its paths lie outside the checkpoint's folder and
  /// no project file there names them (the user said yes; see data/named_paths.h).
  bool dataFromCheckpoint = false;
  /// "test", "validation" (as the run split it off) or "train" ("": test when there is one,
  /// else train)
  std::string split;
  std::int64_t limit = 0;  ///< a stratified subset of N samples of the split (0: all)
  std::int64_t batchSize = 256;
  int topK = 5;
  bool keepSamples = false;  ///< fill Evaluation::samples (and thumbnails)
  /// Write every sample's output here (the task's predictions file, task/task.h): anyone can
  /// recompute the figures from it.
  std::string predictions;
  /// Test-time augmentation of a class view: "flip" averages the class probabilities of each
  /// picture and its mirror image; "crops" also of four copies shifted by 1/14 of the side
  /// (the edge filled with the normalised mean). "": none.
  std::string tta;
  /// The longest side of a sample's picture, pixels (segmentation's pictures and masks: at
  /// least kMaskThumbnail).
  int thumbnail = 56;
  /// A class view's logits are divided by this before anything is computed from them
  /// (temperature scaling; eval/calibration.h). 1: as the model gives them.
  double temperature = 1;
  /// First fit the temperature on the data's validation split (at most `fitLimit` samples, a
  /// stratified subset), then evaluate with it. The split must exist.
  bool fitTemperature = false;
  std::int64_t fitLimit = 50000;
  /// A class view also keeps every sample's penultimate features (Evaluation::features): what
  /// the embedding explorer lays out. Another task's evaluation keeps none (featureWidth 0).
  bool features = false;
  /// An ONNX file exported from the checkpoint (float or int8): its outputs, run in ONNX
  /// Runtime (export/onnx_model.h), are evaluated in place of the checkpoint's, on the same
  /// data and preprocessing. "": the checkpoint's own. No features then.
  std::string onnx;
  /// Called after every batch with (samples done, total); return false to cancel.
  std::function<bool(std::int64_t, std::int64_t)> progress;
  /// The program's registries (ops, transforms, schedules, tasks); a checkpoint of a task they
  /// do not hold is refused by name.
  RegistriesPtr registries;
};

/// The longest side of a segmentation sample's picture and masks (a detection sample's picture,
/// its boxes scaled to it) when samples are kept.
inline constexpr int kMaskThumbnail = 96;
/// Kept samples with masks: only the this-many lowest- and highest-scoring (IoU) keep their
/// picture and masks (what a gallery shows from either end); the rest keep their score.
inline constexpr std::size_t kMaskSamplesKept = 300;

struct SampleOutcome {
  std::int64_t position = 0;  ///< in the split
  std::int64_t label = 0;
  std::int64_t predicted = 0;
  double loss = 0;                                   ///< cross-entropy of this sample
  std::vector<std::pair<std::int64_t, double>> top;  ///< the 3 most probable classes
  cv::Mat picture;  ///< 8-bit grey or RGB, at most `thumbnail` pixels on a side
  /// A task without the class view: the sample as its task shows it (its masks at the
  /// picture's size).
  task::SampleView view;
};

struct ClassScores {
  double precision = 0, recall = 0,
         f1 = 0;  ///< NaN where undefined (nothing predicted / no sample)
  std::int64_t support = 0;
  /// The area under the class's precision-recall curve over its probability (NaN: no sample
  /// of it, or the split too large to keep every probability; see kPrCurveValues).
  double averagePrecision = 0;
};

/// Per-class precision-recall curves keep every sample's probabilities while evaluating: at
/// most this many values (samples x classes), else they are left out.
inline constexpr std::int64_t kPrCurveValues = 20'000'000;

struct Evaluation {
  std::string checkpoint;
  std::string onnx;                  ///< the exported file evaluated in its place ("": none)
  std::string runtime = "LibTorch";  ///< what gave the outputs: "ONNX Runtime 1.31.1" for onnx
  std::string split;
  std::string task = task::kClassification;
  /// The task's evaluator (eval/evaluator.h), which filled what follows: classification's
  /// class view fills the per-class scores, top-k, calibration, TTA, curves and features;
  /// another task's fills `metrics` (its loss and figures) and its samples.
  std::shared_ptr<const Evaluator> evaluator;
  std::vector<std::string> classes;
  std::vector<std::string> targets;  ///< a regression's target names
  std::vector<std::string> colors;   ///< the classes' "#rrggbb" (data.colors; may be empty)
  task::EvalMetrics metrics;  ///< loss, accuracy, per-class accuracy, confusion [true][predicted]
  std::vector<ClassScores> perClass;
  int topK = 5;
  double topKAccuracy = 0;
  /// The temperature the logits were divided by, and the reliability of the scores under it.
  double temperature = 1;
  Calibration calibration;
  /// When EvaluationOptions::fitTemperature asked: the fit on the validation split.
  bool temperatureFitted = false;
  TemperatureFit temperatureFit;
  /// A class view's precision-recall curve of each class (one-against-the-rest over its
  /// probability); empty when the split was too large (kPrCurveValues).
  std::vector<PrCurve> prCurves;
  /// With EvaluationOptions::tta: its name, the views averaged, and the accuracy of the
  /// picture alone (the first view) on the same samples: the gain is accuracy - this.
  std::string tta;
  int ttaViews = 1;
  double accuracyWithoutTta = 0;
  /// When asked, in split order: every sample of the class view; a task without it keeps its
  /// SampleView (label, predicted and top stay empty).
  std::vector<SampleOutcome> samples;
  /// When EvaluationOptions::features asked: the output of `featureNode` (the node the model's
  /// output reads; spatial maps averaged over H and W), row-major, a row of `featureWidth` per
  /// position of the split; NaN rows for samples the loader skipped.
  std::vector<float> features;
  std::int64_t featureWidth = 0;
  std::string featureNode;
  /// With the features: each position's sample as the predictions file names it ("FILE #k",
  /// a path).
  std::vector<std::string> featureSamples;
  bool cancelled = false;
  /// `eval --json`'s object: the task's figures, and what its evaluator adds.
  Json toJson() const;
  /// What `eval` prints after its first line (the evaluator's report).
  std::string report(const EvaluationFiles& files) const;
  /// The samples of one confusion-matrix cell, highest loss first.
  std::vector<const SampleOutcome*> cell(std::int64_t label, std::int64_t predicted) const;
};

/// Throws netsmith::Error naming the checkpoint or the data when they cannot be read.
Evaluation evaluateCheckpoint(const EvaluationOptions& options);

}  // namespace netsmith::eval
