#pragma once

// Confident learning (Northcutt, Jiang and Chuang, "Confident Learning: Estimating Uncertainty
// in Dataset Labels", 2021), as cleanlab's find_label_issues does it by default
// (filter_by="prune_by_noise_rate", ranked by self-confidence): from out-of-sample class
// probabilities and the given labels, the samples whose label is most likely wrong. Plain
// numbers: no LibTorch, no OpenCV.
#include <cstdint>
#include <vector>

namespace netsmith::doctor {

/// Class probabilities of n samples, row-major n x classes (each row sums to 1).
struct ClassProbabilities {
  std::int64_t classes = 0;
  std::vector<float> values;
  std::int64_t size() const { return classes > 0 ? std::int64_t(values.size()) / classes : 0; }
  const float* row(std::int64_t i) const { return values.data() + i * classes; }
};

/// The confident joint and what confident learning counts from it.
struct ConfidentJoint {
  /// t_j: the mean probability of class j over the samples labelled j (1 where none is).
  std::vector<double> thresholds;
  /// C[i][j]: samples labelled i whose probability of j reaches t_j (the most probable such j
  /// when several do).
  std::vector<std::vector<std::int64_t>> counts;
  /// Q[i][j]: C calibrated so each row sums to the samples labelled i, then to 1 over all.
  std::vector<std::vector<double>> joint;
};

ConfidentJoint confidentJoint(const std::vector<std::int64_t>& labels,
                              const ClassProbabilities& probs);

/// One sample's verdict.
struct LabelVerdict {
  std::int64_t sample = 0;     ///< position in the lists given
  std::int64_t given = 0;      ///< its label
  std::int64_t suggested = 0;  ///< the most probable other class when flagged, else argmax
  double selfConfidence = 0;   ///< the probability of its given label
  double suggestedProbability = 0;
  /// Confident learning flags it (prune by noise rate: among the samples labelled i, the
  /// round(n Q[i][j]) with the largest margin p_j - p_i, for every j != i).
  bool flagged = false;
};

/// Every sample, most suspicious first: the flagged ones by self-confidence (lowest first),
/// then the rest the same way. Throws netsmith::Error when labels and probabilities disagree
/// in size or a label is outside the classes.
std::vector<LabelVerdict> rankLabelIssues(const std::vector<std::int64_t>& labels,
                                          const ClassProbabilities& probs);

}  // namespace netsmith::doctor
