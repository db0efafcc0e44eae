#include "util/image_convert.h"

#include <opencv2/imgproc.hpp>

namespace netsmith::ui {

QImage toQImage(const cv::Mat& image, bool bgr) {
  if (image.empty()) return {};
  cv::Mat m8;
  if (image.depth() == CV_8U)
    m8 = image;
  else
    image.convertTo(m8, CV_8U, 255.0);
  if (m8.channels() == 3 && bgr) {
    cv::Mat rgb;  // not in place: m8 may share the caller's pixels
    cv::cvtColor(m8, rgb, cv::COLOR_BGR2RGB);
    m8 = rgb;
  }
  const auto format = m8.channels() == 1 ? QImage::Format_Grayscale8 : QImage::Format_RGB888;
  return QImage(m8.data, m8.cols, m8.rows, int(m8.step), format).copy();
}

}  // namespace netsmith::ui
