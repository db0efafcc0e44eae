// The CSV manifest readers (class labels, multi-label, regression). The first byte picks the
// class list (none, or three given names), the error policy and the reader (and for
// regression whether data.targets names two columns); the rest is the manifest, which sits beside a
// small valid PNG
// ("a.png") and a file that is not an image ("b.png") so rows can name both.
#include <opencv2/imgcodecs.hpp>

#include "common/error.h"
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
  data::SourceSpec spec;
  static const data::SourceFormat kFormats[] = {data::SourceFormat::Csv,
                                                data::SourceFormat::MultiLabelCsv,
                                                data::SourceFormat::RegressionCsv};
  spec.format = kFormats[(data[0] >> 2) % 3];
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
