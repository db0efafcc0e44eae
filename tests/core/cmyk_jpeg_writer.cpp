// A CMYK JPEG for the decoder's fallback test (OpenCV 4.6 cannot write one). Kept out of the
// test program's batches: libjpeg's macros (TRUE, FALSE, boolean) stay in this file.
#include <cstdio>  // jpeglib.h needs FILE and size_t declared first
#include <cstdlib>
#include <vector>

#include <jpeglib.h>

namespace netsmith::testutil {

std::vector<unsigned char> cmykJpeg(int width, int height) {
  jpeg_compress_struct c{};
  jpeg_error_mgr errors{};
  c.err = jpeg_std_error(&errors);
  jpeg_create_compress(&c);
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&c, &buffer, &size);
  c.image_width = JDIMENSION(width);
  c.image_height = JDIMENSION(height);
  c.input_components = 4;
  c.in_color_space = JCS_CMYK;
  jpeg_set_defaults(&c);
  jpeg_set_quality(&c, 90, TRUE);
  jpeg_start_compress(&c, TRUE);
  std::vector<unsigned char> row(std::size_t(width) * 4);
  while (c.next_scanline < c.image_height) {
    for (int x = 0; x < width; ++x)
      for (int k = 0; k < 4; ++k)
        row[std::size_t(x) * 4 + std::size_t(k)] =
            static_cast<unsigned char>((x * 7 + int(c.next_scanline) * 3 + k * 50) % 256);
    JSAMPROW p = row.data();
    jpeg_write_scanlines(&c, &p, 1);
  }
  jpeg_finish_compress(&c);
  jpeg_destroy_compress(&c);
  std::vector<unsigned char> bytes(buffer, buffer + size);
  std::free(buffer);
  return bytes;
}

}  // namespace netsmith::testutil
