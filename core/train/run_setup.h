#pragma once

// Everything a run needs before its first batch: the parsed options, the process group, the
// threads, the data and its loaders, the model (initialised from another checkpoint when asked)
// and its optimizer, and the plan. The run's steps (setup, loop, checkpoints, LR finder) share
// this.
#include <torch/torch.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "augment/transform.h"
#include "data/data_loader.h"
#include "data/project_data.h"
#include "graph/graph_module.h"
#include "ops/op_registry.h"
#include "project/project.h"
#include "run/run_writer.h"
#include "task/task.h"
#include "train/process_group.h"
#include "train/run_context.h"
#include "train/run_plan.h"
#include "train/task_setup.h"
#include "train/train_options.h"

namespace netsmith::train {

struct RunSetup {
  /// The project the run trains: the config's, with train.replace_head applied to its model.
  /// Checkpoints and the run folder record this one.
  project::Project project;
  TrainOptions opt;
  torch::Device device{torch::kCPU};
  std::unique_ptr<ProcessGroup> group;
  std::unique_ptr<data::ProjectData> pd;
  graph::GraphModule net{nullptr};
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  std::map<std::string, double> lrMult;  ///< nodes whose learning rate is a multiple (not 1)
  std::vector<double> lrScales;          ///< the learning-rate multiplier of each optimizer group
  std::vector<torch::Tensor> params;     ///< trainable
  std::vector<std::string> paramNodes;   ///< node id of each entry of `params`
  std::string signature;                 ///< the model's structure (see modelSignature)
  std::string initReport;                ///< what --init-from loaded
  std::unique_ptr<data::DataLoader> trainLoader, valLoader, testLoader;
  std::int64_t numClasses = 0;
  /// The project's task (TrainerConfig::tasks): the batches' target, the loss, the figures.
  std::shared_ptr<task::Task> task;
  RunPlan plan;
  int threads = 0;  ///< compute threads configured
  int workers = 0;  ///< loader threads
};

/// What the opened data tells the task (its classes, their count, a regression's targets):
/// what a run trains with and what `eval` of its checkpoint evaluates with, through
/// taskSetupFor (train/task_setup.h), so train's test loss and eval's agree.
TaskFacts taskFacts(const data::DataModule& data);

/// Reads the options, joins the process group, sets the threads, opens the data, builds the
/// model, optimizer, loaders and plan. Throws netsmith::Error (or RunEnd when stopped while
/// computing data statistics).
void prepareRun(RunContext& ctx, RunSetup& setup);

/// Creates the run folder (or opens the given one, when resuming into it), takes its lock
/// (another process writing into it is refused), removes the temporaries killed checkpoint
/// writes left, and attaches the run writer. Returns the folder ("" when this process writes
/// none: a worker rank, lr-find, a test without a folder).
std::string openRunFolder(RunContext& ctx, const RunSetup& setup,
                          std::unique_ptr<run::RunFolderLock>& lock);

/// A fingerprint of the model's structure (ops, parameters, wiring; not editor positions), so
/// a resume can refuse a checkpoint of another model.
std::string modelSignature(const graph::ModelGraph& model);

}  // namespace netsmith::train
