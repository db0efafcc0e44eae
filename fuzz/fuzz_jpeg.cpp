// The loader's own image decoders: its JPEG decoder (data/jpeg_decode), whole images and
// regions, and the mask reader (grey and palette PNGs, data/dataset_source.h) on the same
// bytes. The first four bytes choose the region (as fractions of the image's size, so every
// input asks for a region of the image it announces); the rest is the file.
#include <algorithm>

#include "data/dataset_source.h"
#include "data/jpeg_decode.h"
#include "fuzz_input.h"

using namespace netsmith;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 4) return 0;
  const std::vector<unsigned char> bytes(data + 4, data + size);
  const data::RegionChooser choose = [data](cv::Size s) {
    const int x = s.width * data[0] / 256, y = s.height * data[1] / 256;
    const int w = std::max(1, (s.width - x) * data[2] / 255);
    const int h = std::max(1, (s.height - y) * data[3] / 255);
    return cv::Rect(x, y, w, h);
  };
  // 16 megapixels at most here (the loader allows 100): the fuzzer's memory stays bounded.
  constexpr std::uint64_t kFuzzMaxPixels = 16'000'000;
  try {
    const auto region = data::decodeJpeg(bytes, "fuzz.jpg", kFuzzMaxPixels, choose);
    if (region.handled && region.image.empty()) __builtin_trap();  // handled means an image
    data::decodeJpeg(bytes, "fuzz.jpg", kFuzzMaxPixels, {});
  } catch (const data::SampleError&) {
  }
  try {
    const cv::Mat mask = data::decodeMaskBytes(bytes, "fuzz.png");
    if (mask.type() != CV_8UC1) __builtin_trap();  // a mask is one byte per pixel
  } catch (const data::SampleError&) {
  }
  return 0;
}
