// The CSV manifest readers (class labels, multi-label, regression) and the detection
// annotation parsers (YOLO labels and names, COCO JSON, Pascal VOC XML: data/box_formats.h).
// The first byte picks the class list (none, or three given names), the error policy and the
// reader (and for regression whether data.targets names two columns); the rest is the
// manifest, which sits beside a small valid PNG ("a.png") and a file that is not an image
// ("b.png") so rows can name both, or the annotation text.
#include <opencv2/imgcodecs.hpp>

#include "common/error.h"
#include "data/box_formats.h"
#include "data/dataset_source.h"
#include "fuzz_data_sources.h"
#include "fuzz_input.h"

using namespace netsmith;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const bool images = [] {
    cv::imwrite(fuzz::scratchDir() + "/a.png", cv::Mat(8, 8, CV_8UC3, cv::Scalar(10, 200, 30)));
    const std::uint8_t notImage[] = "not an image";
    fuzz::writeScratch("b.png", notImage, sizeof notImage - 1);
    return true;
  }();
  (void)images;
  if (size < 1) return 0;
  const int reader = (data[0] >> 2) % 7;
  if (reader >= 3) {
    // An annotation parser on the text (every one must end in bounded time with a result or
    // a netsmith::Error).
    const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
    const std::vector<std::string> names{"cat", "dog", "bird"};
    const bool given = data[0] & 0x01;
    try {
      if (reader == 3) (void)data::parseYoloLabels(text, 64, 48, given ? 3 : 0, "a.txt");
      if (reader == 4) (void)data::parseYoloNames(text, given, "data.yaml");
      if (reader == 5)
        (void)data::parseCoco(text, given ? names : std::vector<std::string>{}, data[0] & 0x02,
                              "a.json");
      if (reader == 6) (void)data::parseVoc(text, names, "a.xml");
    } catch (const Error&) {
    }
    return 0;
  }
  data::SourceSpec spec;
  static const data::SourceFormat kFormats[] = {data::SourceFormat::Csv,
                                                data::SourceFormat::MultiLabelCsv,
                                                data::SourceFormat::RegressionCsv};
  spec.format = kFormats[reader];
  if (data[0] & 0x40) spec.targets = {"v", "w"};
  spec.path = "data.train";
  spec.manifest = fuzz::writeScratch("manifest.csv", data + 1, size - 1);
  const auto mode = fuzz::sourceMode(data[0], {"cat", "dog", "bird"});
  try {
    fuzz::exerciseSource(data::openSource(spec, mode.classes, mode.policy));
  } catch (const Error&) {
  }
  return 0;
}
