#pragma once

// The Task seam: everything that depends on the kind of problem a project trains
// (single-label classification today; multi-label, regression, segmentation and detection
// plug in here). A Task says what target a sample carries and how a batch of them is made,
// which transforms move the target with the image, the head rule `validate` checks, the loss,
// the figures (summed over batches and processes, then finished), the evaluation result's
// schema (what exports add is in its TaskDef, task_registry.h). The loader, the step runner, the
// loop's evaluation and validation call it and never branch on the kind. LibTorch header: include
// it only where batches are trained or evaluated; task_registry.h is the light one.
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/json.h"
#include "data/data_loader.h"
#include "data/image_geometry.h"
#include "graph/graph_analysis.h"
#include "task/figures.h"
#include "task/task_registry.h"

namespace netsmith::task {

/// What a sample's target is (data/data_config.h): `spatial` targets (masks, boxes) move with
/// the image under the geometric transforms (flips, crops, rotation, affine, resize);
/// photometric transforms, noise, blur, erasing and Normalize never touch a target.
using data::TargetKind;
struct TargetSpec {
  TargetKind kind = TargetKind::ClassIndex;
  bool spatial = false;
  /// Batch mixes (MixUp, CutMix) blend this target as soft class scores.
  bool mixable = false;
  /// CutMix pastes this (spatial) target's cut with the image's (a mask); otherwise batch mixes
  /// are refused for a target that is neither mixable nor pasted (boxes).
  bool pastesCut = false;
  /// Mosaic (a batch mix of four images at half size) can move this target (boxes).
  bool mosaic = false;
  /// The split's figures come from sums that the processes of a data-parallel run add
  /// (MetricSums); false: they need every sample in one place, and such a run is refused.
  bool figuresSum = true;
};

/// One split's figures, summed over batches and then over the processes of a data-parallel
/// run, then finished. A task's sums are plain numbers so the process group can add them
/// element by element without knowing what they are.
class MetricSums {
 public:
  virtual ~MetricSums() = default;
  /// Adds a batch: the model's output (float) and the batch's target on the same device.
  virtual void add(const torch::Tensor& output, const torch::Tensor& target) = 0;
  /// The running sums (the first is the loss summed over samples).
  virtual std::vector<double> sums() const = 0;
  /// Replaces them, with the total over the processes.
  virtual void setSums(const std::vector<double>& sums) = 0;
  /// Loss = loss sum / samples, and the task's figures.
  virtual EvalMetrics finish() const = 0;
};

/// Per-sample outputs of an evaluation, written as the batches come (Task::predictionWriter).
class PredictionWriter {
 public:
  virtual ~PredictionWriter() = default;
  /// A batch: the model's output (float, on the CPU), its target, and its samples' positions.
  virtual void add(const torch::Tensor& output, const torch::Tensor& target,
                   const std::vector<std::int64_t>& samples) = 0;
  /// Writes the file (atomically); throws netsmith::Error naming it.
  virtual void finish() = 0;
  /// Where each sample's input came from in its own image (data::SampleProcessor::
  /// imageGeometry), for a writer that gives results in the image's own pixels (detection's
  /// COCO results). Set before the first add(); without it, the model's pixels.
  virtual void setImageGeometry(std::function<data::ImageGeometry(std::int64_t sample)>) {}
};

class Task : public data::TargetCollator {
 public:
  ~Task() override = default;
  virtual std::string name() const = 0;
  virtual TargetSpec target() const = 0;
  /// The figures, the headline first (what the dashboard and "best" show by default).
  virtual std::vector<FigureSpec> figures() const = 0;

  /// The output the model must produce for `analysis`, as a problem naming the node to change
  /// and the fix, or nothing when the output fits.
  virtual std::optional<Problem> headProblem(const graph::GraphAnalysis& analysis) const = 0;
  /// The class count batches and figures use (data classes, or the model's outputs when more).
  virtual std::int64_t numClasses() const = 0;

  /// Moves what the loss keeps (class weights) to the run's device.
  virtual void to(const torch::Device& device) = 0;
  /// The training loss of a batch, averaged over its samples: `output` (the model's, any
  /// float type), `target` (collate()'s, on the device), `softTarget` (N x K blended class
  /// scores when batch mixes ran; undefined otherwise).
  virtual torch::Tensor loss(const torch::Tensor& output, const torch::Tensor& target,
                             const torch::Tensor& softTarget) const = 0;
  /// A training batch's figure sums (added over the epoch and the processes; see
  /// trainFigures): classification's count of correct predictions.
  virtual std::vector<double> trainSums(const torch::Tensor& output,
                                        const torch::Tensor& target) const = 0;
  /// How many numbers trainSums() gives.
  virtual std::size_t trainSumCount() const = 0;
  /// The training figures from the epoch's sums over `seen` samples.
  virtual std::map<std::string, double> trainFigures(const std::vector<double>& sums,
                                                     std::int64_t seen) const = 0;
  /// Sums for one evaluation pass (validation, test).
  virtual std::unique_ptr<MetricSums> evalSums() const = 0;
  /// A target for `n` samples of no data (throughput benchmarks), on the CPU.
  virtual torch::Tensor syntheticTarget(std::int64_t n) const = 0;

  /// The JSON schema of evalMetricsToJson's object for this task: what `eval --json`, the
  /// run's events and the Evaluation page share.
  virtual Json evaluationSchema() const = 0;

  /// What the task learned from the data that the model's output depends on, recorded in the
  /// checkpoint ("task_state") and passed back through TaskSetup::state (a regression's target
  /// mean and std). An empty object for most tasks.
  virtual Json state() const { return Json::object(); }
  /// Takes back a state() this task gave (the test pass restores the best epoch's with its
  /// weights). The default ignores it.
  virtual void adoptState(const Json& /*state*/) {}
  /// What the task learns from a validation pass of the model being trained, before the
  /// epoch's checkpoints are written (so each holds what its own epoch tuned): multi-label
  /// thresholds. The default learns nothing.
  virtual void adoptValidation(const EvalMetrics& /*validation*/) {}

  /// Each sample of a batch as the Evaluation page shows it (see SampleView), from the model's
  /// output (float, on the CPU) and the batch's target. Empty: the task has no per-sample view.
  /// `target` is undefined for images without labels (`predict`, the studio's Predict page):
  /// the views then hold the outputs alone.
  virtual std::vector<SampleView> describeSamples(const torch::Tensor& /*output*/,
                                                  const torch::Tensor& /*target*/) const {
    return {};
  }

  /// What `eval --predictions FILE` writes: every sample's output in a form anyone can
  /// recompute the figures from. Null: the task writes none.
  virtual std::unique_ptr<PredictionWriter> predictionWriter(const std::string& path,
                                                             const data::SampleSet& set) const;
};

}  // namespace netsmith::task
