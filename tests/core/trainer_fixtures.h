#pragma once

// What the trainer's end-to-end tests share: the config of a project written by
// writeTrainProject(), a run to its end with every event recorded, and a checkpoint's weights.
// GoogleTest and LibTorch, so core tests only: train_fixtures.h, which the studio's tests
// include too, stays free of both.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <memory>
#include <string>
#include <utility>

#include "checkpoint/checkpoint.h"
#include "common/json.h"
#include "project/project.h"
#include "registries/registries.h"
#include "train/trainer.h"
#include "train_fixtures.h"

namespace netsmith::testutil {

/// A trainer config for the project at `projectPath`, its runs under `dir`/runs.
inline train::TrainerConfig configFor(const std::string& projectPath, const TempDir& dir) {
  Problems problems;
  auto c = trainerConfigFor(projectPath, dir, &problems);
  EXPECT_TRUE(problems.empty()) << formatProblems(problems);
  return c;
}

/// A finished run: its result and every event it sent.
struct Run {
  train::TrainResult result;
  std::shared_ptr<Recorder> recorder = std::make_shared<Recorder>();
};

inline Run trainRun(train::TrainerConfig config) {
  Run run;
  train::Trainer trainer(std::move(config));
  trainer.addSink(run.recorder);
  trainer.start();
  trainer.wait();
  run.result = trainer.result();
  return run;
}

/// Sets parameter `key` of node `id` in the config's model.
inline void setNodeParam(train::TrainerConfig& config, const std::string& id,
                         const std::string& key, const Json& value) {
  for (auto& n : config.project.model.nodes)
    if (n.id == id) n.params[key] = value;
}

inline checkpoint::NamedTensors weightsOf(const std::string& path) {
  return checkpoint::readCheckpoint(path).model;
}

}  // namespace netsmith::testutil
