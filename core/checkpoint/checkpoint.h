#pragma once

// Checkpoints: one safetensors file holding the model's tensors ("model/<name>"), the
// optimizer's per-parameter state ("optim/<param name>/<field>") and JSON metadata (epoch,
// step, schedule and RNG state, metrics, versions). Written atomically; data only.
#include <torch/torch.h>

#include <string>
#include <vector>

#include "checkpoint/safetensors.h"
#include "common/json.h"

namespace netsmith::checkpoint {

/// What loading a state into a module did, name by name.
struct LoadReport {
  std::vector<std::string> loaded;
  std::vector<std::string> missing;        ///< in the module, not in the file
  std::vector<std::string> unexpected;     ///< in the file, not in the module
  std::vector<std::string> shapeMismatch;  ///< "fc2.weight: file 10x128, model 5x128"
  bool complete() const { return missing.empty() && unexpected.empty() && shapeMismatch.empty(); }
  /// "loaded 12, missing 2 (fc3.weight, fc3.bias), unexpected 0, shape mismatch 1 (...)"
  std::string summary() const;
};

/// Parameters and buffers by name ("conv1.weight", "bn1.running_mean").
NamedTensors moduleState(const torch::nn::Module& module);
/// Copies every tensor whose name and shape match; reports the rest. Nothing else changes.
LoadReport loadModuleState(torch::nn::Module& module, const NamedTensors& state);

/// The optimizer's per-parameter state, named after the module's parameters. `type` is the
/// optimizer name (sgd, adam, adamw, rmsprop, adagrad).
NamedTensors optimizerState(torch::optim::Optimizer& optimizer, const std::string& type,
                            const torch::nn::Module& module);
/// Restores what optimizerState() produced into a fresh optimizer over the same module.
void restoreOptimizerState(torch::optim::Optimizer& optimizer, const std::string& type,
                           const torch::nn::Module& module, const NamedTensors& state);

struct CheckpointData {
  Json meta = Json::object();  ///< epoch, step, metrics, ...; "format" is added on write
  NamedTensors model;
  NamedTensors optimizer;
};

/// Writes atomically: a crash at any moment leaves the previous file at `path` loadable.
void writeCheckpoint(const std::string& path, const CheckpointData& data);
/// Reads a checkpoint; throws netsmith::Error for truncated, corrupt or foreign files.
CheckpointData readCheckpoint(const std::string& path);

/// Checks the types of the metadata's known keys (version, epoch, step, classes, normalization,
/// project, loop, ...) before anything reads them; throws netsmith::Error naming the key and
/// what it holds.
void validateCheckpointMeta(const Json& meta, const std::string& path);

}  // namespace netsmith::checkpoint
