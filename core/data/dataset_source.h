#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <opencv2/core/mat.hpp>

#include "common/error.h"
#include "data/data_config.h"
#include "data/jpeg_decode.h"
#include "target/box.h"

namespace netsmith::data {

/// One sample that cannot be used (corrupt file, unreadable, wrong label). The message names
/// the file (and line or record where there is one).
class SampleError : public Error {
 public:
  using Error::Error;
};

/// A file or record left out of a dataset, and why.
struct SkippedItem {
  std::string item;  ///< file path, "manifest.csv line 12", "train-labels... record 7"
  std::string reason;
};

/// The item `item` skipped for `error`, naming the item once (a SampleError's text starts with
/// the file it is about).
inline SkippedItem skippedFor(const std::string& item, const std::string& error) {
  const std::string prefix = item + ": ";
  return {item, error.rfind(prefix, 0) == 0 ? error.substr(prefix.size()) : error};
}

/// A run of class indices owned by a source (valid while it lives).
struct LabelList {
  const std::int32_t* first = nullptr;
  const std::int32_t* last = nullptr;
  const std::int32_t* begin() const { return first; }
  const std::int32_t* end() const { return last; }
  std::size_t size() const { return std::size_t(last - first); }
};

/// Where samples come from. Labels are known without decoding; images are decoded on demand
/// (thread-safe: loader workers call load() concurrently).
class DatasetSource {
 public:
  virtual ~DatasetSource() = default;
  virtual std::int64_t size() const = 0;
  /// Sample i's class, or -1 where a sample has no single class (multi-label, regression).
  virtual std::int64_t label(std::int64_t i) const = 0;
  /// The group stratified splits and limits keep in proportion, in [0, numStrata()): the class
  /// for single-label sources; see TableTargetSource for the others.
  virtual std::int64_t stratum(std::int64_t i) const { return label(i); }
  virtual std::int64_t numStrata() const { return numClasses(); }
  /// Targets known without decoding, one row of targetWidth() floats per sample (multi-label:
  /// 1 or 0 per class; regression: the target columns). Width 0: the class label is the target.
  virtual std::int64_t targetWidth() const { return 0; }
  /// Writes sample i's target row (targetWidth() floats) to `out`.
  virtual void targetRow(std::int64_t i, float* out) const;
  /// targetRow() as a vector.
  std::vector<float> targetValues(std::int64_t i) const;
  /// A multi-label sample's classes, ascending (its row's ones, kept sparse: a row costs its
  /// labels, not the number of classes). Empty for every other source.
  virtual LabelList positiveLabels(std::int64_t i) const;
  /// The names of a regression source's targets, in row order (empty for other sources).
  const std::vector<std::string>& targetNames() const { return m_targetNames; }
  /// The decoded image: CV_8UC1 (grey) or CV_8UC3 (RGB order). Throws SampleError.
  virtual cv::Mat load(std::int64_t i) const = 0;
  /// The part of image i that `choose` picks from its size, as load(i) cut to it (a view is
  /// fine). Sources that can decode part of a file (JPEG) decode only that part.
  virtual cv::Mat loadRegion(std::int64_t i, const RegionChooser& choose) const;
  /// Whether samples carry a class mask (load() and loadMask() give the same size).
  virtual bool hasMasks() const { return false; }
  /// Sample i's mask: CV_8UC1, one class index per pixel (255: ignore), the image's size.
  /// Throws SampleError naming the mask file (unreadable, another size, a value that is no
  /// class).
  virtual cv::Mat loadMask(std::int64_t i) const;
  /// Whether samples carry object boxes (yolo, coco, voc sources).
  virtual bool hasBoxes() const { return false; }
  /// Sample i's boxes in the pixels of its image as decoded (`width` x `height`), clipped to
  /// it. Throws SampleError naming the annotation (unreadable, a class that is none, a box of
  /// no area, an image of another size than its annotation says).
  virtual std::vector<target::Box> loadBoxes(std::int64_t i, int width, int height) const;
  /// Names sample i for messages: a file path, or "FILE #i" for packed formats.
  virtual std::string describe(std::int64_t i) const = 0;
  /// Class names in label order (may be generated: "0", "1", ...).
  const std::vector<std::string>& classNames() const { return m_classes; }
  std::int64_t numClasses() const { return static_cast<std::int64_t>(m_classes.size()); }
  /// Items left out while scanning (non-image files, bad manifest lines under `skip`).
  const std::vector<SkippedItem>& skippedAtScan() const { return m_skipped; }
  /// Whether its samples carry targets at all: false for images to predict on (openImageList),
  /// whose predictions are written without truth.
  virtual bool labelled() const { return true; }

 protected:
  std::vector<std::string> m_classes;
  std::vector<std::string> m_targetNames;
  std::vector<SkippedItem> m_skipped;
};

/// A source with one image file per sample (image folders, CSV manifests): subclasses fill
/// the file and label lists while scanning.
class FileListSource : public DatasetSource {
 public:
  std::int64_t size() const override;
  std::int64_t label(std::int64_t i) const override;
  cv::Mat load(std::int64_t i) const override;
  cv::Mat loadRegion(std::int64_t i, const RegionChooser& choose) const override;
  std::string describe(std::int64_t i) const override;

 protected:
  std::vector<std::string> m_files;
  std::vector<std::int64_t> m_labels;
};

/// A manifest whose targets are a table of numbers (multi-label, regression). Its strata keep
/// splits and limits representative: a multi-label sample's stratum is its rarest label (by
/// the file's counts; one more stratum for samples without labels), a regression sample's the
/// decile of its first target. An approximation of iterative stratification: every label with
/// at least as many samples as strata get shares keeps samples on both sides of a split.
class TableTargetSource : public FileListSource {
 public:
  std::int64_t stratum(std::int64_t i) const override;
  std::int64_t numStrata() const override { return m_numStrata; }
  std::int64_t targetWidth() const override { return m_width; }
  void targetRow(std::int64_t i, float* out) const override;
  LabelList positiveLabels(std::int64_t i) const override;

 protected:
  /// Sets the strata from the rows (after the targets and m_width are filled).
  void stratifyByRarestLabel();
  void stratifyByFirstTarget();
  /// Appends a multi-label row: its classes, ascending.
  void addLabelRow(const std::vector<std::int32_t>& classes);

  std::int64_t m_width = 0;
  bool m_sparse = false;         ///< multi-label rows: m_rowStart and m_on; else m_targets
  std::vector<float> m_targets;  ///< size() x m_width (regression)
  std::vector<std::int64_t> m_rowStart{0};  ///< row i's labels: m_on[m_rowStart[i], [i + 1])
  std::vector<std::int32_t> m_on;
  std::vector<std::int64_t> m_strata;
  std::int64_t m_numStrata = 1;
};

/// Opens a source. Throws netsmith::Error naming `spec.path` and the file for problems that
/// make the whole source unusable (missing file, wrong magic number, no classes...). Bad
/// individual items are skipped (and listed) under ErrorPolicy::Skip, or thrown under Fail.
/// `classes`: the project's class names, if it gives them.
std::shared_ptr<DatasetSource> openSource(const SourceSpec& spec,
                                          const std::vector<std::string>& classes,
                                          ErrorPolicy policy);

// Per-format openers (one file each).
std::shared_ptr<DatasetSource> openIdxSource(const SourceSpec& spec,
                                             const std::vector<std::string>& classes,
                                             ErrorPolicy policy);
std::shared_ptr<DatasetSource> openImageFolderSource(const SourceSpec& spec,
                                                     const std::vector<std::string>& classes,
                                                     ErrorPolicy policy);
std::shared_ptr<DatasetSource> openCsvSource(const SourceSpec& spec,
                                             const std::vector<std::string>& classes,
                                             ErrorPolicy policy);
std::shared_ptr<DatasetSource> openMultiLabelCsvSource(const SourceSpec& spec,
                                                       const std::vector<std::string>& classes,
                                                       ErrorPolicy policy);
std::shared_ptr<DatasetSource> openRegressionCsvSource(const SourceSpec& spec,
                                                       const std::vector<std::string>& classes,
                                                       ErrorPolicy policy);
std::shared_ptr<DatasetSource> openMaskFolderSource(const SourceSpec& spec,
                                                    const std::vector<std::string>& classes,
                                                    ErrorPolicy policy);
/// Detection annotations (data/box_sources.cpp).
std::shared_ptr<DatasetSource> openYoloSource(const SourceSpec& spec,
                                              const std::vector<std::string>& classes,
                                              ErrorPolicy policy);
std::shared_ptr<DatasetSource> openCocoSource(const SourceSpec& spec,
                                              const std::vector<std::string>& classes,
                                              ErrorPolicy policy);
std::shared_ptr<DatasetSource> openVocSource(const SourceSpec& spec,
                                             const std::vector<std::string>& classes,
                                             ErrorPolicy policy);
std::shared_ptr<DatasetSource> openCifarSource(const SourceSpec& spec,
                                               const std::vector<std::string>& classes,
                                               ErrorPolicy policy);

/// Decodes an image file to CV_8UC1 / CV_8UC3 RGB (alpha dropped, 16-bit scaled to 8-bit).
/// The most pixels one image may have (a small PNG can announce 30000x30000 and cost 4.5 GB).
constexpr std::uint64_t kMaxImagePixels = 100'000'000;

/// Throws SampleError naming the file when it is empty, missing, larger than kMaxImagePixels
/// or not a readable image. With `choose`: only the region it picks (see RegionChooser).
cv::Mat decodeImageFile(const std::string& path, const RegionChooser& choose = {});

/// Decodes a mask file to CV_8UC1 class indices: a single-channel PNG (8-bit, or 16-bit with
/// values up to 255) as it is; a palette PNG as its palette indices. Throws SampleError naming
/// the file when it is unreadable, too large (as decodeImageFile) or holds colour that is no
/// palette index.
cv::Mat decodeMaskFile(const std::string& path);
/// decodeMaskFile() on a file's bytes (`path` names it in messages).
cv::Mat decodeMaskBytes(const std::vector<unsigned char>& bytes, const std::string& path);
/// The checks every decode makes on a file's bytes: not empty, a PNG, JPEG, BMP, WebP or TIFF
/// by its first bytes (nothing else reaches OpenCV's decoders), a PNG announcing at most
/// kMaxImagePixels and running on to IEND. Throws SampleError naming `path`.
void checkImageBytes(const std::vector<unsigned char>& bytes, const std::string& path);

/// True for the extensions an image folder takes: png jpg jpeg bmp webp tif tiff (any case).
bool isImageFileName(const std::string& name);
/// The image files anywhere under `dir`, in listing order. Entries named with a leading dot
/// are ignored; links to folders are followed, each real folder once (`visited`, canonical
/// paths, shared across calls): a link back up the tree is noted, not entered. What is left
/// out (unreadable, not an image by its extension, a folder already listed) goes to `skipped`.
std::vector<std::string> imageFilesUnder(const std::string& dir,
                                         std::set<std::filesystem::path>& visited,
                                         std::vector<SkippedItem>& skipped);
/// Images to predict on: each input an image file (taken whatever its extension: the decoder
/// checks its bytes) or a folder searched with imageFilesUnder(), files sorted within a folder,
/// the same file once. No targets (labelled() is false); `classes` names the model's classes.
/// Throws netsmith::Error naming an input that does not exist, or when no image is found
/// (naming what was skipped).
std::shared_ptr<DatasetSource> openImageList(const std::vector<std::string>& inputs,
                                             const std::vector<std::string>& classes);
/// Files a source's scan found unusable (unpaired, clashing): under on_error "fail" the first
/// ends the opening, naming it and how many more there are; under "skip" all are listed in
/// `skipped`.
void settleScanProblems(const std::vector<SkippedItem>& problems, const SourceSpec& spec,
                        ErrorPolicy policy, std::vector<SkippedItem>& skipped);
/// True for names ending in `extension` (".png", ".txt"; any case).
bool hasExtension(const std::string& name, const std::string& extension);

/// The entries at the top of `dir` whose names `accept` takes, by stem (dot-names ignored;
/// other regular files listed in `skipped` as "not <kind>"); a FIFO, folder or broken link
/// with such a name is kept, so that reading it fails by name. A second file of a stem already
/// seen is listed in `clashes`. Throws netsmith::Error naming `where` when `dir` is no folder.
std::map<std::string, std::string> filesByStem(const std::string& dir, const std::string& where,
                                               bool (*accept)(const std::string&),
                                               const std::string& kind,
                                               std::vector<SkippedItem>& skipped,
                                               std::vector<SkippedItem>& clashes);

/// An image of a source and the file paired with it by stem in a second folder ("" when that
/// folder has none): YOLO's label file, a mask.
struct StemPair {
  std::string stem;
  std::string image;
  std::string other;
};

/// The images of `spec.images` (filesByStem, in stem order), each paired with the file of its
/// stem in `spec`'s folder `otherKey` (`otherDir`: "labels", "masks") that `accept` takes;
/// `orphans`: the files there without an image, except one of the stem `notASample` (YOLO's
/// classes.txt). Files by the same stem go to `problems`, unusable names to `skipped`, as
/// filesByStem puts them.
struct StemPairs {
  std::vector<StemPair> pairs;
  std::vector<SkippedItem> orphans;
};
StemPairs pairByStem(const SourceSpec& spec, const std::string& otherKey,
                     const std::string& otherDir, bool (*accept)(const std::string&),
                     const std::string& kind, std::vector<SkippedItem>& skipped,
                     std::vector<SkippedItem>& problems, const std::string& notASample = {});

/// Sample i's boxes in the pixels of its image, whose size is read from its header where the
/// format allows (a one-pixel region: JPEGs are not decoded). Throws SampleError.
std::vector<target::Box> readBoxes(const DatasetSource& source, std::int64_t i);
/// Sample i's mask, refused as training refuses it (data/sample_processor.cpp) when its size is
/// not its image's (the data scan counts as skipped what the loader would skip). Throws
/// SampleError.
cv::Mat readMask(const DatasetSource& source, std::int64_t i);

}  // namespace netsmith::data
