#pragma once

// Recognising a user's data from where it lies: a folder of class folders, a CSV manifest (a
// class per image, a set of labels, or numbers), image + mask folders, a YOLO, COCO or Pascal VOC
// set, each either one folder or split into train/ (val/, test/) folders or train.csv (val.csv,
// test.csv) files. What `netsmith-cli init` and the studio's New from data start from
// (import/project_starter.h turns it into a project). Reads names and folder listings only;
// no image is decoded here. No LibTorch.
#include <optional>
#include <string>
#include <vector>

#include "common/json.h"
#include "data/data_config.h"

namespace netsmith::data {

/// One split found: its name ("train", "validation", "test") and its source as a project's
/// data section holds it, with absolute paths.
struct DetectedSplit {
  std::string name;
  Json source;
};

struct DetectedData {
  std::string path;    ///< what was given, absolute
  std::string format;  ///< the source format's name ("yolo")
  TargetKind targets = TargetKind::ClassIndex;
  std::vector<DetectedSplit> splits;  ///< "train" first, then "validation" and "test" if found
  /// Class names the sources cannot name themselves (mask values, VOC object names, YOLO class
  /// ids without a names file): to be written as data.classes. Empty when the source names its
  /// classes (class folders, a manifest's labels, COCO categories, a data.yaml).
  std::vector<std::string> classes;
  /// The formats the same folder also holds, besides `format` (the scenes example holds masks
  /// and three box formats): what --task or the studio's choice can switch to.
  std::vector<std::string> alternatives;
  /// How it was recognised, for a person ("train/images + train/labels: a YOLO set").
  std::vector<std::string> notes;
};

/// The most mask or annotation files read to find class names (with a note when there were more).
inline constexpr std::size_t kMaxNameScanFiles = 5000;

/// Recognises the data at `path` (a folder, a .csv manifest, a COCO .json, a YOLO data.yaml).
/// `want`: the targets a chosen task takes (the first layout that gives them wins); without it
/// the first layout found, in the order mask_folders, yolo, coco, voc, image_folder for a
/// folder. Throws netsmith::Error naming the path and what was looked for when nothing fits.
DetectedData detectData(const std::string& path, std::optional<TargetKind> want = std::nullopt);

}  // namespace netsmith::data
