#include "doctor/image_hash.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

namespace netsmith::doctor {

namespace {

std::uint64_t fnv1a(std::uint64_t h, const void* data, std::size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < size; ++i) {
    h ^= p[i];
    h *= 1099511628211ULL;
  }
  return h;
}

cv::Mat greyOf(const cv::Mat& image) {
  cv::Mat grey;
  if (image.channels() == 3)
    cv::cvtColor(image, grey, cv::COLOR_RGB2GRAY);
  else if (image.channels() == 4)
    cv::cvtColor(image, grey, cv::COLOR_RGBA2GRAY);
  else
    grey = image;
  cv::Mat f;
  grey.convertTo(f, CV_32F);
  return f;
}

}  // namespace

ImageFingerprint fingerprint(const cv::Mat& image) {
  ImageFingerprint fp;
  std::uint64_t h = 14695981039346656037ULL;
  const int header[3] = {image.rows, image.cols, image.channels()};
  h = fnv1a(h, header, sizeof header);
  const std::size_t rowBytes = std::size_t(image.cols) * image.elemSize();
  for (int r = 0; r < image.rows; ++r)
    h = fnv1a(h, image.ptr(r), rowBytes);
  fp.exact = h;

  const cv::Mat grey = greyOf(image);
  // pHash: the 8 x 8 lowest frequencies of a 32 x 32 DCT, DC left out, against their median.
  cv::Mat small, dct;
  cv::resize(grey, small, cv::Size(32, 32), 0, 0, cv::INTER_AREA);
  cv::dct(small, dct);
  std::vector<float> low;
  low.reserve(64);
  for (int y = 0; y < 8; ++y)
    for (int x = 0; x < 8; ++x)
      low.push_back(dct.at<float>(y, x));
  std::vector<float> rest(low.begin() + 1, low.end());
  std::nth_element(rest.begin(), rest.begin() + rest.size() / 2, rest.end());
  const float median = rest[rest.size() / 2];
  for (int i = 1; i < 64; ++i)
    if (low[std::size_t(i)] > median) fp.perceptual |= std::uint64_t(1) << i;

  cv::Mat picture;
  cv::resize(grey, picture, cv::Size(kFingerprintSide, kFingerprintSide), 0, 0, cv::INTER_AREA);
  fp.shape.assign(picture.begin<float>(), picture.end<float>());
  const double mean =
      std::accumulate(fp.shape.begin(), fp.shape.end(), 0.0) / double(fp.shape.size());
  double norm = 0;
  for (float& v : fp.shape) {
    v = float(v - mean);
    norm += double(v) * v;
  }
  norm = std::sqrt(norm);
  for (float& v : fp.shape)
    v = norm > 1e-6 ? float(v / norm) : 0.0f;
  return fp;
}

double correlation(const ImageFingerprint& a, const ImageFingerprint& b) {
  if (a.shape.size() != b.shape.size()) return 0;
  double s = 0;
  for (std::size_t i = 0; i < a.shape.size(); ++i)
    s += double(a.shape[i]) * b.shape[i];
  return s;
}

namespace {

/// Exact pairs first, then the most similar.
void sortPairs(std::vector<DuplicatePair>& pairs) {
  // Pairs across splits (leaks) first: a data set with hundreds of copies inside one split
  // must not push its one train/test copy out of the kept pairs.
  std::stable_sort(pairs.begin(), pairs.end(), [](const DuplicatePair& x, const DuplicatePair& y) {
    const bool xLeak = x.a.split != x.b.split, yLeak = y.a.split != y.b.split;
    if (xLeak != yLeak) return xLeak;
    if (x.exact != y.exact) return x.exact;
    return x.similarity > y.similarity;
  });
}

}  // namespace

DuplicateResult findDuplicates(const std::vector<ImageRef>& refs,
                               const std::vector<ImageFingerprint>& images,
                               const DuplicateOptions& options,
                               const std::function<bool()>& cancel) {
  DuplicateResult out;
  const std::size_t n = std::min(refs.size(), images.size());
  std::vector<std::uint64_t> hashes(n);
  for (std::size_t i = 0; i < n; ++i)
    hashes[i] = images[i].perceptual;
  for (std::size_t i = 0; i < n; ++i) {
    if (cancel && (i & 255) == 0 && cancel()) break;
    const std::uint64_t hi = hashes[i];
    for (std::size_t j = i + 1; j < n; ++j) {
      const int distance = __builtin_popcountll(hi ^ hashes[j]);
      if (distance > options.maxDistance) continue;
      DuplicatePair pair;
      pair.a = refs[i];
      pair.b = refs[j];
      pair.distance = distance;
      pair.exact = images[i].exact == images[j].exact;
      pair.similarity = pair.exact ? 1.0 : correlation(images[i], images[j]);
      if (!pair.exact && pair.similarity < options.minSimilarity) continue;
      ++(pair.exact ? out.exactFound : out.nearFound);
      if (pair.a.split != pair.b.split) ++out.crossSplitFound;
      out.pairs.push_back(pair);
      // Memory stays bounded on data that is all one image.
      if (out.pairs.size() >= 2 * options.keep + 1024) {
        sortPairs(out.pairs);
        out.pairs.resize(options.keep);
      }
    }
  }
  sortPairs(out.pairs);
  if (out.pairs.size() > options.keep) out.pairs.resize(options.keep);
  return out;
}

}  // namespace netsmith::doctor
