#pragma once

// Object detection through the Task seam: a sample carries its objects' boxes (a yolo, coco or
// voc source, data/box_sources.cpp), which the loader moves with the image through the
// geometric transforms (target::PixelTarget: a box cut mostly away by a crop is dropped). The
// model ends in an anchor-free, single-stage head on one feature map (task/detection_head.h:
// per location K class scores, 4 box distances and a centre-ness, FCOS's design); the loss is
// focal + GIoU + centre-ness on the documented assignment, the detections come from the one
// decoder with class-aware non-maximum suppression, and the figures are COCO's (task/coco_map.h)
// on the boxes in the model input's pixels:
//   map              mAP@[.5:.95] (the headline)
//   map50, map75     mAP at IoU 0.50 and 0.75
//   map_small, map_medium, map_large   mAP@[.5:.95] per COCO area range (NaN: no truth there)
//   recall           mean recall over thresholds and classes (AR@100)
// Per class: "ap", "ap50", "recall" (NaN for a class without a truth box). The validation and
// test loss is the training loss of the batch, summed per sample.
#include <cstdint>
#include <string>
#include <vector>

#include "task/detection_head.h"
#include "task/task.h"

namespace netsmith::task {

class DetectionTask : public Task {
 public:
  /// Throws netsmith::Error naming train.loss or train.class_weights when they do not fit.
  explicit DetectionTask(const TaskSetup& setup);

  torch::Tensor collate(const data::SampleSet& set,
                        const std::vector<std::int64_t>& samples) const override;
  bool boxTargets() const override { return true; }
  torch::Tensor collateBoxes(const std::vector<std::vector<target::Box>>& boxes) const override;
  std::string name() const override { return "detection"; }
  /// Boxes move with the image and with Mosaic (no other batch mix); its figures keep every
  /// image's boxes.
  TargetSpec target() const override {
    return {TargetKind::Boxes, true, false, false, true, false};
  }
  std::vector<FigureSpec> figures() const override { return figureSpecs(); }
  /// What figures() gives, known before a task is made (TaskDef::figures).
  static std::vector<FigureSpec> figureSpecs();
  std::optional<Problem> headProblem(const graph::GraphAnalysis& analysis) const override;
  std::int64_t numClasses() const override { return m_params.classes; }
  void to(const torch::Device&) override {}
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

  /// The head's parameters as this task runs it (stride from the model's input and output).
  const DetectionHeadParams& params() const { return m_params; }
  /// The stride must be known (a model whose output fits); throws netsmith::Error otherwise.
  void requireHead(const torch::Tensor& output) const;

 private:
  DetectionHeadParams m_params;
  std::vector<std::string> m_names;
  std::vector<std::int64_t> m_inputShape;
};

ExportNotes detectionExportNotes();

}  // namespace netsmith::task
