#pragma once

// Semantic segmentation through the Task seam: a sample carries a class mask (a mask_folders
// source, data/mask_source.cpp; 255 marks pixels to ignore), which the loader moves with the
// image through the geometric transforms; the model ends in K scores per pixel at the input
// size (K x H x W). Losses (train.loss): cross_entropy (default; per pixel, train.class_weights
// and train.label_smoothing apply, ignored pixels left out), dice (1 - the mean over classes of
// the soft Dice of the batch) and ce_dice (their sum). The figures come from the pixel
// confusion matrix of the split (ignored pixels left out), as mmsegmentation and torchmetrics
// compute them:
//   miou            mean over classes of TP / (TP + FP + FN), over the classes present in the
//                   truth or the prediction (a class absent from both is left out)
//   dice            the same mean of 2 TP / (2 TP + FP + FN)
//   pixel_accuracy  correct pixels / pixels
// Per class: "iou", "dice" (NaN for a class absent from both), "pixel_share" (its share of the
// true pixels). The validation and test loss of a sample is its mean per-pixel cross-entropy
// (whatever train.loss is: the figures, not the loss, say how good a segmentation is).
#include <cstdint>
#include <vector>

#include "task/task.h"

namespace netsmith::task {

/// The class mask's value for pixels no loss or figure counts.
inline constexpr std::int64_t kIgnoreIndex = 255;

/// 1 - the mean over classes of (2 sum(p y) + 1) / (sum(p) + sum(y) + 1), with p the softmax of
/// `logits` (N x K x H x W) and y the one-hot `target` (N x H x W), over the batch's valid
/// pixels (target != kIgnoreIndex).
torch::Tensor diceLoss(const torch::Tensor& logits, const torch::Tensor& target);

class SegmentationTask : public Task {
 public:
  /// Throws netsmith::Error naming train.loss or train.class_weights when they do not fit.
  explicit SegmentationTask(const TaskSetup& setup);

  torch::Tensor collate(const data::SampleSet& set,
                        const std::vector<std::int64_t>& samples) const override;
  bool pixelTargets() const override { return true; }
  torch::Tensor collateMasks(const torch::Tensor& masks) const override;
  std::string name() const override { return "segmentation"; }
  TargetSpec target() const override { return {TargetKind::ClassMask, true, false, true}; }
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
  std::size_t trainSumCount() const override { return 2; }
  std::map<std::string, double> trainFigures(const std::vector<double>& sums,
                                             std::int64_t seen) const override;
  std::unique_ptr<MetricSums> evalSums() const override;
  torch::Tensor syntheticTarget(std::int64_t n) const override;
  Json evaluationSchema() const override;
  std::unique_ptr<PredictionWriter> predictionWriter(const std::string& path,
                                                     const data::SampleSet& set) const override;
  std::vector<SampleView> describeSamples(const torch::Tensor& output,
                                          const torch::Tensor& target) const override;

 private:
  std::int64_t m_classes = 0;
  std::vector<std::string> m_names;
  std::vector<std::int64_t> m_outputShape;
  std::string m_loss = "cross_entropy";
  double m_labelSmoothing = 0;
  torch::Tensor m_weights;  ///< undefined: none
};

ExportNotes segmentationExportNotes();

}  // namespace netsmith::task
