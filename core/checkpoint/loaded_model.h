#pragma once

// A trained model loaded for use: a checkpoint's (or an imported project's) graph, its
// LibTorch module in eval mode with the weights, and what a consumer needs to preprocess
// inputs. Export, Grad-CAM and the studio's sample views load models through here.
#include <torch/torch.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "checkpoint/safetensors.h"
#include "common/json.h"
#include "data/data_config.h"
#include "graph/graph_module.h"
#include "ops/op_registry.h"
#include "project/project.h"
#include "registries/registries_fwd.h"

namespace netsmith::checkpoint {

struct LoadedModel {
  project::Project project;
  std::string baseDir;  ///< relative data paths resolve from here (data::checkpointBaseDir)
  std::shared_ptr<const ops::OpRegistry> registry;
  mutable graph::GraphModule net{nullptr};  ///< forward() runs it (eval mode)
  NamedTensors weights;                     ///< moduleState(net)
  std::vector<std::string> classes;
  std::vector<double> mean, std;  ///< empty when unknown
  /// How an image of another size is fitted to the input (the snapshot's data.fit).
  data::FitPolicy fit = data::FitPolicy::Resize;
  /// What the run's task recorded (checkpoint "task_state": a regression's target scaling);
  /// null when none.
  Json taskState;
  std::string source;      ///< the checkpoint path (or the project's)
  bool dataNamed = false;  ///< loaded from a project file the user named: so is its data
  /// Temperature scaling (eval/calibration.h): forward() and every export divide the output
  /// by it. 1: the output as trained.
  double temperature = 1;

  /// A model run elsewhere rather than by `net` (an exported ONNX file in ONNX Runtime,
  /// export/onnx_model.h): forward() returns what it gives, which holds any temperature
  /// already; `net` is null then.
  std::function<torch::Tensor(const torch::Tensor&)> runner;
  /// What runs the model, for reports: "LibTorch", "ONNX Runtime 1.31.1".
  std::string runtime = "LibTorch";

  /// The model's output for `input` (N x C x H x W) over `temperature`, no gradients.
  torch::Tensor forward(const torch::Tensor& input) const;
};

/// Loads a checkpoint, or a project whose weights come from its init_from (an imported model,
/// before any training), its ops from `registries`; throws netsmith::Error naming the file.
LoadedModel loadModel(const std::string& checkpointPath, const RegistriesPtr& registries);
/// Wraps a project's model with its current weights (e.g. a freshly built module).
LoadedModel loadedModelFrom(const project::Project& project, graph::GraphModule net,
                            std::shared_ptr<const ops::OpRegistry> registry);

}  // namespace netsmith::checkpoint
