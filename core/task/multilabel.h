#pragma once

// Multi-label classification through the Task seam: a sample carries a set of labels (a 0/1
// row per class, data/table_sources.cpp), the model ends in one score per class, a label is
// present when its sigmoid reaches its label's threshold: 0.5 until a validation pass tunes
// them (each label's threshold maximises its F1 on the validation split, from every score or
// from the 1,000-bin histograms of a data-parallel run; a label without a positive keeps 0.5).
// The thresholds are the task's state: kept in each checkpoint (the best checkpoint holds its
// own epoch's), used by eval and the test pass, written into the exports' metadata. The loss is
// binary cross-entropy with logits (train.class_weights "auto" or explicit values are its
// pos_weight: negatives over positives per label on the training split) or the focal loss (gamma
// 2); the figures:
//   map             mean over the labels of their average precision, as scikit-learn's
//                   average_precision_score (average="macro") computes it: the step sum of
//                   precision over recall at every distinct score; a label without a positive
//                   sample counts 0
//   f1_micro        2 TP / (2 TP + FP + FN) over all labels
//   f1_macro        the mean of the labels' F1 (0 where TP + FP + FN = 0, as scikit-learn)
//   subset_accuracy the share of samples whose every label is right
// Per label: "ap", "f1", "threshold" (the one the F1 figures used), "tuned_threshold" (the one
// this split's scores would choose). A NaN output (a diverged model) counts as probability 0. The
// average precision is exact from every score in one process; when a data-parallel run adds the
// processes' sums it comes from 1,000-bin score histograms per label (each bin one threshold).
#include <cstdint>
#include <vector>

#include "task/task.h"

namespace netsmith::task {

/// Average precision of scores against 0/1 truths (scikit-learn's definition); 0 without a
/// positive, as scikit-learn gives.
double averagePrecision(const std::vector<float>& scores, const std::vector<std::uint8_t>& truth);

/// The threshold that maximises F1 = 2 TP / (2 TP + FP + FN) when a score at or above it is
/// predicted positive: one of the scores (the highest of equal F1s); 0.5 without a positive.
double bestF1Threshold(const std::vector<float>& scores, const std::vector<std::uint8_t>& truth);

/// Binary cross-entropy with logits (`posWeight` K, may be undefined) or, with `focalGamma` > 0,
/// the focal loss; averaged over samples and labels.
torch::Tensor multiLabelLoss(const torch::Tensor& logits, const torch::Tensor& targets,
                             const torch::Tensor& posWeight, double focalGamma);

class MultiLabelTask : public Task {
 public:
  /// Throws netsmith::Error naming train.loss or train.class_weights when they do not fit.
  explicit MultiLabelTask(const TaskSetup& setup);

  torch::Tensor collate(const data::SampleSet& set,
                        const std::vector<std::int64_t>& samples) const override;
  std::string name() const override { return "multilabel"; }
  TargetSpec target() const override { return {TargetKind::MultiHot, false, false}; }
  std::vector<FigureSpec> figures() const override { return figureSpecs(); }
  /// What figures() gives, known before a task is made (TaskDef::figures).
  static std::vector<FigureSpec> figureSpecs();
  std::optional<Problem> headProblem(const graph::GraphAnalysis& analysis) const override;
  std::int64_t numClasses() const override { return m_classes; }
  void to(const torch::Device& device) override;
  torch::Tensor loss(const torch::Tensor& output, const torch::Tensor& target,
                     const torch::Tensor& softTarget) const override;
  std::vector<double> trainSums(const torch::Tensor& output,
                                const torch::Tensor& target) const override;
  std::size_t trainSumCount() const override { return 1; }
  std::map<std::string, double> trainFigures(const std::vector<double>& sums,
                                             std::int64_t seen) const override;
  std::unique_ptr<MetricSums> evalSums() const override;
  torch::Tensor syntheticTarget(std::int64_t n) const override;
  Json evaluationSchema() const override;
  std::unique_ptr<PredictionWriter> predictionWriter(const std::string& path,
                                                     const data::SampleSet& set) const override;
  std::vector<SampleView> describeSamples(const torch::Tensor& output,
                                          const torch::Tensor& target) const override;
  Json state() const override;
  void adoptState(const Json& state) override;
  void adoptValidation(const EvalMetrics& validation) override;
  const std::vector<double>& thresholds() const { return m_thresholds; }

  static constexpr double kThreshold = 0.5;

 private:
  std::int64_t m_classes = 0;
  std::vector<std::string> m_names;
  double m_focalGamma = 0;
  torch::Tensor m_posWeight;         ///< undefined: none
  std::vector<double> m_thresholds;  ///< per label
};

ExportNotes multiLabelExportNotes();

}  // namespace netsmith::task
