#pragma once
// Predictions on images without labels (`netsmith-cli predict`, the studio's try-it place):
// a trained model run over image files and folders, each image preprocessed exactly as eval
// preprocesses its split (decode, channels, the data's fit, the run's normalisation; no
// augmentation), the outputs written by the task's own PredictionWriter without truth columns.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <opencv2/core/mat.hpp>

#include "data/dataset_source.h"
#include "registries/registries_fwd.h"
#include "task/figures.h"

namespace netsmith::eval {

struct PredictOptions {
  RegistriesPtr registries;
  /// A checkpoint, a project whose model has the weights of its init_from, or an ONNX file
  /// Netsmith exported (float or int8; run in ONNX Runtime, export/onnx_model.h).
  std::string model;
  /// Image files and folders (searched recursively: data::openImageList).
  std::vector<std::string> inputs;
  /// Where the task's predictions go (a CSV file, a folder, a COCO results file); "": the
  /// task's predictionsName in the current folder.
  std::string out;
  std::int64_t batchSize = 64;
  /// Called after every batch with the images done (predicted or skipped) and the total;
  /// returning false stops (nothing is written then).
  std::function<bool(std::int64_t done, std::int64_t total)> progress;
};

struct PredictResult {
  std::string task;
  std::string runtime;         ///< what ran the model: "LibTorch", "ONNX Runtime 1.31.1"
  std::string out;             ///< where the predictions were written
  std::int64_t predicted = 0;  ///< images with a prediction
  std::vector<data::SkippedItem> skipped;  ///< images not read (named, with the reason)
  bool cancelled = false;
};

/// Runs the model over the inputs. Throws netsmith::Error naming the place: a model that does
/// not load, an input that does not exist, no image at all, an output that would be written
/// over an input image or into an input folder, a task that writes no predictions.
PredictResult predictImages(const PredictOptions& options);

/// One image's prediction as a person looks at it (the studio's Predict page).
struct PredictedImage {
  std::string path;
  cv::Mat image;          ///< as decoded (CV_8UC1 grey or CV_8UC3 RGB); empty when unreadable
  task::SampleView view;  ///< the task's description, without truth; masks and boxes in the
                          ///< image's own pixels (height x width the image's)
  std::string error;      ///< why it could not be read ("" when it was)
};

/// A model loaded once for predictions on images without labels: the checkpoint's network,
/// task and evaluation preprocessing, as predictImages() uses them.
class Predictor {
 public:
  /// Loads `model` (a checkpoint, a project with its init_from's weights, or an exported ONNX
  /// file); throws netsmith::Error naming it.
  Predictor(RegistriesPtr registries, const std::string& model);
  ~Predictor();
  const std::string& model() const;
  /// What runs it: "LibTorch", or "ONNX Runtime 1.31.1" for an ONNX file.
  const std::string& runtime() const;
  const std::string& task() const;
  /// The classes (classification, multi-label, segmentation, detection) or the targets
  /// (regression) the outputs are of, in order.
  const std::vector<std::string>& names() const;
  /// Whether its outputs are class scores a Grad-CAM map can explain (the task's evaluator
  /// scales class scores: the class view; an ONNX file gives no gradients, so never).
  bool explainsClasses() const;
  /// Whether a view's `output` holds class probabilities (the model names classes), rather
  /// than values (a regression's, named by its targets).
  bool outputsProbabilities() const;
  /// The project's class colours ("#rrggbb", data.colors; empty: the built-in palette).
  const std::vector<std::string>& colors() const;
  /// The images at `paths`, batched; an unreadable one comes back with its error. Calls from
  /// several threads run one after the other.
  std::vector<PredictedImage> predict(const std::vector<std::string>& paths,
                                      std::int64_t batchSize = 32) const;

 private:
  friend PredictResult predictImages(const PredictOptions& options);
  struct Loaded;
  std::unique_ptr<Loaded> m;
};

}  // namespace netsmith::eval
