#include "data/data_detect.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>
#include <sstream>

#include <opencv2/core.hpp>

#include "common/error.h"
#include "common/file_util.h"
#include "data/box_formats.h"
#include "data/dataset_source.h"

namespace netsmith::data {

namespace fs = std::filesystem;

namespace {

// Listing a folder: at most this many entries are looked at to recognise it.
constexpr std::size_t kMaxListed = 200000;
// Annotation and label files are small; a larger one is skipped while looking for names.
constexpr std::uint64_t kMaxNameFileBytes = std::uint64_t(16) << 20;

std::string lower(std::string s) {
  for (auto& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool isFolder(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}
bool isFile(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

/// The sub-folder of `dir` whose name is one of `names` (any case), or an empty path.
fs::path childFolder(const fs::path& dir, std::initializer_list<const char*> names) {
  std::error_code ec;
  std::size_t seen = 0;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end && seen < kMaxListed;
       it.increment(ec), ++seen) {
    const std::string name = lower(it->path().filename().string());
    for (const char* n : names)
      if (name == n && isFolder(it->path())) return it->path();
  }
  return {};
}

/// Whether `dir` holds a file for which `accept` is true (among its first entries).
bool holds(const fs::path& dir, bool (*accept)(const std::string&)) {
  std::error_code ec;
  std::size_t seen = 0;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end && seen < kMaxListed;
       it.increment(ec), ++seen)
    if (accept(it->path().filename().string()) && isFile(it->path())) return true;
  return false;
}

/// The files of `dir` for which `accept` is true, sorted by name.
std::vector<fs::path> filesIn(const fs::path& dir, bool (*accept)(const std::string&)) {
  std::vector<fs::path> out;
  std::error_code ec;
  std::size_t seen = 0;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end && seen < kMaxListed;
       it.increment(ec), ++seen)
    if (accept(it->path().filename().string()) && isFile(it->path())) out.push_back(it->path());
  std::sort(out.begin(), out.end());
  return out;
}

bool isTxt(const std::string& n) {
  return hasExtension(n, ".txt") && lower(n) != "classes.txt";
}
bool isXml(const std::string& n) {
  return hasExtension(n, ".xml");
}
bool isPng(const std::string& n) {
  return hasExtension(n, ".png");
}
bool isJson(const std::string& n) {
  return hasExtension(n, ".json");
}

/// Sub-folders of `dir` that hold images directly: a folder of class folders has two or more.
std::size_t classFolders(const fs::path& dir) {
  std::size_t found = 0;
  std::error_code ec;
  std::size_t seen = 0;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end && seen < kMaxListed;
       it.increment(ec), ++seen)
    if (isFolder(it->path()) && holds(it->path(), isImageFileName)) ++found;
  return found;
}

/// The COCO file of a folder: annotations.json, else the one .json file in it or in an
/// annotations/ folder beside (instances_train2017.json).
fs::path cocoFileIn(const fs::path& dir) {
  for (const auto& d : {dir, childFolder(dir, {"annotations"})}) {
    if (d.empty()) continue;
    if (isFile(d / "annotations.json")) return d / "annotations.json";
    const auto jsons = filesIn(d, isJson);
    if (jsons.size() == 1) return jsons[0];
  }
  return {};
}

struct Layout {
  std::string format;
  TargetKind targets = TargetKind::ClassIndex;
  Json source;
  std::string note;
};

/// The layouts one folder holds, in the order they are preferred.
std::vector<Layout> layoutsIn(const fs::path& dir) {
  std::vector<Layout> out;
  const fs::path images = childFolder(dir, {"images", "jpegimages"});
  const std::string d = dir.filename().string();
  if (!images.empty() && holds(images, isImageFileName)) {
    const std::string imagesName = images.filename().string();
    if (const auto masks = childFolder(dir, {"masks", "segmentationclass"});
        !masks.empty() && holds(masks, isPng))
      out.push_back(
          {"mask_folders", TargetKind::ClassMask,
           Json{{"format", "mask_folders"}, {"images", images.string()}, {"masks", masks.string()}},
           d + "/" + imagesName + " + " + masks.filename().string() + "/: images and masks"});
    if (const auto labels = childFolder(dir, {"labels"}); !labels.empty() && holds(labels, isTxt))
      out.push_back(
          {"yolo", TargetKind::Boxes,
           Json{{"format", "yolo"}, {"images", images.string()}, {"labels", labels.string()}},
           d + "/" + imagesName + " + labels/: a YOLO set"});
    if (const auto coco = cocoFileIn(dir); !coco.empty())
      out.push_back(
          {"coco", TargetKind::Boxes,
           Json{{"format", "coco"}, {"annotations", coco.string()}, {"images", images.string()}},
           d + "/" + imagesName + " + " + coco.filename().string() + ": a COCO set"});
    if (const auto xml = childFolder(dir, {"annotations"}); !xml.empty() && holds(xml, isXml))
      out.push_back(
          {"voc", TargetKind::Boxes,
           Json{{"format", "voc"}, {"annotations", xml.string()}, {"images", images.string()}},
           d + "/" + imagesName + " + " + xml.filename().string() + "/ (.xml): a Pascal VOC set"});
  }
  // Class folders only where no images/ folder says the sub-folders are something else.
  if (out.empty() && classFolders(dir) >= 2)
    out.push_back({"image_folder", TargetKind::ClassIndex,
                   Json{{"format", "image_folder"}, {"root", dir.string()}},
                   d + "/: one folder of images per class"});
  return out;
}

/// The kind of a CSV manifest from its header: path,label a class each; path,labels a set of
/// labels; otherwise numbers per column (or 0/1 per class when a task that takes label sets
/// asks for it).
Layout csvLayout(const fs::path& file, std::optional<TargetKind> want) {
  const std::string text = readTextFile(file.string(), std::uint64_t(1) << 20);
  std::string header = text.substr(0, text.find('\n'));
  if (!header.empty() && header.back() == '\r') header.pop_back();
  std::vector<std::string> columns;
  std::stringstream ss(header);
  for (std::string c; std::getline(ss, c, ',');)
    columns.push_back(lower(std::string(c)));
  const std::string where = file.string() + " line 1";
  if (columns.size() < 2 || columns[0] != "path")
    throw Error(where +
                ": not a manifest this program reads; the header must start with path, "
                "then label (a class each), labels (a set of labels) or one column per "
                "target (numbers), found \"" +
                printable(header.substr(0, 200)) + "\"");
  const std::string f = file.filename().string();
  if (columns.size() == 2 && columns[1] == "label")
    return {"csv", TargetKind::ClassIndex, Json{{"format", "csv"}, {"manifest", file.string()}},
            f + ": a CSV manifest, a class per image"};
  if ((columns.size() == 2 && columns[1] == "labels") || want == TargetKind::MultiHot)
    return {"multilabel_csv", TargetKind::MultiHot,
            Json{{"format", "multilabel_csv"}, {"manifest", file.string()}},
            f + ": a CSV manifest, a set of labels per image"};
  return {"regression_csv", TargetKind::RealVector,
          Json{{"format", "regression_csv"}, {"manifest", file.string()}},
          f + ": a CSV manifest, " + std::to_string(columns.size() - 1) + " number(s) per image"};
}

/// The same layout in another split's folder (val/, test/), or null when it has none.
Json sameLayoutIn(const fs::path& dir, const std::string& format) {
  for (auto& l : layoutsIn(dir))
    if (l.format == format) return l.source;
  return nullptr;
}

/// Pick the layout that gives `want` (else the first), or explain what was found.
Layout pick(std::vector<Layout> found, std::optional<TargetKind> want, const fs::path& where,
            std::vector<std::string>& alternatives) {
  std::size_t chosen = 0;
  if (want) {
    chosen = found.size();
    for (std::size_t i = 0; i < found.size() && chosen == found.size(); ++i)
      if (found[i].targets == *want) chosen = i;
    if (chosen == found.size()) {
      std::string kinds;
      for (const auto& l : found)
        kinds += (kinds.empty() ? "" : ", ") + l.format + " (" + targetKindName(l.targets) + ")";
      throw Error(where.string() + ": holds " + kinds + "; nothing with " + targetKindName(*want) +
                  ", which the chosen task takes");
    }
  }
  for (std::size_t i = 0; i < found.size(); ++i)
    if (i != chosen) alternatives.push_back(found[i].format);
  return found[chosen];
}

std::string notFound(const fs::path& path) {
  return path.string() +
         ": no data this program recognises: a folder with one sub-folder of images per class; "
         "images/ with masks/ (segmentation), labels/ (YOLO), annotations.json (COCO) or "
         "annotations/*.xml (Pascal VOC); a CSV manifest (path,label / path,labels / path and "
         "numbers); each either as it is or split into train/ (val/, test/) folders or "
         "train.csv (val.csv, test.csv)";
}

/// Mask folders' classes: the values the masks hold, 0 .. the largest below 255 (255 is
/// "ignore").
void maskFolderClassNames(DetectedData& d) {
  std::size_t files = 0, more = 0;
  int largest = 0;
  for (const auto& split : d.splits) {
    for (const auto& mask : filesIn(split.source["masks"].get<std::string>(), isPng)) {
      if (files >= kMaxNameScanFiles) {
        ++more;
        continue;
      }
      ++files;
      try {
        const cv::Mat m = decodeMaskFile(mask.string());
        cv::Mat valid = m != 255;
        double lo = 0, hi = 0;
        if (cv::countNonZero(valid) > 0) cv::minMaxLoc(m, &lo, &hi, nullptr, nullptr, valid);
        largest = std::max(largest, int(hi));
      } catch (const Error&) {
        // An unreadable mask is the scan's to name; it adds no class.
      }
    }
  }
  d.classes.push_back("background");
  for (int c = 1; c <= std::max(largest, 1); ++c)
    d.classes.push_back("class " + std::to_string(c));
  d.notes.push_back("classes: mask values 0 to " + std::to_string(std::max(largest, 1)) + " in " +
                    std::to_string(files) + " mask(s)" +
                    (more ? " (" + std::to_string(more) + " more not read)" : "") +
                    "; 0 named background, the others class N: rename them in the project");
}

/// Pascal VOC's classes: the object names of its annotations, in alphabetical order.
void vocClassNames(DetectedData& d) {
  const Json& train = d.splits.front().source;
  std::size_t files = 0, more = 0;
  std::set<std::string> names;
  for (const auto& split : d.splits)
    for (const auto& xml : filesIn(split.source["annotations"].get<std::string>(), isXml)) {
      if (files >= kMaxNameScanFiles) {
        ++more;
        continue;
      }
      ++files;
      try {
        for (auto& n : vocObjectNames(readTextFile(xml.string(), kMaxNameFileBytes), xml.string()))
          names.insert(std::move(n));
      } catch (const Error&) {
        // A broken annotation is the scan's to name.
      }
    }
  if (names.empty())
    throw Error(train["annotations"].get<std::string>() +
                ": no <object> with a <name> in its .xml files; nothing is labelled");
  d.classes.assign(names.begin(), names.end());
  d.notes.push_back("classes: the object names of " + std::to_string(files) +
                    " annotation(s), in alphabetical order" +
                    (more ? " (" + std::to_string(more) + " more not read)" : ""));
}

/// YOLO's classes when it has no data.yaml or classes.txt to read them from: class N for every
/// id up to the largest in the label files.
void yoloClassNames(DetectedData& d) {
  const Json& train = d.splits.front().source;
  std::size_t files = 0, more = 0;
  const fs::path labels = train["labels"].get<std::string>();
  for (const auto& dir : {labels.parent_path(), labels.parent_path().parent_path()})
    for (const char* name : {"data.yaml", "data.yml"})
      if (isFile(dir / name)) return;  // the source reads its names
  if (isFile(labels / "classes.txt")) return;
  long largest = -1;
  for (const auto& split : d.splits)
    for (const auto& txt : filesIn(split.source["labels"].get<std::string>(), isTxt)) {
      if (files >= kMaxNameScanFiles) {
        ++more;
        continue;
      }
      ++files;
      std::string text;
      try {
        text = readTextFile(txt.string(), kMaxNameFileBytes);
      } catch (const Error&) {
        continue;
      }
      std::istringstream lines(text);
      for (std::string line; std::getline(lines, line);) {
        char* end = nullptr;
        const long c = std::strtol(line.c_str(), &end, 10);
        if (end != line.c_str() && c >= 0 && c < 100000) largest = std::max(largest, c);
      }
    }
  for (long c = 0; c <= largest; ++c)
    d.classes.push_back("class " + std::to_string(c));
  d.notes.push_back("classes: no data.yaml or classes.txt; class ids 0 to " +
                    std::to_string(largest) +
                    " in the label files, named class N: rename "
                    "them in the project");
}

/// Class names for the sources that cannot name their classes themselves.
void findClassNames(DetectedData& d) {
  if (d.format == "mask_folders")
    maskFolderClassNames(d);
  else if (d.format == "voc")
    vocClassNames(d);
  else if (d.format == "yolo")
    yoloClassNames(d);
}

}  // namespace

DetectedData detectData(const std::string& pathText, std::optional<TargetKind> want) {
  std::error_code ec;
  const fs::path path = fs::absolute(fs::path(pathText), ec).lexically_normal();
  if (ec || !fs::exists(path, ec)) throw Error(pathText + ": no such file or folder");
  DetectedData d;
  d.path = path.string();
  const auto take = [&](const Layout& l, const std::string& split) {
    if (d.format.empty()) {
      d.format = l.format;
      d.targets = l.targets;
    }
    d.splits.push_back({split, l.source});
    d.notes.push_back(l.note);
  };

  if (isFile(path)) {
    const std::string name = lower(path.filename().string());
    if (hasExtension(name, ".csv")) {
      take(csvLayout(path, want), "train");
      if (name == "train.csv")
        for (const auto& [file, split] :
             {std::pair{"val.csv", "validation"}, std::pair{"validation.csv", "validation"},
              std::pair{"test.csv", "test"}})
          if (isFile(path.parent_path() / file) &&
              (split != std::string("validation") || d.splits.size() == 1))
            take(csvLayout(path.parent_path() / file, d.targets), split);
    } else if (hasExtension(name, ".json")) {
      const fs::path images = childFolder(path.parent_path(), {"images"});
      take({"coco", TargetKind::Boxes,
            Json{{"format", "coco"},
                 {"annotations", path.string()},
                 {"images", (images.empty() ? path.parent_path() : images).string()}},
            path.filename().string() + ": a COCO file"},
           "train");
    } else if (name == "data.yaml" || name == "data.yml") {
      return detectData(path.parent_path().string(), want);
    } else {
      throw Error(notFound(path));
    }
  } else if (isFolder(path)) {
    if (isFile(path / "train.csv")) return detectData((path / "train.csv").string(), want);
    const fs::path trainDir = childFolder(path, {"train", "training"});
    std::vector<Layout> found = trainDir.empty() ? std::vector<Layout>{} : layoutsIn(trainDir);
    if (!found.empty()) {
      const Layout l = pick(found, want, trainDir, d.alternatives);
      take(l, "train");
      const auto addSplit = [&](const fs::path& dir, const std::string& split) {
        if (dir.empty()) return;
        if (Json s = sameLayoutIn(dir, l.format); !s.is_null()) {
          d.splits.push_back({split, s});
          d.notes.push_back(dir.filename().string() + "/: the " + split + " split");
        }
      };
      addSplit(childFolder(path, {"val", "valid", "validation"}), "validation");
      addSplit(childFolder(path, {"test", "testing"}), "test");
    } else {
      found = layoutsIn(path);
      if (found.empty()) throw Error(notFound(path));
      take(pick(found, want, path, d.alternatives), "train");
    }
  } else {
    throw Error(pathText + ": not a file or folder");
  }
  if (want && d.targets != *want)
    throw Error(d.path + ": " + d.format + " gives " + targetKindName(d.targets) + ", not " +
                targetKindName(*want) + ", which the chosen task takes");
  findClassNames(d);
  return d;
}

}  // namespace netsmith::data
