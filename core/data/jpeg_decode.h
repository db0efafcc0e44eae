#pragma once

// JPEG decoding with libjpeg-turbo directly: straight to RGB or grey (no BGR detour), and, for a
// loader whose first step cuts a region (RandomResizedCrop), only the rows and iMCU columns that
// hold the region. No LibTorch here.
#include <functional>
#include <string>
#include <vector>

#include <opencv2/core/mat.hpp>

namespace netsmith::data {

/// Chooses the part of an image of the given size to decode (x, y, width, height), before any
/// pixel is decoded. Returning the whole image is always allowed.
using RegionChooser = std::function<cv::Rect(cv::Size)>;

/// What `choose` picks for an image of `size`, kept inside the image; the whole image when
/// there is no chooser or nothing of the pick is inside.
cv::Rect chosenRegion(const RegionChooser& choose, cv::Size size);

/// True when `bytes` start as a JPEG file does (SOI marker then another marker).
bool looksLikeJpeg(const std::vector<unsigned char>& bytes);

/// The outcome of decodeJpeg: `handled` false for JPEGs this path leaves to OpenCV (CMYK and
/// YCCK, which libjpeg-turbo does not turn into RGB); otherwise `image` is CV_8UC3 (RGB) or
/// CV_8UC1, exactly `region` of the image.
struct JpegResult {
  bool handled = false;
  cv::Mat image;
};

/// Decodes `bytes` (named `path` in errors). Throws SampleError for a corrupt file, more pixels
/// than `maxPixels`, or more than 500 progressive scans (a small file can ask for thousands,
/// each a pass over the whole image). `choose` may be empty (the whole image). The pixels are
/// those of a whole decode cut to the region: libjpeg-turbo skips rows above it (entropy
/// decoding only), stops below it and runs the inverse DCT only on the iMCU columns it covers.
JpegResult decodeJpeg(const std::vector<unsigned char>& bytes, const std::string& path,
                      std::uint64_t maxPixels, const RegionChooser& choose);

}  // namespace netsmith::data
