#pragma once
// Predictions on images without labels (`netsmith-cli predict`, the studio's try-it place):
// a trained model run over image files and folders, each image preprocessed exactly as eval
// preprocesses its split (decode, channels, the data's fit, the run's normalisation; no
// augmentation), the outputs written by the task's own PredictionWriter without truth columns.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "data/dataset_source.h"
#include "registries/registries_fwd.h"

namespace netsmith::eval {

struct PredictOptions {
  RegistriesPtr registries;
  /// A checkpoint, or a project whose model has the weights of its init_from.
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
  std::string out;                         ///< where the predictions were written
  std::int64_t predicted = 0;              ///< images with a prediction
  std::vector<data::SkippedItem> skipped;  ///< images not read (named, with the reason)
  bool cancelled = false;
};

/// Runs the model over the inputs. Throws netsmith::Error naming the place: a model that does
/// not load, an input that does not exist, no image at all, an output that would be written
/// over an input image or into an input folder, a task that writes no predictions.
PredictResult predictImages(const PredictOptions& options);

}  // namespace netsmith::eval
