#pragma once

// An object's box, as detection data gives it (YOLO, COCO, Pascal VOC: data/box_formats.h); below
// both data and augment, which each read and move it.
#include <cstdint>

namespace netsmith::target {

/// One object's box in the pixels of its image (0 <= x0 < x1 <= width, 0 <= y0 < y1 <=
/// height), its class an index into the project's classes.
struct Box {
  std::int64_t cls = 0;
  float x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  bool crowd = false;      ///< COCO iscrowd: left out of matching (neither found nor missed)
  bool difficult = false;  ///< Pascal VOC difficult: the same
};

inline bool operator==(const Box& a, const Box& b) {
  return a.cls == b.cls && a.x0 == b.x0 && a.y0 == b.y0 && a.x1 == b.x1 && a.y1 == b.y1 &&
         a.crowd == b.crowd && a.difficult == b.difficult;
}

}  // namespace netsmith::target
