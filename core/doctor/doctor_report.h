#pragma once

// What the data doctor found (doctor.h runs it): likely label errors, duplicates and leakage
// across splits, class balance, outliers; written as JSON and as an HTML page with thumbnails,
// both bounded in size. No LibTorch.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/json.h"

namespace netsmith::doctor {

/// One sample as the report names it.
struct SampleRef {
  std::string split;       ///< "train", "validation", "test"
  std::int64_t index = 0;  ///< into its split's source (what the source's describe() names)
  std::string item;        ///< the file, or "FILE #i"
  std::int64_t label = -1;
};

struct UnreadableSample {
  SampleRef sample;
  std::string why;
};

struct LabelIssue {
  SampleRef sample;
  std::int64_t suggested = 0;
  double selfConfidence = 0;  ///< out-of-sample probability of the given label
  double suggestedProbability = 0;
  bool flagged = false;  ///< confident learning counts it as mislabelled
};

struct DuplicateFinding {
  SampleRef a, b;
  bool exact = false;
  int distance = 0;       ///< perceptual hash bits apart
  double similarity = 0;  ///< correlation of the small grey pictures (1: exact)
  bool leak() const { return a.split != b.split; }
};

struct OutlierFinding {
  SampleRef sample;
  std::string kind;  ///< "features", "size", "channels", "brightness"
  std::string why;   ///< "size 64x48 where 99.8% are 28x28"
  double score = 0;  ///< how far: feature distance / the class's median, or robust z
};

struct BalanceFinding {
  std::vector<std::int64_t> counts;  ///< training samples per class
  double imbalanceRatio = 0;         ///< largest class / smallest (inf when one is empty)
  double effectiveClasses = 0;       ///< exp(entropy of the class shares)
  std::string advice;                ///< "" when balanced
};

/// A report's lists are cut to these lengths; the counts say how many there were.
inline constexpr std::size_t kReportLabelIssues = 500;
inline constexpr std::size_t kReportDuplicates = 500;
/// The unreadable samples the report names (all are counted).
inline constexpr std::size_t kReportUnreadable = 100;
inline constexpr std::size_t kReportOutliers = 200;
/// The HTML page shows this many of each list, with thumbnails.
inline constexpr std::size_t kHtmlRows = 60;

struct DoctorReport {
  std::string project;
  std::vector<std::string> classes;
  std::int64_t examined = 0;  ///< training samples looked at
  std::int64_t testSamples = 0, validationSamples = 0;
  /// Where the label probabilities came from: "cross-training (3 folds, 2 epochs each)", or a
  /// checkpoint's own (in-sample) outputs; "" when labels were not checked.
  std::string probabilitiesFrom;
  bool inSample = false;
  std::vector<std::string> warnings;
  std::int64_t labelIssuesFlagged = 0;
  std::vector<LabelIssue> labelIssues;  ///< flagged ones, most suspicious first
  /// The full ranking is written beside the report (label_ranking.csv).
  std::int64_t exactDuplicates = 0, nearDuplicates = 0, leaks = 0;
  std::vector<DuplicateFinding> duplicates;  ///< leaks first, then exact, then most similar
  std::vector<OutlierFinding> outliers;
  std::int64_t outliersFound = 0;
  BalanceFinding balance;
  std::int64_t unreadable = 0;  ///< samples that could not be decoded (left out)
  /// The first kReportUnreadable of them, each with why (the decoder's message, or memory
  /// running out on a huge picture).
  std::vector<UnreadableSample> unreadableSamples;
  double seconds = 0;
  bool stopped = false;  ///< stopped before the end (run it again to go on)

  Json toJson() const;
};

/// The schema `doctor --json` and doctor.json follow.
Json doctorReportSchema();

}  // namespace netsmith::doctor

namespace netsmith::doctor {

/// The report as one HTML page (no scripts, no outside links): each list's first kHtmlRows
/// rows with the thumbnails `picture` gives ("data:image/png;base64,..." or "" for none).
std::string reportHtml(const DoctorReport& report,
                       const std::function<std::string(const SampleRef&)>& picture);

}  // namespace netsmith::doctor
