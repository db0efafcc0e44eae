#pragma once

// Single-label classification through the Task seam: a sample's target is a class index, the
// model ends in one score per class, the loss is cross-entropy (label smoothing, class
// weights, soft targets from batch mixes), the figures accuracy, per-class accuracy and the
// confusion matrix.
#include <cstdint>
#include <optional>
#include <vector>

#include "task/task.h"

namespace netsmith::task {

/// Cross-entropy on hard `labels` (N) or, when `softTargets` (N x K) is defined, on soft
/// targets (MixUp/CutMix), with label smoothing and optional per-class `weights` (K).
torch::Tensor classificationLoss(const torch::Tensor& logits, const torch::Tensor& labels,
                                 const torch::Tensor& softTargets, double labelSmoothing,
                                 const torch::Tensor& weights);

/// Counts predictions into a confusion matrix.
class ConfusionCounter {
 public:
  explicit ConfusionCounter(std::int64_t numClasses);
  /// From counts [true * K + predicted] (a sum over processes).
  ConfusionCounter(std::int64_t numClasses, std::vector<std::int64_t> counts);
  void add(const torch::Tensor& predicted, const torch::Tensor& labels);  ///< N int64 each
  EvalMetrics metrics(double lossSum) const;  ///< loss = lossSum / samples
  const std::vector<std::int64_t>& counts() const { return m_counts; }

 private:
  std::int64_t m_classes;
  std::vector<std::int64_t> m_counts;  // [true * K + predicted]
  std::int64_t m_samples = 0;
};

/// A classifier's output must be one score per class: a problem naming the node to change and
/// the fix ("set fc2.out_features to 10"), or nothing when the output fits `numClasses`.
std::optional<Problem> classifierHeadProblem(const graph::GraphAnalysis& analysis,
                                             std::int64_t numClasses);

/// The output must be exactly `count` values, one per `what` ("labels", "targets"): multi-label
/// and regression heads.
std::optional<Problem> exactHeadProblem(const graph::GraphAnalysis& analysis, std::int64_t count,
                                        const std::string& what);

class ClassificationTask : public Task {
 public:
  /// Throws netsmith::Error when explicit class weights do not match the classes.
  explicit ClassificationTask(const TaskSetup& setup);

  torch::Tensor collate(const data::SampleSet& set,
                        const std::vector<std::int64_t>& samples) const override;
  std::string name() const override { return kClassification; }
  TargetSpec target() const override { return {TargetKind::ClassIndex, false, true}; }
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
  /// label (the class index), then prob:<class> (softmax) per class.
  std::unique_ptr<PredictionWriter> predictionWriter(const std::string& path,
                                                     const data::SampleSet& set) const override;
  /// Each sample's class probabilities (softmax) as its output, scored by its cross-entropy
  /// when there is a target (the class view's evaluation keeps its own samples).
  std::vector<SampleView> describeSamples(const torch::Tensor& output,
                                          const torch::Tensor& target) const override;

 private:
  std::vector<std::string> m_names;
  std::int64_t m_dataClasses = 0;
  std::int64_t m_classes = 0;
  double m_labelSmoothing = 0;
  torch::Tensor m_weights;  ///< undefined: unweighted
};

}  // namespace netsmith::task
