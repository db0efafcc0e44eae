#include "data/sample_processor.h"

#include <algorithm>
#include <opencv2/imgproc.hpp>

#include "augment/sample_rng.h"

namespace netsmith::data {

cv::Mat toModelChannels(const cv::Mat& decoded, int channels) {
  cv::Mat converted;
  if (decoded.channels() == channels) {
    converted = decoded;
  } else if (channels == 1) {
    cv::cvtColor(decoded, converted, cv::COLOR_RGB2GRAY);
  } else {
    cv::cvtColor(decoded, converted, cv::COLOR_GRAY2RGB);
  }
  cv::Mat out;
  converted.convertTo(out, CV_32F, decoded.depth() == CV_8U ? 1.0 / 255.0 : 1.0);
  return out;
}

cv::Mat fitImage(const cv::Mat& image, int height, int width, FitPolicy fit) {
  if (image.rows == height && image.cols == width) return image;
  cv::Mat out;
  if (fit == FitPolicy::Resize) {
    cv::resize(image, out, cv::Size(width, height), 0, 0, cv::INTER_LINEAR);
    return out;
  }
  // Resize so the image covers the target, then take the centre.
  const double scale = std::max(double(height) / image.rows, double(width) / image.cols);
  const int h = std::max(height, int(std::lround(image.rows * scale)));
  const int w = std::max(width, int(std::lround(image.cols * scale)));
  cv::Mat resized;
  cv::resize(image, resized, cv::Size(w, h), 0, 0, cv::INTER_LINEAR);
  const cv::Rect roi((w - width) / 2, (h - height) / 2, width, height);
  return resized(roi).clone();
}

SampleProcessor::SampleProcessor(SampleFormat format, const augment::Pipeline* pipeline,
                                 std::vector<double> mean, std::vector<double> std)
    : m_format(format), m_pipeline(pipeline), m_mean(std::move(mean)), m_std(std::move(std)) {
  const auto c = static_cast<std::size_t>(m_format.channels);
  if (m_mean.size() == 1) m_mean.assign(c, m_mean[0]);
  if (m_std.size() == 1) m_std.assign(c, m_std[0]);
}

cv::Mat SampleProcessor::run(const SampleSet& set, std::int64_t k, bool training,
                             std::uint64_t seed, std::int64_t epoch, bool forDisplay) const {
  const std::int64_t index = set.indices.at(static_cast<std::size_t>(k));
  cv::Mat img = toModelChannels(set.source->load(index), m_format.channels);
  const bool pipelineSizes = m_pipeline && m_pipeline->setsSize(training);
  if (!pipelineSizes) img = fitImage(img, m_format.height, m_format.width, m_format.fit);
  if (m_pipeline) {
    if (training) {
      augment::SampleRng rng(
          augment::mixSeed(seed, static_cast<std::uint64_t>(epoch), static_cast<std::uint64_t>(k)));
      m_pipeline->apply(img, &rng, forDisplay);
    } else {
      m_pipeline->apply(img, nullptr, forDisplay);
    }
  }
  img = fitImage(img, m_format.height, m_format.width, m_format.fit);
  if (!forDisplay && !m_mean.empty() && !(m_pipeline && m_pipeline->hasNormalize())) {
    cv::Scalar mean, scale;
    for (int c = 0; c < m_format.channels && c < 4; ++c) {
      mean[c] = m_mean[static_cast<std::size_t>(c)];
      scale[c] = 1.0 / m_std[static_cast<std::size_t>(c)];
    }
    cv::subtract(img, mean, img);
    cv::multiply(img, scale, img);
  }
  return img;
}

void SampleProcessor::process(const SampleSet& set, std::int64_t k, bool training,
                              std::uint64_t seed, std::int64_t epoch, float* out) const {
  const cv::Mat img = run(set, k, training, seed, epoch, false);
  const int c = m_format.channels;
  const std::size_t plane = std::size_t(m_format.height) * std::size_t(m_format.width);
  if (c == 1) {
    const cv::Mat cont = img.isContinuous() ? img : img.clone();
    std::copy(cont.ptr<float>(), cont.ptr<float>() + plane, out);
    return;
  }
  std::vector<cv::Mat> planes(static_cast<std::size_t>(c));
  for (int ch = 0; ch < c; ++ch) {
    planes[static_cast<std::size_t>(ch)] =
        cv::Mat(m_format.height, m_format.width, CV_32F, out + plane * std::size_t(ch));
  }
  cv::split(img, planes);
}

cv::Mat SampleProcessor::preview(const SampleSet& set, std::int64_t k, bool training,
                                 std::uint64_t seed, std::int64_t epoch) const {
  return run(set, k, training, seed, epoch, true);
}

cv::Mat SampleProcessor::plain(const SampleSet& set, std::int64_t k) const {
  const std::int64_t index = set.indices.at(static_cast<std::size_t>(k));
  return fitImage(toModelChannels(set.source->load(index), m_format.channels), m_format.height,
                  m_format.width, m_format.fit);
}

}  // namespace netsmith::data
