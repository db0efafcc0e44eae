#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/json.h"

namespace netsmith::data {

enum class SourceFormat {
  Idx,
  ImageFolder,
  Csv,
  Cifar10,
  MultiLabelCsv,
  RegressionCsv,
  MaskFolders,
  Yolo,
  Coco,
  Voc
};
/// What a sample's target is (each task takes one kind; each source format gives one).
/// `spatial` kinds (masks, boxes) move with the image under the geometric transforms.
enum class TargetKind { ClassIndex, MultiHot, RealVector, ClassMask, Boxes };
/// What a kind of target is, for the code that only carries targets (one table, targetTraits:
/// outside the tasks nothing else asks which kind it is).
struct TargetTraits {
  const char* description;  ///< "one class per sample", for messages
  bool oneClassPerSample;   ///< a class index: the doctor's label checks, the class view
  bool outputPerClass;      ///< the last Linear gives one score per class (train.replace_head)
  bool onPixels;            ///< masks and boxes: they move with the image
  bool colouredClasses;     ///< a class mask: each class has a colour over images
};
const TargetTraits& targetTraits(TargetKind kind);
/// "one class per sample", "a set of labels per sample", ... for messages.
std::string targetKindName(TargetKind kind);
/// How an image whose size differs from the model input is brought to it.
enum class FitPolicy {
  Resize,      ///< stretch to the model size
  ResizeCrop,  ///< resize the shorter side, then centre-crop (keeps the aspect ratio)
};
/// What happens to a sample that cannot be read (corrupt file, wrong label).
enum class ErrorPolicy { Skip, Fail };

std::string sourceFormatName(SourceFormat f);

/// Where one split's samples come from. Paths are absolute once parsed (relative ones are
/// resolved against the project file's folder).
struct SourceSpec {
  SourceFormat format = SourceFormat::Idx;
  std::string path;                ///< JSON path for messages: "data.train"
  std::string images;              ///< idx (a file); mask_folders, yolo, coco, voc (a folder)
  std::string masks;               ///< mask_folders: the folder of masks
  std::string labels;              ///< idx (a file); yolo (a folder of .txt files)
  std::string annotations;         ///< coco (a JSON file); voc (a folder of .xml files)
  std::string root;                ///< image_folder; cifar10 (folder holding the .bin batches)
  std::string manifest;            ///< csv
  std::vector<std::string> files;  ///< cifar10 batch files
  std::int64_t limit = 0;          ///< a stratified seeded subset of N samples (0: all)
  /// regression_csv: the target columns (data.targets; empty: every column but path).
  std::vector<std::string> targets;
};

/// Validation taken out of the training source.
struct SplitSpec {
  double fraction = 0.0;
  std::uint64_t seed = 0;
  bool stratified = true;
  std::int64_t limit = 0;
};

/// The `data` section of a project, checked.
struct DataConfig {
  SourceSpec train;
  std::optional<SourceSpec> validation;  ///< a separate source; else `split` applies
  SplitSpec split;
  std::optional<SourceSpec> test;
  std::vector<std::string> classes;  ///< optional display names
  std::vector<std::string> targets;  ///< regression: the target columns, in output order
  /// Optional display colours, one "#rrggbb" per class (mask overlays, predicted masks).
  std::vector<std::string> colors;
  FitPolicy fit = FitPolicy::Resize;
  ErrorPolicy onError = ErrorPolicy::Skip;
  enum class Normalization { Auto, Explicit, None } normalization = Normalization::Auto;
  std::vector<double> mean;  ///< Explicit
  std::vector<double> std;   ///< Explicit
  /// data.exclude: samples left out of every split, as their source names them (an image file,
  /// "FILE #N" for a record of an IDX or CIFAR file); absolute once parsed (relative ones are
  /// resolved against the project's folder, like every path). The data doctor's "Exclude".
  std::vector<std::string> exclude;
};

/// Most entries data.exclude may hold.
inline constexpr std::size_t kMaxExcluded = 1000000;

/// `item` (what a source's describe() gives) as data.exclude holds it: relative to `baseDir`
/// when it lies inside that folder, so the project moves with its data.
std::string excludeEntryFor(const std::string& item, const std::string& baseDir);

/// Reads the `data` section. Every problem is added with its path (`data.train.images: ...`).
/// `baseDir` is the project file's folder, for relative paths. Files are not opened here.
DataConfig parseDataConfig(const Json& data, const std::string& baseDir, Problems& problems);

}  // namespace netsmith::data
