#include "data/example_datasets.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <random>
#include <set>

#include "common/error.h"
#include "common/file_util.h"
#include "common/json.h"
#include "data/csv_table.h"
#include "data/dataset_source.h"

namespace netsmith::data {

namespace fs = std::filesystem;

namespace {

constexpr double kPi = 3.14159265358979323846;

std::shared_ptr<DatasetSource> items(const std::string& folder, const std::string& prefix) {
  SourceSpec spec;
  spec.format = SourceFormat::Idx;
  spec.path = "--source";
  spec.images = (fs::path(folder) / (prefix + "-images-idx3-ubyte.gz")).string();
  spec.labels = (fs::path(folder) / (prefix + "-labels-idx1-ubyte.gz")).string();
  return openIdxSource(spec, fashionMnistClasses(), ErrorPolicy::Fail);
}

/// An object's box: its class (0-based, no background) and pixels [x0, x1) x [y0, y1).
struct MadeBox {
  int cls = 0;
  int x0 = 0, y0 = 0, x1 = 0, y1 = 0;
};

/// One image and its manifest cells (after the path), or its mask and boxes.
struct Made {
  cv::Mat image;
  std::vector<std::string> cells;
  cv::Mat mask;                ///< mask data sets: CV_8UC1 class indices (255: ignore)
  std::vector<MadeBox> boxes;  ///< scenes: each item's box around its pixels of the mask
};
using Maker = std::function<Made(const DatasetSource& items, std::mt19937_64& rng)>;

Made mosaic(const DatasetSource& items, std::mt19937_64& rng) {
  std::uniform_int_distribution<std::int64_t> pick(0, items.size() - 1);
  std::bernoulli_distribution empty(0.35);
  Made m;
  m.image = cv::Mat::zeros(56, 56, CV_8UC1);
  std::set<std::int64_t> present;
  bool filled[4];
  do {
    for (bool& f : filled)
      f = !empty(rng);
  } while (!(filled[0] || filled[1] || filled[2] || filled[3]));
  for (int cell = 0; cell < 4; ++cell) {
    if (!filled[cell]) continue;
    const auto i = pick(rng);
    items.load(i).copyTo(m.image(cv::Rect((cell % 2) * 28, (cell / 2) * 28, 28, 28)));
    present.insert(items.label(i));
  }
  std::string labels;
  for (auto k : present)
    labels += (labels.empty() ? "" : ";") + items.classNames()[std::size_t(k)];
  m.cells = {csvCell(labels)};
  return m;
}

Made rotation(const DatasetSource& items, std::mt19937_64& rng) {
  std::uniform_int_distribution<std::int64_t> pick(0, items.size() - 1);
  std::uniform_real_distribution<double> turn(-45.0, 45.0);
  // An angle with two decimals, so the manifest holds exactly the angle the image was made
  // with.
  const double angle = std::round(turn(rng) * 100) / 100;
  const cv::Mat item = items.load(pick(rng));
  const cv::Mat r = cv::getRotationMatrix2D(cv::Point2f(13.5f, 13.5f), angle, 1.0);
  Made m;
  cv::warpAffine(item, m.image, r, item.size(), cv::INTER_LINEAR, cv::BORDER_CONSTANT, 0);
  char buf[64];
  const double rad = angle * kPi / 180;
  std::snprintf(buf, sizeof buf, "%.2f", angle);
  m.cells.push_back(buf);
  std::snprintf(buf, sizeof buf, "%.9g", std::sin(rad));
  m.cells.push_back(buf);
  std::snprintf(buf, sizeof buf, "%.9g", std::cos(rad));
  m.cells.push_back(buf);
  return m;
}

/// Pixels of an item at least this bright are the item's; fainter ones (its blurred edge) are
/// pasted too but marked 255 (ignore), as Pascal VOC marks object borders.
constexpr uchar kItemLevel = 32;

Made scene(const DatasetSource& items, std::mt19937_64& rng) {
  std::uniform_int_distribution<std::int64_t> pick(0, items.size() - 1);
  std::uniform_int_distribution<int> count(1, 3), at(0, 64 - 28);
  Made m;
  m.image = cv::Mat::zeros(64, 64, CV_8UC1);
  m.mask = cv::Mat::zeros(64, 64, CV_8UC1);
  // Items apart from each other: a place is drawn until its 28x28 box meets no other (a few
  // tries; an item that finds none is left out, so a scene may hold fewer than drawn).
  std::vector<cv::Rect> placed;
  const int n = count(rng);
  for (int k = 0; k < n; ++k) {
    const auto i = pick(rng);
    cv::Rect box;
    bool free = false;
    for (int attempt = 0; attempt < 20 && !free; ++attempt) {
      box = cv::Rect(at(rng), at(rng), 28, 28);
      free = std::none_of(placed.begin(), placed.end(),
                          [&](const cv::Rect& r) { return (r & box).area() > 0; });
    }
    if (!free) continue;
    placed.push_back(box);
    const cv::Mat item = items.load(i);
    const auto cls = static_cast<uchar>(items.label(i) + 1);  // 0 is the background
    // The item's box: around the pixels its mask gives its class (the faint edge left out).
    MadeBox tight{int(items.label(i)), 64, 64, 0, 0};
    for (int y = 0; y < 28; ++y) {
      for (int x = 0; x < 28; ++x) {
        const uchar v = item.at<uchar>(y, x);
        if (v == 0) continue;
        m.image.at<uchar>(box.y + y, box.x + x) = v;
        m.mask.at<uchar>(box.y + y, box.x + x) = v >= kItemLevel ? cls : 255;
        if (v < kItemLevel) continue;
        tight.x0 = std::min(tight.x0, box.x + x);
        tight.y0 = std::min(tight.y0, box.y + y);
        tight.x1 = std::max(tight.x1, box.x + x + 1);
        tight.y1 = std::max(tight.y1, box.y + y + 1);
      }
    }
    if (tight.x1 > tight.x0 && tight.y1 > tight.y0) m.boxes.push_back(tight);
  }
  return m;
}

/// `text` with XML's special characters escaped.
std::string xmlText(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else
      out += c;
  }
  return out;
}

/// A scene's boxes as a YOLO label file: `class cx cy w h`, normalised by the image's size.
std::string yoloLabels(const Made& m) {
  std::string text;
  const double w = m.image.cols, h = m.image.rows;
  for (const auto& b : m.boxes) {
    char line[128];
    std::snprintf(line, sizeof line, "%d %.9g %.9g %.9g %.9g\n", b.cls, (b.x0 + b.x1) / 2.0 / w,
                  (b.y0 + b.y1) / 2.0 / h, (b.x1 - b.x0) / w, (b.y1 - b.y0) / h);
    text += line;
  }
  return text;
}

/// A scene's boxes as a Pascal VOC annotation (1-based inclusive pixels: xmin = x0 + 1,
/// xmax = x1).
std::string vocAnnotation(const Made& m, const std::string& file,
                          const std::vector<std::string>& classes) {
  std::string text = "<annotation>\n  <filename>" + xmlText(file) + "</filename>\n  <size><width>" +
                     std::to_string(m.image.cols) + "</width><height>" +
                     std::to_string(m.image.rows) + "</height><depth>1</depth></size>\n";
  for (const auto& b : m.boxes) {
    text += "  <object>\n    <name>" + xmlText(classes.at(std::size_t(b.cls))) +
            "</name>\n    <difficult>0</difficult>\n    <bndbox><xmin>" + std::to_string(b.x0 + 1) +
            "</xmin><ymin>" + std::to_string(b.y0 + 1) + "</ymin><xmax>" + std::to_string(b.x1) +
            "</xmax><ymax>" + std::to_string(b.y1) + "</ymax></bndbox>\n  </object>\n";
  }
  return text + "</annotation>\n";
}

struct Kind {
  ExampleDatasetInfo info;
  std::string header;  ///< the manifest's columns after path (empty: images and masks)
  Maker make;
};

const std::vector<Kind>& kinds() {
  static const std::vector<Kind> k{
      {{"mosaics",
        "multi-label: 2x2 grids of Fashion-MNIST items (56x56), some cells empty; labels = "
        "the classes present",
        12000, 1000},
       "labels",
       mosaic},
      {{"rotations",
        "regression: Fashion-MNIST items turned by a known angle in [-45, 45) degrees; targets "
        "angle, sin and cos",
        6000, 1000},
       "angle,sin,cos",
       rotation},
      {{"scenes",
        "segmentation: 1 to 3 Fashion-MNIST items placed apart on a 64x64 canvas; masks label "
        "each item's pixels with its class (1 to 10), the background 0, faint edges 255 "
        "(ignore)",
        6000, 1000},
       "",
       scene},
  };
  return k;
}

/// Writes `bytes` as a new file `rel` under `out`. A new file in a folder made here (the
/// manifests or the folder renames, last, are the step that makes the data set whole):
/// O_EXCL | O_NOFOLLOW, so nothing planted there is followed or overwritten.
void writeNewText(const std::string& out, const std::string& rel, const std::string& bytes) {
  const std::string file = (fs::path(out) / rel).string();
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) throw IoError(file + ": cannot create (" + std::strerror(errno) + ")");
  const bool written = ::write(fd, bytes.data(), bytes.size()) == ssize_t(bytes.size());
  ::close(fd);
  if (!written) throw IoError(file + ": cannot write");
}

/// Writes `image` as a new PNG file `rel` under `out` (as writeNewText).
void writeNewPng(const std::string& out, const std::string& rel, const cv::Mat& image) {
  std::vector<uchar> png;
  if (!cv::imencode(".png", image, png)) throw Error(out + ": cannot encode " + rel);
  writeNewText(out, rel, std::string(png.begin(), png.end()));
}

/// Writes one split's images and returns its manifest's text. A mask data set (no header)
/// writes <split>.incomplete/images and /masks, and the scenes' boxes in the three detection
/// formats: /labels (YOLO, one .txt per image), /annotations (Pascal VOC, one .xml per image)
/// and /annotations.json (COCO), renamed to <split> once every file is there.
std::string writeSplit(const Kind& kind, const DatasetSource& source, const std::string& out,
                       const std::string& split, std::int64_t count, std::uint64_t seed,
                       std::int64_t offset, std::int64_t total,
                       const ExampleDatasetOptions& options) {
  const bool masks = kind.header.empty();
  const std::string imageDir = masks ? split + ".incomplete/images" : "images/" + split;
  const std::string maskDir = split + ".incomplete/masks";
  makeRealFolder((fs::path(out) / imageDir).parent_path().string());
  makeRealFolder((fs::path(out) / imageDir).string());
  const std::string boxDir = split + ".incomplete";
  if (masks) {
    makeRealFolder((fs::path(out) / maskDir).string());
    makeRealFolder((fs::path(out) / boxDir / "labels").string());
    makeRealFolder((fs::path(out) / boxDir / "annotations").string());
  }
  const auto& classes = source.classNames();
  Json coco{
      {"images", Json::array()}, {"annotations", Json::array()}, {"categories", Json::array()}};
  for (std::size_t c = 0; c < classes.size(); ++c)
    coco["categories"].push_back(Json{{"id", c + 1}, {"name", classes[c]}});
  std::int64_t annotationId = 0;
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + (split == "train" ? 1 : 2));
  std::string manifest = "path," + kind.header + "\n";
  for (std::int64_t i = 0; i < count; ++i) {
    const Made m = kind.make(source, rng);
    char name[32];
    std::snprintf(name, sizeof name, "%06lld.png", (long long)i);
    const std::string rel = imageDir + "/" + name;
    writeNewPng(out, rel, m.image);
    if (masks) {
      writeNewPng(out, maskDir + "/" + name, m.mask);
      const std::string stem = std::string(name).substr(0, 6);
      writeNewText(out, boxDir + "/labels/" + stem + ".txt", yoloLabels(m));
      writeNewText(out, boxDir + "/annotations/" + stem + ".xml", vocAnnotation(m, name, classes));
      coco["images"].push_back(Json{
          {"id", i + 1}, {"file_name", name}, {"width", m.image.cols}, {"height", m.image.rows}});
      for (const auto& b : m.boxes)
        coco["annotations"].push_back(Json{{"id", ++annotationId},
                                           {"image_id", i + 1},
                                           {"category_id", b.cls + 1},
                                           {"bbox", {b.x0, b.y0, b.x1 - b.x0, b.y1 - b.y0}},
                                           {"area", (b.x1 - b.x0) * (b.y1 - b.y0)},
                                           {"iscrowd", 0}});
    }
    manifest += rel;
    for (const auto& c : m.cells)
      manifest += "," + c;
    manifest += "\n";
    if (options.progress && !options.progress(offset + i + 1, total))
      throw Error("stopped: " + out + " is incomplete (no manifest written)");
  }
  if (masks) writeNewText(out, boxDir + "/annotations.json", coco.dump());
  return manifest;
}

}  // namespace

const std::vector<std::string>& fashionMnistClasses() {
  static const std::vector<std::string> k{"T-shirt/top", "Trouser",   "Pullover", "Dress",
                                          "Coat",        "Sandal",    "Shirt",    "Sneaker",
                                          "Bag",         "Ankle boot"};
  return k;
}

const std::vector<ExampleDatasetInfo>& exampleDatasets() {
  static const std::vector<ExampleDatasetInfo> infos = [] {
    std::vector<ExampleDatasetInfo> v;
    for (const auto& k : kinds())
      v.push_back(k.info);
    return v;
  }();
  return infos;
}

void makeExampleDataset(const ExampleDatasetOptions& options) {
  const Kind* kind = nullptr;
  std::string known;
  for (const auto& k : kinds()) {
    if (k.info.name == options.name) kind = &k;
    known += (known.empty() ? "" : ", ") + k.info.name;
  }
  if (!kind) throw Error("unknown data set \"" + printable(options.name) + "\"; known: " + known);
  const std::int64_t train = options.train > 0 ? options.train : kind->info.train;
  const std::int64_t test = options.test > 0 ? options.test : kind->info.test;
  if (train > 1000000 || test > 1000000) throw Error("at most 1,000,000 images per split");
  std::error_code ec;
  if (fs::exists(fs::symlink_status(options.out, ec)) &&
      !(fs::is_directory(fs::symlink_status(options.out, ec)) && fs::is_empty(options.out, ec)))
    throw Error(options.out + ": exists and is not an empty folder; name a new one");
  makeRealFolder(options.out);
  const auto trainItems = items(options.source, "train");
  const auto testItems = items(options.source, "t10k");
  const std::string trainCsv = writeSplit(*kind, *trainItems, options.out, "train", train,
                                          options.seed, 0, train + test, options);
  const std::string testCsv = writeSplit(*kind, *testItems, options.out, "test", test, options.seed,
                                         train, train + test, options);
  if (kind->header.empty()) {
    // YOLO's class names, where its tools look for them (the labels folders' grandparent).
    std::string yaml =
        "# the scenes' classes for their YOLO labels (train/labels, test/labels)\n"
        "train: train/images\nval: test/images\nnames:\n";
    const auto& classes = trainItems->classNames();
    for (std::size_t c = 0; c < classes.size(); ++c)
      yaml += "  " + std::to_string(c) + ": '" + classes[c] + "'\n";
    writeNewText(options.out, "data.yaml", yaml);
    for (const char* split : {"test", "train"}) {
      const fs::path done = fs::path(options.out) / split;
      fs::rename(fs::path(options.out) / (std::string(split) + ".incomplete"), done, ec);
      if (ec) throw IoError(done.string() + ": cannot finish (" + ec.message() + ")");
    }
    return;
  }
  writeFileAtomically((fs::path(options.out) / "test.csv").string(), testCsv);
  writeFileAtomically((fs::path(options.out) / "train.csv").string(), trainCsv);
}

}  // namespace netsmith::data
