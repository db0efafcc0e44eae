#include "data/sample_processor.h"

#include <algorithm>
#include <array>
#include <new>
#include <opencv2/imgproc.hpp>
#include <string>

#include "augment/sample_rng.h"
#include "common/error.h"

namespace netsmith::data {

namespace {

cv::Mat withChannels(const cv::Mat& decoded, int channels) {
  cv::Mat converted;
  if (decoded.channels() == channels) {
    converted = decoded;
  } else if (channels == 1) {
    cv::cvtColor(decoded, converted, cv::COLOR_RGB2GRAY);
  } else {
    cv::cvtColor(decoded, converted, cv::COLOR_GRAY2RGB);
  }
  return converted;
}

cv::Mat toUnitFloats(const cv::Mat& image) {
  cv::Mat out;
  image.convertTo(out, CV_32F, image.depth() == CV_8U ? 1.0 / 255.0 : 1.0);
  return out;
}

}  // namespace

cv::Mat toModelChannels(const cv::Mat& decoded, int channels) {
  return toUnitFloats(withChannels(decoded, channels));
}

namespace {

cv::Mat fitWith(const cv::Mat& image, int height, int width, FitPolicy fit, int interpolation) {
  if (image.rows == height && image.cols == width) return image;
  cv::Mat out;
  if (fit == FitPolicy::Resize) {
    cv::resize(image, out, cv::Size(width, height), 0, 0, interpolation);
    return out;
  }
  // Resize so the image covers the target, then take the centre.
  const double scale = std::max(double(height) / image.rows, double(width) / image.cols);
  const int h = std::max(height, int(std::lround(image.rows * scale)));
  const int w = std::max(width, int(std::lround(image.cols * scale)));
  cv::Mat resized;
  cv::resize(image, resized, cv::Size(w, h), 0, 0, interpolation);
  const cv::Rect roi((w - width) / 2, (h - height) / 2, width, height);
  return resized(roi).clone();
}

}  // namespace

cv::Mat fitImage(const cv::Mat& image, int height, int width, FitPolicy fit) {
  return fitWith(image, height, width, fit, cv::INTER_LINEAR);
}

cv::Mat fitMask(const cv::Mat& mask, int height, int width, FitPolicy fit) {
  return fitWith(mask, height, width, fit, cv::INTER_NEAREST_EXACT);
}

void fitBoxes(std::vector<target::Box>& boxes, cv::Size from, int height, int width,
              FitPolicy fit) {
  if (boxes.empty() || (from.height == height && from.width == width)) return;
  target::PixelTarget target;
  target.boxes = std::move(boxes);
  if (fit == FitPolicy::Resize) {
    augment::moveBoxesOnEdges(
        target, {double(width) / from.width, 0, 0, 0, double(height) / from.height, 0},
        {width, height});
  } else {
    // fitWith's ResizeCrop: resized to cover, then the centre cut.
    const double scale = std::max(double(height) / from.height, double(width) / from.width);
    const int h = std::max(height, int(std::lround(from.height * scale)));
    const int w = std::max(width, int(std::lround(from.width * scale)));
    augment::moveBoxesOnEdges(target,
                              {double(w) / from.width, 0, -double((w - width) / 2), 0,
                               double(h) / from.height, -double((h - height) / 2)},
                              {width, height});
  }
  boxes = std::move(target.boxes);
}

SampleProcessor::SampleProcessor(SampleFormat format, const augment::Pipeline* pipeline,
                                 std::vector<double> mean, std::vector<double> std)
    : m_format(format), m_pipeline(pipeline), m_mean(std::move(mean)), m_std(std::move(std)) {
  const auto c = static_cast<std::size_t>(m_format.channels);
  if (m_mean.size() == 1) m_mean.assign(c, m_mean[0]);
  if (m_std.size() == 1) m_std.assign(c, m_std[0]);
}

bool SampleProcessor::meanApplies() const {
  return !m_mean.empty() && !(m_pipeline && m_pipeline->hasNormalize());
}

ImageGeometry SampleProcessor::imageGeometry(const SampleSet& set, std::int64_t k) const {
  const std::int64_t index = set.indices.at(static_cast<std::size_t>(k));
  cv::Size size;
  (void)set.source->loadRegion(index, [&size](cv::Size s) {
    size = s;
    return cv::Rect(0, 0, std::min(1, s.width), std::min(1, s.height));
  });
  ImageGeometry g;
  g.width = size.width;
  g.height = size.height;
  if (size.width < 1 || size.height < 1) return g;
  const int h = m_format.height, w = m_format.width;
  // The same steps as run()'s boxes take at evaluation, on a probe over the central half (kept
  // by any centred crop of at least half the image) and a blank image of the sample's size standing
  // in for its pixels.
  const auto at25 = [](int side) { return float(0.25 * side); };
  const auto at75 = [](int side) { return float(0.75 * side); };
  const target::Box probe{0, at25(size.width), at25(size.height), at75(size.width),
                          at75(size.height)};
  target::PixelTarget moved;
  moved.boxes = {probe};
  cv::Size at = size;
  if (!(m_pipeline && m_pipeline->setsSize(false))) {
    fitBoxes(moved.boxes, at, h, w, m_format.fit);
    at = cv::Size(w, h);
  }
  if (m_pipeline) {
    cv::Mat blank(at, CV_32FC(m_format.channels), cv::Scalar::all(0));
    m_pipeline->applyWithTarget(blank, moved, nullptr, false);
    at = blank.size();
  }
  fitBoxes(moved.boxes, at, h, w, m_format.fit);
  if (moved.boxes.size() != 1) return g;  // cut away: left as the identity
  const target::Box& b = moved.boxes.front();
  g.sx = (b.x1 - b.x0) / (probe.x1 - probe.x0);
  g.sy = (b.y1 - b.y0) / (probe.y1 - probe.y0);
  g.tx = b.x0 - g.sx * probe.x0;
  g.ty = b.y0 - g.sy * probe.y0;
  return g;
}

namespace {

/// `steps()`, with memory running out on a large picture (a copy as floats, a resize) made a
/// sample that could not be processed, named: a caller that skips bad samples skips it, and
/// nothing of the kind ends a loader's thread.
template <class Steps>
cv::Mat namingMemoryFailures(const SampleSet& set, std::int64_t k, Steps&& steps) {
  const auto noMemory = [&] {
    return SampleError(set.describe(k) + ": not processed: it did not fit in the memory left");
  };
  try {
    return steps();
  } catch (const std::bad_alloc&) {
    throw noMemory();
  } catch (const cv::Exception& e) {
    if (e.code == cv::Error::StsNoMem) throw noMemory();
    throw;
  }
}

}  // namespace

cv::Mat SampleProcessor::run(const SampleSet& set, std::int64_t k, bool training,
                             std::uint64_t seed, std::int64_t epoch, bool forDisplay, cv::Mat* mask,
                             std::vector<target::Box>* boxes) const {
  return namingMemoryFailures(
      set, k, [&] { return runSteps(set, k, training, seed, epoch, forDisplay, mask, boxes); });
}

cv::Mat SampleProcessor::runSteps(const SampleSet& set, std::int64_t k, bool training,
                                  std::uint64_t seed, std::int64_t epoch, bool forDisplay,
                                  cv::Mat* mask, std::vector<target::Box>* boxes) const {
  const std::int64_t index = set.indices.at(static_cast<std::size_t>(k));
  const bool pipelineSizes = m_pipeline && m_pipeline->setsSize(training);
  augment::SampleRng rng(
      augment::mixSeed(seed, static_cast<std::uint64_t>(epoch), static_cast<std::uint64_t>(k)));
  augment::SampleRng* const draws = training ? &rng : nullptr;
  const int h = m_format.height, w = m_format.width;
  if (boxes) {
    // The boxes go through every step beside the image, as the mask below does.
    cv::Mat img = withChannels(set.source->load(index), m_format.channels);
    target::PixelTarget moved;
    try {
      moved.boxes = set.source->loadBoxes(index, img.cols, img.rows);
    } catch (const SampleError&) {
      throw;
    } catch (const std::exception& e) {
      throw SampleError(set.describe(k) + ": " + e.what());
    }
    img = toUnitFloats(img);
    if (!pipelineSizes) {
      fitBoxes(moved.boxes, img.size(), h, w, m_format.fit);
      img = fitImage(img, h, w, m_format.fit);
    }
    if (m_pipeline) m_pipeline->applyWithTarget(img, moved, draws, forDisplay);
    fitBoxes(moved.boxes, img.size(), h, w, m_format.fit);
    *boxes = std::move(moved.boxes);
    return fitImage(img, h, w, m_format.fit);
  }
  if (mask) {
    // The mask goes through every step beside the image, as floats; the decoded-bytes and
    // region shortcuts below are for images alone.
    cv::Mat img = withChannels(set.source->load(index), m_format.channels);
    cv::Mat target = set.source->loadMask(index);
    if (target.size() != img.size()) {
      throw SampleError(set.describe(k) + ": the image is " + std::to_string(img.cols) + "x" +
                        std::to_string(img.rows) + " but its mask is " +
                        std::to_string(target.cols) + "x" + std::to_string(target.rows));
    }
    img = toUnitFloats(img);
    if (!pipelineSizes) {
      img = fitImage(img, h, w, m_format.fit);
      target = fitMask(target, h, w, m_format.fit);
    }
    if (m_pipeline) {
      target::PixelTarget moved;
      moved.mask = target;
      m_pipeline->applyWithTarget(img, moved, draws, forDisplay);
      target = moved.mask;
    }
    *mask = fitMask(target, h, w, m_format.fit);
    return fitImage(img, h, w, m_format.fit);
  }
  // Where the pipeline sizes the image, its leading crops, flips and resizes run on the decoded
  // bytes and the rest on floats in [0, 1]; otherwise the image is fitted as floats first. A
  // leading RandomResizedCrop draws its region from the image's size before the decode, so only
  // that region is decoded (JPEG) or kept.
  cv::Mat img;
  std::size_t next = 0;
  if (pipelineSizes && m_pipeline->startsWithCut(training)) {
    augment::Pipeline::LeadingCut cut;
    img = set.source->loadRegion(index, [&](cv::Size size) {
      cut = m_pipeline->drawLeadingCut(size, draws);
      return cut.fired ? cut.region : cv::Rect({0, 0}, size);
    });
    img = withChannels(img, m_format.channels);
    next = m_pipeline->applyLeading(img, draws, cut);
  } else {
    img = withChannels(set.source->load(index), m_format.channels);
    if (pipelineSizes && img.depth() == CV_8U) next = m_pipeline->applyLeading(img, draws);
  }
  img = toUnitFloats(img);
  if (!pipelineSizes) img = fitImage(img, m_format.height, m_format.width, m_format.fit);
  if (m_pipeline) m_pipeline->apply(img, draws, forDisplay, next);
  img = fitImage(img, m_format.height, m_format.width, m_format.fit);
  return img;
}

void SampleProcessor::process(const SampleSet& set, std::int64_t k, bool training,
                              std::uint64_t seed, std::int64_t epoch, float* out,
                              std::uint8_t* maskOut, std::vector<target::Box>* boxesOut) const {
  // The pipeline without the final normalisation, which is done here in the same pass that
  // writes the planes (HWC -> CHW): one pass instead of three.
  cv::Mat mask;
  const cv::Mat img =
      run(set, k, training, seed, epoch, false, maskOut ? &mask : nullptr, boxesOut);
  if (maskOut) {
    if (mask.type() != CV_8UC1 || mask.rows != m_format.height || mask.cols != m_format.width)
      throw Error("sample " + std::to_string(k) + ": the pipeline gave a mask of another size");
    for (int r = 0; r < mask.rows; ++r)
      std::copy_n(mask.ptr<std::uint8_t>(r), mask.cols,
                  maskOut + std::size_t(r) * std::size_t(mask.cols));
  }
  const int c = m_format.channels;
  const std::size_t plane = std::size_t(m_format.height) * std::size_t(m_format.width);
  const bool normalise = meanApplies();
  std::array<float, 4> shift{0, 0, 0, 0};
  std::array<float, 4> scale{1, 1, 1, 1};
  for (int ch = 0; normalise && ch < c && ch < 4; ++ch) {
    shift[std::size_t(ch)] = static_cast<float>(m_mean[std::size_t(ch)]);
    scale[std::size_t(ch)] = static_cast<float>(1.0 / m_std[std::size_t(ch)]);
  }
  if (img.type() != CV_MAKETYPE(CV_32F, c) || img.rows != m_format.height ||
      img.cols != m_format.width || c > 4) {
    throw Error("sample " + std::to_string(k) + ": the pipeline gave a " +
                std::to_string(img.cols) + "x" + std::to_string(img.rows) + " image of " +
                std::to_string(img.channels()) + " channels, not the model's input");
  }
  float* const planes[4] = {out, out + plane, out + 2 * plane, out + 3 * plane};
  for (int r = 0; r < img.rows; ++r) {
    const float* row = img.ptr<float>(r);
    const std::size_t at = std::size_t(r) * std::size_t(img.cols);
    if (c == 3) {  // the common case, in a form the compiler vectorises
      float* __restrict p0 = planes[0] + at;
      float* __restrict p1 = planes[1] + at;
      float* __restrict p2 = planes[2] + at;
      for (int x = 0; x < img.cols; ++x) {
        p0[x] = (row[3 * x] - shift[0]) * scale[0];
        p1[x] = (row[3 * x + 1] - shift[1]) * scale[1];
        p2[x] = (row[3 * x + 2] - shift[2]) * scale[2];
      }
      continue;
    }
    for (int x = 0; x < img.cols; ++x) {
      for (int ch = 0; ch < c; ++ch) {
        const auto u = std::size_t(ch);
        planes[u][at + std::size_t(x)] = (row[x * c + ch] - shift[u]) * scale[u];
      }
    }
  }
}

cv::Mat SampleProcessor::preview(const SampleSet& set, std::int64_t k, bool training,
                                 std::uint64_t seed, std::int64_t epoch, cv::Mat* mask,
                                 std::vector<target::Box>* boxes) const {
  return run(set, k, training, seed, epoch, true, mask, boxes);
}

cv::Mat SampleProcessor::plain(const SampleSet& set, std::int64_t k) const {
  const std::int64_t index = set.indices.at(static_cast<std::size_t>(k));
  return namingMemoryFailures(set, k, [&] {
    return fitImage(toModelChannels(set.source->load(index), m_format.channels), m_format.height,
                    m_format.width, m_format.fit);
  });
}

target::Box boxInImage(target::Box b, const ImageGeometry& g) {
  if (g.sx <= 0 || g.sy <= 0) return b;
  const auto back = [](double v, double scale, double offset, int side) {
    return float(std::clamp((v - offset) / scale, 0.0, double(std::max(side, 0))));
  };
  b.x0 = back(b.x0, g.sx, g.tx, g.width);
  b.x1 = back(b.x1, g.sx, g.tx, g.width);
  b.y0 = back(b.y0, g.sy, g.ty, g.height);
  b.y1 = back(b.y1, g.sy, g.ty, g.height);
  return b;
}

cv::Mat maskInImage(const cv::Mat& mask, const ImageGeometry& g) {
  if (g.sx <= 0 || g.sy <= 0 || g.width <= 0 || g.height <= 0) return mask.clone();
  const cv::Matx23d back(1.0 / g.sx, 0, -g.tx / g.sx, 0, 1.0 / g.sy, -g.ty / g.sy);
  cv::Mat out;
  cv::warpAffine(mask, out, back, cv::Size(g.width, g.height), cv::INTER_NEAREST,
                 cv::BORDER_CONSTANT, 0);
  return out;
}

}  // namespace netsmith::data
