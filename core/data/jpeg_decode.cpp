#include "data/jpeg_decode.h"

#include <algorithm>
#include <csetjmp>
#include <cstdint>
#include <cstdio>  // jpeglib.h needs FILE and size_t declared first

#include <jpeglib.h>

#include "data/dataset_source.h"

namespace netsmith::data {

namespace {

constexpr int kMaxProgressiveScans = 500;  // libjpeg-turbo's own advice for untrusted files

struct JpegErrors {
  jpeg_error_mgr pub;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX] = {};
  bool tooManyScans = false;
};

void jpegErrorExit(j_common_ptr c) {
  auto* errors = reinterpret_cast<JpegErrors*>(c->err);
  (*c->err->format_message)(c, errors->message);
  std::longjmp(errors->jump, 1);
}

// Warnings (a file cut short is filled with grey, as OpenCV decodes it) stay quiet: libjpeg
// would print them on stderr from a loader thread.
void jpegQuiet(j_common_ptr, int) {}

void jpegProgress(j_common_ptr c) {
  if (!c->is_decompressor) return;
  const auto* d = reinterpret_cast<j_decompress_ptr>(c);
  if (d->input_scan_number > kMaxProgressiveScans) {
    auto* errors = reinterpret_cast<JpegErrors*>(c->err);
    errors->tooManyScans = true;
    std::longjmp(errors->jump, 1);
  }
}

/// Everything the decode touches lives here, outside the function that calls setjmp, so a
/// longjmp back into it skips no destructor and leaves no local in doubt.
struct JpegJob {
  jpeg_decompress_struct cinfo{};
  JpegErrors errors{};
  jpeg_progress_mgr progress{};
  const std::vector<unsigned char>* bytes = nullptr;
  std::uint64_t maxPixels = 0;
  const RegionChooser* choose = nullptr;
  bool tooLarge = false;
  bool unhandled = false;
  std::uint64_t pixels = 0;
  cv::Mat rows;         ///< the decoded rows, iMCU-aligned columns
  cv::Rect region;      ///< in image coordinates
  int columnShift = 0;  ///< region.x - the first decoded column
};

/// false: libjpeg failed (errors.message / tooManyScans) or the job set tooLarge / unhandled.
bool runJpegJob(JpegJob& job) {
  j_decompress_ptr c = &job.cinfo;
  if (setjmp(job.errors.jump)) return false;
  jpeg_mem_src(c, job.bytes->data(), static_cast<unsigned long>(job.bytes->size()));
  jpeg_read_header(c, TRUE);
  job.pixels = std::uint64_t(c->image_width) * c->image_height;
  if (job.pixels > job.maxPixels) {
    job.tooLarge = true;
    return false;
  }
  if (c->data_precision != 8 || c->jpeg_color_space == JCS_CMYK ||
      c->jpeg_color_space == JCS_YCCK) {
    job.unhandled = true;
    return false;
  }
  c->out_color_space = c->num_components == 1 ? JCS_GRAYSCALE : JCS_RGB;
  c->progress = &job.progress;
  job.progress.progress_monitor = jpegProgress;
  jpeg_start_decompress(c);
  const cv::Rect whole(0, 0, int(c->output_width), int(c->output_height));
  const cv::Rect region = chosenRegion(*job.choose, whole.size());
  job.region = region;
  // One column more on each side: fancy chroma upsampling repeats the edge column of a cropped
  // window where a whole decode reads the neighbour, so the window's own edges may differ.
  const int from = std::max(0, region.x - 1);
  const int to = std::min(whole.width, region.x + region.width + 1);
  JDIMENSION firstColumn = JDIMENSION(from);
  JDIMENSION columns = JDIMENSION(to - from);
  if (to - from < whole.width) jpeg_crop_scanline(c, &firstColumn, &columns);
  job.columnShift = region.x - int(firstColumn);
  if (region.y > 0) jpeg_skip_scanlines(c, JDIMENSION(region.y));
  job.rows.create(region.height, int(c->output_width), CV_8UC(c->output_components));
  while (c->output_scanline < JDIMENSION(region.y + region.height)) {
    JSAMPROW row = job.rows.ptr<unsigned char>(int(c->output_scanline) - region.y);
    if (jpeg_read_scanlines(c, &row, 1) != 1) {  // no more data: the rest is black
      job.rows.rowRange(int(c->output_scanline) - region.y, region.height).setTo(0);
      break;
    }
  }
  // Rows below the region are never decoded.
  jpeg_abort_decompress(c);
  return true;
}

}  // namespace

cv::Rect chosenRegion(const RegionChooser& choose, cv::Size size) {
  const cv::Rect whole({0, 0}, size);
  const cv::Rect region = choose ? choose(size) & whole : whole;
  return region.empty() ? whole : region;
}

bool looksLikeJpeg(const std::vector<unsigned char>& bytes) {
  return bytes.size() >= 3 && bytes[0] == 0xFF && bytes[1] == 0xD8 && bytes[2] == 0xFF;
}

JpegResult decodeJpeg(const std::vector<unsigned char>& bytes, const std::string& path,
                      std::uint64_t maxPixels, const RegionChooser& choose) {
  JpegJob job;
  job.bytes = &bytes;
  job.maxPixels = maxPixels;
  job.choose = &choose;
  job.cinfo.err = jpeg_std_error(&job.errors.pub);
  job.errors.pub.error_exit = jpegErrorExit;
  job.errors.pub.emit_message = jpegQuiet;
  jpeg_create_decompress(&job.cinfo);
  bool ok = false;
  try {
    ok = runJpegJob(job);
  } catch (...) {  // an allocation that failed, or the chooser: libjpeg's memory is freed first
    jpeg_destroy_decompress(&job.cinfo);
    throw;
  }
  jpeg_destroy_decompress(&job.cinfo);
  JpegResult result;
  if (job.unhandled) return result;
  result.handled = true;
  if (job.tooLarge) {
    throw SampleError(path + ": not read: " + std::to_string(job.pixels / 1000000) +
                      " megapixels is more than the " + std::to_string(maxPixels / 1000000) +
                      " one image may have (a decompression bomb, or a scan to shrink first)");
  }
  if (job.errors.tooManyScans) {
    throw SampleError(path + ": not read: a progressive JPEG of more than " +
                      std::to_string(kMaxProgressiveScans) + " scans");
  }
  if (!ok) {
    throw SampleError(path + ": not a readable image (" + std::string(job.errors.message) + ")");
  }
  // The columns of the region: the decoded rows start at an iMCU boundary at or left of it.
  result.image = job.rows.colRange(job.columnShift, job.columnShift + job.region.width);
  return result;
}

}  // namespace netsmith::data
