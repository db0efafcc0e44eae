// Object detection data: images with boxes, in the three formats people have.
//   yolo  an images folder and a labels folder of .txt files paired by file stem (a.jpg with
//         a.txt; an image without a label file holds no object), one `class cx cy w h` line
//         per object, normalised; class names from data.classes, else a data.yaml (`names:`)
//         in the labels folder's parent or grandparent (where Ultralytics keeps it), else a
//         classes.txt in the labels folder
//   coco  a COCO instances JSON and the images folder its file_names are relative to;
//         iscrowd boxes are kept, marked crowd (left out of matching)
//   voc   a folder of Pascal VOC .xml files and the images folder, paired by file stem;
//         <difficult> boxes marked difficult; class names from data.classes (VOC files carry
//         none of their own)
// Boxes are checked where they are read (box_formats.h): clipped to the image, a box of no
// area refused by name; a sample's boxes are in the pixels of its image as decoded, and an
// image whose size differs from its annotation's is refused by name.
#include <algorithm>
#include <filesystem>
#include <map>

#include "common/file_util.h"
#include "data/box_formats.h"
#include "data/dataset_source.h"
#include "data/image_geometry.h"

namespace netsmith::data {

namespace {

namespace fs = std::filesystem;

/// The most bytes read from one annotation file (a YOLO or VOC file per image) and from a
/// COCO file (all images at once).
constexpr std::uint64_t kMaxAnnotationBytes = std::uint64_t(16) << 20;

bool isTextName(const std::string& name) {
  return hasExtension(name, ".txt");
}
bool isXmlName(const std::string& name) {
  return hasExtension(name, ".xml");
}

/// A source of images whose boxes come with them: one stratum (no class per sample). Its
/// images are numbered by their place, from 1, and its classes from 1, unless the annotations
/// have ids of their own (COCO sets them).
class BoxSource : public FileListSource, public AnnotationIds {
 public:
  std::int64_t stratum(std::int64_t) const override { return 0; }
  std::int64_t numStrata() const override { return 1; }
  bool hasBoxes() const override { return true; }

  std::int64_t imageId(std::int64_t i) const override {
    return m_imageIds.empty() ? i + 1 : m_imageIds.at(std::size_t(i));
  }
  std::string imageFile(std::int64_t i) const override {
    return m_imageFiles.empty() ? fs::path(m_files.at(std::size_t(i))).filename().string()
                                : m_imageFiles.at(std::size_t(i));
  }
  std::vector<std::int64_t> categoryIds() const override {
    if (!m_categoryIds.empty()) return m_categoryIds;
    std::vector<std::int64_t> ids(m_classes.size());
    for (std::size_t k = 0; k < ids.size(); ++k)
      ids[k] = std::int64_t(k) + 1;
    return ids;
  }

 protected:
  std::vector<std::int64_t> m_imageIds;     ///< per sample; empty: place + 1
  std::vector<std::string> m_imageFiles;    ///< per sample; empty: the file's name
  std::vector<std::int64_t> m_categoryIds;  ///< per class; empty: class + 1
};

/// Boxes read at opening (COCO, VOC), with the image size the annotation gives (0: none).
class StoredBoxSource : public BoxSource {
 public:
  std::vector<target::Box> loadBoxes(std::int64_t i, int width, int height) const override {
    const auto k = static_cast<std::size_t>(i);
    const auto& size = m_sizes.at(k);
    if ((size.first > 0 && size.first != width) || (size.second > 0 && size.second != height)) {
      throw SampleError(m_files.at(k) + ": the image is " + std::to_string(width) + "x" +
                        std::to_string(height) + " but " + m_annotations.at(k) + " says " +
                        std::to_string(size.first) + "x" + std::to_string(size.second));
    }
    return m_boxes.at(k);
  }

 protected:
  void add(const std::string& image, const std::string& annotation, int width, int height,
           std::vector<target::Box> boxes) {
    m_files.push_back(image);
    m_labels.push_back(-1);
    m_annotations.push_back(annotation);
    m_sizes.emplace_back(width, height);
    m_boxes.push_back(std::move(boxes));
  }

 private:
  std::vector<std::string> m_annotations;  ///< what names each sample's boxes in messages
  std::vector<std::pair<int, int>> m_sizes;
  std::vector<std::vector<target::Box>> m_boxes;
};

class YoloSource : public BoxSource {
 public:
  YoloSource(const SourceSpec& spec, const std::vector<std::string>& classes, ErrorPolicy policy) {
    m_classes = classes.empty() ? namesBeside(spec) : classes;
    std::vector<SkippedItem> problems;
    // classes.txt beside the labels names the classes (Label Studio's and YOLO tools' exports
    // put it there); it is no image's labels. An image without a label file has no objects.
    const auto found = pairByStem(spec, "labels", spec.labels, isTextName, "a .txt label file",
                                  m_skipped, problems, "classes");
    for (const auto& pair : found.pairs) {
      m_files.push_back(pair.image);
      m_labels.push_back(-1);
      m_labelFiles.push_back(pair.other);
    }
    problems.insert(problems.end(), found.orphans.begin(), found.orphans.end());
    settleScanProblems(problems, spec, policy, m_skipped);
    if (m_files.empty()) throw Error(spec.path + ".images: no image in " + spec.images);
    // Every image a negative would train a detector that finds nothing, without a word.
    if (std::all_of(m_labelFiles.begin(), m_labelFiles.end(),
                    [](const std::string& f) { return f.empty(); }))
      throw Error(spec.path + ".labels: no image of " + spec.images + " has a label file in " +
                  spec.labels + " (<image stem>.txt); nothing is labelled");
  }

  std::vector<target::Box> loadBoxes(std::int64_t i, int width, int height) const override {
    const std::string& file = m_labelFiles.at(static_cast<std::size_t>(i));
    if (file.empty()) return {};  // no label file: an image without objects
    std::string text;
    try {
      text = readTextFile(file, kMaxAnnotationBytes);
    } catch (const Error& e) {
      throw SampleError(e.what());
    }
    return parseYoloLabels(text, width, height, numClasses(), file);
  }

 private:
  /// The class names YOLO's tools keep beside the labels: data.yaml's `names` in the labels
  /// folder's parent or grandparent, else classes.txt in the labels folder.
  static std::vector<std::string> namesBeside(const SourceSpec& spec) {
    const fs::path labels(spec.labels);
    for (const auto& dir : {labels.parent_path(), labels.parent_path().parent_path()}) {
      for (const char* name : {"data.yaml", "data.yml"}) {
        const fs::path yaml = dir / name;
        std::error_code ec;
        if (!dir.empty() && fs::is_regular_file(yaml, ec))
          return parseYoloNames(readTextFile(yaml.string(), kMaxAnnotationBytes), true,
                                yaml.string());
      }
    }
    const fs::path list = labels / "classes.txt";
    std::error_code ec;
    if (fs::is_regular_file(list, ec))
      return parseYoloNames(readTextFile(list.string(), kMaxAnnotationBytes), false, list.string());
    throw Error(spec.path +
                ": a yolo source needs its class names: set data.classes, or put a data.yaml "
                "with names: beside the labels folder (" +
                labels.parent_path().string() + ") or a classes.txt in it");
  }

  std::vector<std::string> m_labelFiles;  ///< per sample; "" : no objects
};

class CocoSource : public StoredBoxSource {
 public:
  CocoSource(const SourceSpec& spec, const std::vector<std::string>& classes, ErrorPolicy policy) {
    const std::string where = spec.path + ".annotations: " + spec.annotations;
    const auto coco = readCocoFile(spec.annotations, classes, policy == ErrorPolicy::Skip, where);
    m_classes = coco.categories;
    m_skipped = coco.skipped;
    std::error_code ec;
    if (!fs::is_directory(spec.images, ec))
      throw Error(spec.path + ".images: " + spec.images + ": not a folder");
    std::vector<SkippedItem> problems;
    for (const auto& image : coco.images) {
      const std::string path = (fs::path(spec.images) / image.file).string();
      std::error_code fec;
      if (!fs::is_regular_file(path, fec)) {
        problems.push_back({path, "no such image (" + spec.annotations + ", image id " +
                                      std::to_string(image.id) + ")"});
        continue;
      }
      add(path, spec.annotations + " (image id " + std::to_string(image.id) + ")", image.width,
          image.height, image.boxes);
      m_imageIds.push_back(image.id);
      m_imageFiles.push_back(image.file);
    }
    m_categoryIds = coco.categoryIds;
    settleScanProblems(problems, spec, policy, m_skipped);
    if (m_files.empty()) throw Error(where + ": no image of it is in " + spec.images);
  }
};

class VocSource : public StoredBoxSource {
 public:
  VocSource(const SourceSpec& spec, const std::vector<std::string>& classes, ErrorPolicy policy) {
    if (classes.empty()) {
      throw Error(spec.path +
                  ": a voc source needs the class names (VOC files carry none of their own): "
                  "set data.classes, e.g. [\"person\", \"car\"]");
    }
    m_classes = classes;
    std::vector<SkippedItem> problems;
    const auto images = filesByStem(spec.images, spec.path + ".images: " + spec.images,
                                    isImageFileName, "an image file", m_skipped, problems);
    const auto xmls = filesByStem(spec.annotations, spec.path + ".annotations: " + spec.annotations,
                                  isXmlName, "an .xml annotation", m_skipped, problems);
    for (const auto& [stem, image] : images) {
      const auto x = xmls.find(stem);
      if (x == xmls.end()) {
        problems.push_back({image, "no annotation " + stem + ".xml in " + spec.annotations});
        continue;
      }
      try {
        const auto voc =
            parseVoc(readTextFile(x->second, kMaxAnnotationBytes), m_classes, x->second);
        add(image, x->second, voc.width, voc.height, voc.boxes);
      } catch (const Error& e) {
        problems.push_back(skippedFor(x->second, e.what()));
      }
    }
    for (const auto& [stem, xml] : xmls)
      if (!images.count(stem))
        problems.push_back({xml, "no image named " + stem + " in " + spec.images});
    settleScanProblems(problems, spec, policy, m_skipped);
    if (m_files.empty())
      throw Error(spec.path + ": no image in " + spec.images + " has an annotation in " +
                  spec.annotations + " (paired by file stem: a.jpg with a.xml)");
  }
};

}  // namespace

std::shared_ptr<DatasetSource> openYoloSource(const SourceSpec& spec,
                                              const std::vector<std::string>& classes,
                                              ErrorPolicy policy) {
  return std::make_shared<YoloSource>(spec, classes, policy);
}

std::shared_ptr<DatasetSource> openCocoSource(const SourceSpec& spec,
                                              const std::vector<std::string>& classes,
                                              ErrorPolicy policy) {
  return std::make_shared<CocoSource>(spec, classes, policy);
}

std::shared_ptr<DatasetSource> openVocSource(const SourceSpec& spec,
                                             const std::vector<std::string>& classes,
                                             ErrorPolicy policy) {
  return std::make_shared<VocSource>(spec, classes, policy);
}

}  // namespace netsmith::data
