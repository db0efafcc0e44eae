#include "data/source_formats.h"

#include <sstream>

#include "common/error.h"
#include "data/dataset_source.h"

namespace netsmith::data {

namespace {

using Kind = SourceField::Kind;

// arch: table of data (one entry per source format).
std::vector<SourceFormatDef> makeFormats() {
  std::vector<SourceFormatDef> f;
  {
    SourceFormatDef d;
    d.name = "idx";
    d.format = SourceFormat::Idx;
    d.title = "IDX (MNIST-style)";
    d.help =
        "an IDX image file and its IDX label file, as MNIST and Fashion-MNIST ship them "
        "(gzipped or raw)";
    d.fields = {{"images", Kind::File, "the IDX image file (idx3-ubyte, .gz or raw)",
                 &SourceSpec::images, nullptr},
                {"labels", Kind::File, "the IDX label file (idx1-ubyte, .gz or raw)",
                 &SourceSpec::labels, nullptr}};
    d.example = Json{{"format", "idx"},
                     {"images", "train-images-idx3-ubyte.gz"},
                     {"labels", "train-labels-idx1-ubyte.gz"}};
    d.open = openIdxSource;
    f.push_back(std::move(d));
  }
  {
    SourceFormatDef d;
    d.name = "image_folder";
    d.classNaming = ClassNaming::Folders;
    d.format = SourceFormat::ImageFolder;
    d.title = "Image folder";
    d.help =
        "one sub-folder per class (root/<class>/**/*.png|jpg|jpeg|bmp|webp|tif), classes "
        "sorted by name; names starting with a dot are ignored";
    d.fields = {{"root", Kind::Folder, "the folder holding one folder per class", &SourceSpec::root,
                 nullptr}};
    d.imageFiles = true;
    d.example = Json{{"format", "image_folder"}, {"root", "images/train"}};
    d.open = openImageFolderSource;
    f.push_back(std::move(d));
  }
  {
    SourceFormatDef d;
    d.name = "csv";
    d.classNaming = ClassNaming::Order;
    d.format = SourceFormat::Csv;
    d.title = "CSV manifest";
    d.help =
        "a CSV file with a path,label header: image paths relative to the CSV, labels all "
        "class indices or all class names";
    d.fields = {{"manifest", Kind::File, "the CSV file", &SourceSpec::manifest, nullptr}};
    d.imageFiles = true;
    d.example = Json{{"format", "csv"}, {"manifest", "images/test.csv"}};
    d.open = openCsvSource;
    f.push_back(std::move(d));
  }
  {
    SourceFormatDef d;
    d.name = "cifar10";
    d.format = SourceFormat::Cifar10;
    d.title = "CIFAR-10 binary";
    d.help = "CIFAR-10 binary batch files (a label byte and 3,072 pixel bytes per image)";
    d.fields = {{"files", Kind::FileList, "the .bin batch files, e.g. [\"data_batch_1.bin\"]",
                 nullptr, &SourceSpec::files}};
    d.example = Json{{"format", "cifar10"},
                     {"files", Json::array({"cifar-10-batches-bin/data_batch_1.bin"})}};
    d.open = openCifarSource;
    f.push_back(std::move(d));
  }
  {
    SourceFormatDef d;
    d.name = "multilabel_csv";
    d.classNaming = ClassNaming::Fixed;
    d.format = SourceFormat::MultiLabelCsv;
    d.title = "Multi-label CSV";
    d.help =
        "a CSV file with a path,labels header, labels holding the sample's class names "
        "separated by ; (or by spaces when no row uses ;; empty: no label), or a "
        "path,<class1>,<class2>,... header with a 0 or 1 per class; image paths relative to "
        "the CSV";
    d.fields = {{"manifest", Kind::File, "the CSV file", &SourceSpec::manifest, nullptr}};
    d.imageFiles = true;
    d.targets = TargetKind::MultiHot;
    d.example = Json{{"format", "multilabel_csv"}, {"manifest", "mosaics/train.csv"}};
    d.open = openMultiLabelCsvSource;
    f.push_back(std::move(d));
  }
  {
    SourceFormatDef d;
    d.name = "regression_csv";
    d.classNaming = ClassNaming::None;
    d.format = SourceFormat::RegressionCsv;
    d.title = "Regression CSV";
    d.help =
        "a CSV file with a path column and one column of numbers per target (data.targets "
        "names them, in the model's output order; without it every other column); image paths "
        "relative to the CSV";
    d.fields = {{"manifest", Kind::File, "the CSV file", &SourceSpec::manifest, nullptr}};
    d.imageFiles = true;
    d.targets = TargetKind::RealVector;
    d.example = Json{{"format", "regression_csv"}, {"manifest", "rotations/train.csv"}};
    d.open = openRegressionCsvSource;
    f.push_back(std::move(d));
  }
  {
    SourceFormatDef d;
    d.name = "mask_folders";
    d.format = SourceFormat::MaskFolders;
    d.title = "Images and masks";
    d.help =
        "a folder of images and a folder of masks with the same file stems (a.jpg and a.png); "
        "a mask is a single-channel PNG whose pixel value is the class index (255: ignore) or "
        "a palette PNG whose palette index is the class (as Pascal VOC writes them); classes "
        "from data.classes, in index order";
    d.fields = {{"images", Kind::Folder, "the folder of images", &SourceSpec::images, nullptr},
                {"masks", Kind::Folder, "the folder of masks, one PNG per image",
                 &SourceSpec::masks, nullptr}};
    d.imageFiles = true;
    d.targets = TargetKind::ClassMask;
    d.example = Json{{"format", "mask_folders"},
                     {"images", "scenes/train/images"},
                     {"masks", "scenes/train/masks"}};
    d.open = openMaskFolderSource;
    f.push_back(std::move(d));
  }
  {
    SourceFormatDef d;
    d.name = "yolo";
    d.format = SourceFormat::Yolo;
    d.title = "Images and YOLO labels";
    d.help =
        "a folder of images and a folder of YOLO label files with the same stems (a.jpg and "
        "a.txt): one `class cx cy w h` line per object, normalised to [0, 1]; an image without "
        "a label file holds no object; class names from data.classes, else the names of a "
        "data.yaml beside the labels folder, else its classes.txt";
    d.fields = {
        {"images", Kind::Folder, "the folder of images", &SourceSpec::images, nullptr},
        {"labels", Kind::Folder, "the folder of .txt label files", &SourceSpec::labels, nullptr}};
    d.imageFiles = true;
    d.targets = TargetKind::Boxes;
    d.example = Json{
        {"format", "yolo"}, {"images", "scenes/train/images"}, {"labels", "scenes/train/labels"}};
    d.open = openYoloSource;
    f.push_back(std::move(d));
  }
  {
    SourceFormatDef d;
    d.name = "coco";
    d.classNaming = ClassNaming::Order;
    d.format = SourceFormat::Coco;
    d.title = "COCO annotations";
    d.help =
        "a COCO instances JSON (images, annotations with bbox [x, y, w, h] in pixels, "
        "categories) and the folder its file_names are relative to; iscrowd boxes are left "
        "out of matching; class names from the categories (by id), or data.classes in the "
        "model's output order";
    d.fields = {
        {"annotations", Kind::File, "the COCO JSON file", &SourceSpec::annotations, nullptr},
        {"images", Kind::Folder, "the folder of images", &SourceSpec::images, nullptr}};
    d.imageFiles = true;
    d.targets = TargetKind::Boxes;
    d.example = Json{{"format", "coco"},
                     {"annotations", "scenes/train/annotations.json"},
                     {"images", "scenes/train/images"}};
    d.open = openCocoSource;
    f.push_back(std::move(d));
  }
  {
    SourceFormatDef d;
    d.name = "voc";
    d.classNaming = ClassNaming::Order;
    d.format = SourceFormat::Voc;
    d.title = "Pascal VOC annotations";
    d.help =
        "a folder of Pascal VOC .xml annotations and a folder of images with the same stems "
        "(a.xml and a.jpg); difficult boxes are left out of matching; class names from "
        "data.classes";
    d.fields = {{"annotations", Kind::Folder, "the folder of .xml files", &SourceSpec::annotations,
                 nullptr},
                {"images", Kind::Folder, "the folder of images", &SourceSpec::images, nullptr}};
    d.imageFiles = true;
    d.targets = TargetKind::Boxes;
    d.example = Json{{"format", "voc"},
                     {"annotations", "scenes/train/annotations"},
                     {"images", "scenes/train/images"}};
    d.open = openVocSource;
    f.push_back(std::move(d));
  }
  return f;
}

}  // namespace

const std::vector<SourceFormatDef>& sourceFormats() {
  static const std::vector<SourceFormatDef> kFormats = makeFormats();
  return kFormats;
}

const SourceFormatDef* findSourceFormat(const std::string& name) {
  for (const auto& d : sourceFormats())
    if (d.name == name) return &d;
  return nullptr;
}

const SourceFormatDef* trainSourceFormat(const Json& data) {
  if (!data.is_object() || !data.contains("train")) return nullptr;
  const Json& train = data["train"];
  if (!train.is_object() || !train.contains("format") || !train["format"].is_string())
    return nullptr;
  return findSourceFormat(train["format"].get<std::string>());
}

ClassNaming classNamingOf(const Json& data) {
  const auto* def = trainSourceFormat(data);
  return def ? def->classNaming : ClassNaming::Fixed;
}

const SourceFormatDef& sourceFormat(SourceFormat format) {
  for (const auto& d : sourceFormats())
    if (d.format == format) return d;
  throw Error("no description of source format " + std::to_string(int(format)));
}

const std::string& sourceLimitHelp() {
  static const std::string kHelp =
      "a seeded, stratified subset of N samples (0 or absent: all of them)";
  return kHelp;
}

std::vector<std::string> sourcePaths(const SourceSpec& spec) {
  std::vector<std::string> out;
  for (const auto& field : sourceFormat(spec.format).fields) {
    if (field.path && !(spec.*field.path).empty()) out.push_back(spec.*field.path);
    if (field.list) {
      const auto& list = spec.*field.list;
      out.insert(out.end(), list.begin(), list.end());
    }
  }
  return out;
}

std::string sourceFieldKindName(SourceField::Kind kind) {
  switch (kind) {
    case Kind::File:
      return "file";
    case Kind::Folder:
      return "folder";
    case Kind::FileList:
      return "file list";
  }
  return "?";
}

Json sourceFormatsToJson() {
  Json all = Json::array();
  for (const auto& d : sourceFormats()) {
    Json keys = Json::array();
    for (const auto& field : d.fields) {
      keys.push_back(Json{{"key", field.key},
                          {"kind", sourceFieldKindName(field.kind)},
                          {"required", true},
                          {"help", field.help}});
    }
    keys.push_back(Json{{"key", "limit"},
                        {"kind", "count"},
                        {"required", false},
                        {"default", 0},
                        {"help", sourceLimitHelp()}});
    all.push_back(Json{{"format", d.name},
                       {"title", d.title},
                       {"help", d.help},
                       {"keys", keys},
                       {"targets", targetKindName(d.targets)},
                       {"example", d.example}});
  }
  return all;
}

std::string sourceFormatsToText() {
  std::ostringstream os;
  for (const auto& d : sourceFormats()) {
    os << d.name << " - " << d.title << ": " << d.help << '\n';
    os << "    targets: " << targetKindName(d.targets) << '\n';
    for (const auto& field : d.fields)
      os << "    " << field.key << " (" << sourceFieldKindName(field.kind) << "): " << field.help
         << '\n';
    os << "    limit (count, default 0): " << sourceLimitHelp() << '\n';
    os << "    e.g. " << d.example.dump() << '\n';
  }
  os << "Paths are relative to the project file's folder.\n";
  return os.str();
}

}  // namespace netsmith::data
