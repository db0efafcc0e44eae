#pragma once

// Object-detection box annotations in the three formats people bring: YOLO label files (and
// their data.yaml / names files), COCO instances JSON and Pascal VOC XML. Pure parsing: each
// function reads text it is given and touches no file. Every function runs in time and memory
// linear in its input, whatever the input holds (no recursion, no size taken from a number in
// the file).

#include <cstdint>
#include <string>
#include <vector>

#include "data/dataset_source.h"  // SampleError (thrown for bad annotations), SkippedItem
#include "target/box.h"           // Box: pixels, x0 = 4, x1 = 16 for pixel columns 4..15

namespace netsmith::data {

/// The largest image side the formats take: coordinates are floats, exact up to 2^24.
constexpr int kMaxBoxImageSide = 1 << 24;

/// A box clipped to a width x height image; throws SampleError naming `where` when nothing of
/// it is left inside (zero area) or a coordinate is not finite.
///   clipBox({0, -3, 2, 50, 9}, 40, 30, "a.txt line 1")  // -> {0, 0, 2, 40, 9}
target::Box clipBox(target::Box box, int width, int height, const std::string& where);

/// A YOLO label file (one `class cx cy w h` line per object, normalised to [0, 1]; blank lines
/// allowed; an empty file is an image without objects) as boxes in the pixels of a width x height
/// image. Throws SampleError naming `where`, the line and the problem: a class >= classes, a
/// value that is not a number, a line with another count of fields (YOLO segmentation
/// polygons are refused by name), a box of zero area after clipping, a file over 64 MiB.
///   parseYoloLabels("1 0.25 0.2 0.3 0.2666667\n", 40, 30, 2, "labels/a.txt")
///   // -> {cls 1, x 4..16, y 2..10}
std::vector<target::Box> parseYoloLabels(const std::string& text, int width, int height,
                                         std::int64_t classes, const std::string& where);

/// Class names from a YOLO data.yaml (`names: [a, b, c]`, `names: ['a', "b"]`, or the block
/// form `names:\n  0: a\n  1: b` with indices 0..n-1 in any order; also `names: {0: a, 1: b}`
/// and a block list `names:\n  - a\n  - b`) or from a names file (one name per line, blank
/// lines ignored) — `yaml` says which. Only the top-level `names` key of the YAML is read;
/// `#` comments are skipped. Throws netsmith::Error naming `where` (missing names key, an
/// index missing or repeated, a non-integer index, no names at all, more than 100,000 names,
/// a file over 16 MiB).
std::vector<std::string> parseYoloNames(const std::string& text, bool yaml,
                                        const std::string& where);

struct CocoImage {
  std::int64_t id = 0;
  std::string file;  ///< file_name as written (relative to the images folder)
  int width = 0, height = 0;
  std::vector<target::Box> boxes;
};
struct CocoDataset {
  std::vector<std::string> categories;  ///< class names, index = class
  /// The file's category id of each class (-1: a project class the file has no category for):
  /// what COCO results written for this data carry.
  std::vector<std::int64_t> categoryIds;
  std::vector<CocoImage> images;  ///< in the file's order
  /// Annotations left out under skip (item names the annotation id).
  std::vector<SkippedItem> skipped;
};
/// A COCO instances JSON: images (id, file_name, width, height), annotations (image_id,
/// category_id, bbox [x, y, w, h] in pixels, iscrowd), categories (id, name). Classes: when
/// `classes` is non-empty they name the categories in class order (a category not in it is an
/// error naming it); otherwise the categories sorted by id. Throws netsmith::Error naming
/// `where` and the JSON path ("annotations[12].bbox") for a malformed file; a bad annotation
/// (zero area after clipping, unknown image_id or category_id) is an error unless `skipBad`, in
/// which case it goes to `skipped` (item: "WHERE annotation ID"). Bounded: refuses more than
/// 10 million annotations or images or 100,000 categories, a file_name longer than 4096, or
/// with a ".." component, an absolute path or a NUL; two images or categories with one id and
/// two categories with one name are refused too.
/// Read as a stream (nlohmann's SAX events): memory is that of the images, categories and
/// annotations kept, not of a document tree; elements of other members and annotations'
/// segmentation polygons are skipped unbuilt. Two images naming one file are refused, and so
/// is a file name holding a control character. Parse errors name the byte.
CocoDataset parseCoco(const std::string& text, const std::vector<std::string>& classes,
                      bool skipBad, const std::string& where);

/// The largest COCO file read (COCO 2017's train annotations are 448 MiB).
constexpr std::uint64_t kMaxCocoBytes = std::uint64_t(1) << 30;

/// parseCoco() streamed from the file `path` (a regular file of at most kMaxCocoBytes), never
/// holding its whole text.
CocoDataset readCocoFile(const std::string& path, const std::vector<std::string>& classes,
                         bool skipBad, const std::string& where);

struct VocAnnotation {
  std::string file;           ///< <filename>; empty when the file has none
  int width = 0, height = 0;  ///< <size>
  std::vector<target::Box> boxes;
};
/// A Pascal VOC XML annotation: <annotation><filename>, <size><width><height><depth>, and per
/// <object>: <name>, <difficult> (0/1, optional), <bndbox><xmin><ymin><xmax><ymax>. VOC counts
/// pixels from 1 and its boxes include their last pixel, so a box over pixel columns 4..15
/// (0-based) is written xmin 5, xmax 16 and read as x0 = xmin - 1 = 4, x1 = xmax = 16 (likewise
/// y). Class by name in `classes` (an unknown name: SampleError naming it and up to 10 known
/// ones). Only <object> children of <annotation> are objects (a <part> inside an <object> is
/// not); other elements (<pose>, <truncated>, <segmented>, ...) are ignored.
/// The XML reader is our own and small: elements, text, CDATA, comments, processing
/// instructions, the five predefined entities and numeric character references; attributes
/// are skipped. It refuses DOCTYPE and ENTITY declarations (nothing is expanded), nesting
/// deeper than 64, more than 1,000,000 elements, files over 16 MiB and unbalanced tags, with
/// SampleError naming `where` and the line.
VocAnnotation parseVoc(const std::string& text, const std::vector<std::string>& classes,
                       const std::string& where);

/// The <name> of every <object> of a Pascal VOC annotation, in file order (as parseVoc reads
/// them, nothing else checked): how a project made from a VOC set finds its classes. Throws
/// SampleError naming `where` as parseVoc does for text that is no annotation.
std::vector<std::string> vocObjectNames(const std::string& text, const std::string& where);

}  // namespace netsmith::data
