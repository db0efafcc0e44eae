#pragma once

// What an Evaluator (eval/evaluator.h) runs on, and the loop helpers every evaluator shares.
// LibTorch: include it only in evaluation code.
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <opencv2/core/mat.hpp>

#include "common/text_format.h"
#include "data/data_loader.h"
#include "data/project_data.h"
#include "eval/evaluation.h"
#include "graph/graph_module.h"
#include "project/project.h"
#include "task/task.h"

namespace netsmith::eval {

/// The model's output for a batch of inputs (N x C x H x W).
using ModelRun = std::function<torch::Tensor(const torch::Tensor&)>;

struct EvaluationInput {
  graph::GraphModuleImpl* net = nullptr;  ///< the checkpoint's model (its analysis, features)
  /// What gives the outputs: net's forward, or an exported file's (EvaluationOptions::onnx).
  ModelRun run;
  const data::SampleSet* set = nullptr;  ///< the split (a subset when limited)
  const data::ProjectData* data = nullptr;
  std::shared_ptr<task::Task> task;
  const EvaluationOptions* options = nullptr;
  const project::Project* project = nullptr;  ///< the checkpoint's (its model's nodes)
  /// The validation split as training made it (temperature fitting), opened on demand.
  std::function<std::unique_ptr<data::ProjectData>()> openFitData;
  std::string checkpoint;  ///< for messages
};

/// One normalised C x H x W image back to 8 bits, scaled to at most `side` pixels.
cv::Mat evaluationPicture(const torch::Tensor& image, const std::vector<double>& mean,
                          const std::vector<double>& std, int side);
/// The loader of an evaluation: whole batches in split order, no augmentation.
data::LoaderOptions evaluationLoaderOptions(const data::ProjectData& pd,
                                            const EvaluationOptions& options);
/// Tells options.progress that `done` of `total` samples are evaluated; false (the loader
/// stopped, `out` marked cancelled) when it asks to cancel.
bool keepEvaluating(const EvaluationOptions& options, std::int64_t done, std::int64_t total,
                    data::DataLoader& loader, Evaluation& out);
/// The task's predictions file when options.predictions asks for one (null otherwise); throws
/// when the task writes none.
std::unique_ptr<task::PredictionWriter> predictionsFor(const task::Task& task,
                                                       const data::SampleSet& set,
                                                       const EvaluationOptions& options);

}  // namespace netsmith::eval
