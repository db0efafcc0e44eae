#pragma once

// What the data doctor compares images by: an exact hash of the decoded pixels, a perceptual
// hash (the DCT hash, "pHash") that survives resizing, re-encoding and a change of brightness,
// and a small normalised grey picture whose correlation confirms a near-duplicate pair. No
// LibTorch.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <opencv2/core/mat.hpp>

namespace netsmith::doctor {

/// The side of the grey picture near-duplicates are confirmed on.
inline constexpr int kFingerprintSide = 16;

struct ImageFingerprint {
  std::uint64_t exact = 0;       ///< FNV-1a of the size, channels and pixels
  std::uint64_t perceptual = 0;  ///< 64-bit DCT hash
  /// kFingerprintSide^2 grey values, mean 0 and norm 1 (all 0 for a flat image).
  std::vector<float> shape;
};

/// `image`: 8-bit, 1 or 3 channels (a source's load()).
ImageFingerprint fingerprint(const cv::Mat& image);

/// The Pearson correlation of two fingerprints' pictures (0 when either is flat).
double correlation(const ImageFingerprint& a, const ImageFingerprint& b);

/// An image of one of the splits the doctor looks at.
struct ImageRef {
  int split = 0;           ///< index into the caller's split list
  std::int64_t index = 0;  ///< position in that split
};

struct DuplicatePair {
  ImageRef a, b;  ///< a before b in the order given
  bool exact = false;
  int distance = 0;       ///< perceptual hashes' differing bits
  double similarity = 0;  ///< correlation of the pictures (1 for exact)
};

struct DuplicateOptions {
  /// A near pair: perceptual hashes at most this many bits apart, and pictures correlating at
  /// least `minSimilarity` (on Fashion-MNIST, distinct items reach 0.99 in 1 pair of 100,000;
  /// an image resized, re-encoded as JPEG and brightened stays above 0.995).
  int maxDistance = 10;
  double minSimilarity = 0.99;
  /// At most this many pairs are kept (pairs across splits first, then exact, then the most
  /// similar); the counts in DuplicateResult count all.
  std::size_t keep = 5000;
};

struct DuplicateResult {
  std::vector<DuplicatePair> pairs;
  std::int64_t exactFound = 0, nearFound = 0;
  std::int64_t crossSplitFound = 0;  ///< pairs whose images are in different splits
};

/// Every pair of `images` that is an exact or near duplicate (all pairs compared: about 2e9
/// hash comparisons a second). `cancel` is asked now and then; true stops with what was found.
DuplicateResult findDuplicates(const std::vector<ImageRef>& refs,
                               const std::vector<ImageFingerprint>& images,
                               const DuplicateOptions& options,
                               const std::function<bool()>& cancel = {});

}  // namespace netsmith::doctor
