// The detection annotation formats as a data set from elsewhere holds them: the first byte
// chooses the reader (a COCO instances file read as a stream, with and without the project's
// classes and under either error policy; a Pascal VOC XML file; YOLO labels; YOLO names as
// data.yaml or a names file), the rest is the file. Any exception other than netsmith::Error is
// a finding, as is any crash, hang or sanitizer report.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/error.h"
#include "data/box_formats.h"

using namespace netsmith;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::vector<std::string> classes{"cat", "dog"};
  try {
    switch (data[0] % 6) {
      case 0:
        (void)data::parseCoco(text, {}, false, "fuzz/coco.json");
        break;
      case 1:
        (void)data::parseCoco(text, classes, true, "fuzz/coco.json");
        break;
      case 2:
        (void)data::parseVoc(text, classes, "fuzz/a.xml");
        break;
      case 3:
        (void)data::parseYoloLabels(text, 40, 30, 2, "fuzz/a.txt");
        break;
      case 4:
        (void)data::parseYoloNames(text, true, "fuzz/data.yaml");
        break;
      default:
        (void)data::parseYoloNames(text, false, "fuzz/classes.txt");
    }
  } catch (const Error&) {
    // Refused by name: what a bad file should get.
  }
  return 0;
}
