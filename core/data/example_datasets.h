#pragma once

// Example data for the tasks beyond single-label classification, built from Fashion-MNIST's
// items (the IDX files Debian's dataset-fashion-mnist installs) so nothing is downloaded. Each
// is deterministic for a seed and written as the task's source format reads it:
//   mosaics    2x2 grids of items (56x56), some cells empty; the labels are the classes
//              present (multilabel_csv: path,labels)
//   rotations  items turned by a known angle in [-45, 45) degrees; targets angle (degrees),
//              sin and cos (regression_csv: path,angle,sin,cos)
//   scenes     1 to 3 items on a 64x64 canvas; masks give each item's pixels its class (1 to
//              10; 0 is the background, 255 the faint edges to ignore) (mask_folders:
//              train/images, train/masks, test/images, test/masks); and each item's box (around
//              its pixels of the mask, the faint edge left out; class 0 to 9) in the three
//              detection formats: yolo (train/labels, names in data.yaml), coco
//              (train/annotations.json), voc (train/annotations)
// Training images come from the training items, test images from the test items.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace netsmith::data {

struct ExampleDatasetOptions {
  std::string name;                                          ///< mosaics, rotations
  std::string out;                                           ///< the folder to create
  std::string source = "/usr/share/datasets/fashion-mnist";  ///< the four IDX files
  std::uint64_t seed = 0;
  std::int64_t train = 0;  ///< training images (0: the data set's default)
  std::int64_t test = 0;   ///< test images (0: the default)
  /// (done, total) after every image; return false to stop (the folder is left incomplete
  /// and says so: no manifest is written).
  std::function<bool(std::int64_t, std::int64_t)> progress;
};

struct ExampleDatasetInfo {
  std::string name;
  std::string description;
  std::int64_t train = 0, test = 0;  ///< default sizes
};

const std::vector<ExampleDatasetInfo>& exampleDatasets();

/// Writes the data set: images under out/images/{train,test}/ and the manifests
/// out/train.csv and out/test.csv (written last, atomically), or for scenes out/{train,test}/
/// {images,masks} (each split written under <split>.incomplete, renamed when whole). `out` must
/// be a new or empty real folder. Throws netsmith::Error naming the problem.
void makeExampleDataset(const ExampleDatasetOptions& options);

/// Fashion-MNIST's class names, in label order.
const std::vector<std::string>& fashionMnistClasses();

}  // namespace netsmith::data
