// The train section's features end to end: early stopping, ReduceLROnPlateau, fast_dev_run and
// overfit_batches, gradient accumulation with clipping, label smoothing and class weights,
// --init-from another model, and frozen nodes.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "checkpoint/checkpoint.h"
#include "experiment/sweep_spec.h"
#include "graph/graph_module.h"
#include "ops/op_registry.h"
#include "registries/registries.h"
#include "resolve/resolved_project.h"
#include "train/train_options.h"
#include "train/trainer.h"
#include "trainer_fixtures.h"

using namespace netsmith;
using namespace netsmith::train;
using netsmith::testutil::configFor;
using netsmith::testutil::setNodeParam;
using netsmith::testutil::TempDir;
using netsmith::testutil::trainRun;
using netsmith::testutil::weightsOf;

TEST(Trainer, EarlyStoppingEndsARunThatStopsImproving) {
  TempDir dir;
  // No epoch can improve the accuracy by 0.5 (50 points) after the first: the run ends after
  // 1 + patience epochs.
  const auto path = testutil::writeTrainProject(
      dir,
      {{"epochs", 20},
       {"optimizer", Json{{"type", "sgd"}, {"lr", 1e-9}, {"momentum", 0.0}}},
       {"schedule", Json{{"type", "constant"}}},
       {"early_stopping", Json{{"metric", "val_accuracy"}, {"patience", 2}, {"min_delta", 0.5}}}});
  const auto run = trainRun(configFor(path, dir));
  EXPECT_EQ(run.result.state, run::FinishState::Completed);
  EXPECT_NE(run.result.reason.find("early stopping: val_accuracy has not improved for 2 epochs"),
            std::string::npos)
      << run.result.reason;
  EXPECT_EQ(run.recorder->ofType(run::EventType::EpochEnd).size(), 3u);
}

// ReduceLROnPlateau: with a threshold no epoch can meet, every epoch after the first is a
// plateau and (patience 0) halves the LR; the state survives in the checkpoint.
TEST(Trainer, PlateauCutsTheLearningRate) {
  TempDir dir;
  const auto run = trainRun(configFor(
      testutil::writeTrainProject(
          dir,
          {{"epochs", 4},
           {"optimizer", Json{{"type", "sgd"}, {"lr", 0.01}, {"momentum", 0.0}}},
           {"schedule", Json{{"type", "constant"}}},
           {"plateau",
            Json{{"metric", "val_loss"}, {"factor", 0.5}, {"patience", 0}, {"threshold", 0.99}}}}),
      dir));
  ASSERT_EQ(run.result.state, run::FinishState::Completed) << run.result.reason;
  const auto epochs = run.recorder->ofType(run::EventType::EpochEnd);
  ASSERT_EQ(epochs.size(), 4u);
  EXPECT_DOUBLE_EQ(epochs[0].epoch.lr, 0.01);
  EXPECT_DOUBLE_EQ(epochs[1].epoch.lr, 0.01);
  EXPECT_DOUBLE_EQ(epochs[2].epoch.lr, 0.005);
  EXPECT_DOUBLE_EQ(epochs[3].epoch.lr, 0.0025);
  const auto meta = checkpoint::readCheckpoint(run.result.lastCheckpoint).meta;
  // The plateau's state under its own key of the loop object (callback.h: stateKey()).
  const auto& plateau = meta["loop"]["lr_plateau"];
  EXPECT_DOUBLE_EQ(plateau["factor"].get<double>(), 0.125);
  EXPECT_EQ(plateau["controller"]["has_best"], true);
  EXPECT_DOUBLE_EQ(plateau["controller"]["best"].get<double>(), epochs[0].epoch.validation.loss);
}

TEST(Trainer, FastDevRunAndOverfitBatches) {
  TempDir dir;
  const auto fast = trainRun(
      configFor(testutil::writeTrainProject(dir, {{"fast_dev_run", true}, {"epochs", 9}}), dir));
  ASSERT_EQ(fast.result.state, run::FinishState::Completed) << fast.result.reason;
  EXPECT_EQ(fast.recorder->ofType(run::EventType::BatchEnd).size(), 1u);
  const auto e = fast.recorder->ofType(run::EventType::EpochEnd);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].epoch.validation.samples, 32);
  EXPECT_TRUE(fast.recorder->ofType(run::EventType::Checkpoint).empty());

  const auto overfit = trainRun(configFor(
      testutil::writeTrainProject(dir, {{"overfit_batches", 1},
                                        {"epochs", 30},
                                        {"optimizer", Json{{"type", "adam"}, {"lr", 0.01}}}}),
      dir));
  ASSERT_EQ(overfit.result.state, run::FinishState::Completed) << overfit.result.reason;
  const auto oe = overfit.recorder->ofType(run::EventType::EpochEnd);
  EXPECT_EQ(overfit.recorder->ofType(run::EventType::BatchEnd).size(), 30u);
  EXPECT_EQ(oe.back().epoch.validation.samples, 32);
  EXPECT_GT(oe.back().epoch.validation.accuracy, 0.95);  // one batch, memorised
}

TEST(Trainer, GradientAccumulationClippingLabelSmoothingAndClassWeights) {
  TempDir dir;
  const auto run = trainRun(configFor(testutil::writeTrainProject(dir, {{"grad_accumulation", 4},
                                                                        {"clip_grad_norm", 0.5},
                                                                        {"label_smoothing", 0.1},
                                                                        {"class_weights", "auto"},
                                                                        {"amp", "bf16"},
                                                                        {"channels_last", true}}),
                                      dir));
  ASSERT_EQ(run.result.state, run::FinishState::Completed) << run.result.reason;
  // 6 batches an epoch, 4 per step: steps 1 and 2 in each epoch.
  const auto batches = run.recorder->ofType(run::EventType::BatchEnd);
  ASSERT_EQ(batches.size(), 12u);
  EXPECT_EQ(batches[3].batch.step, 1);
  EXPECT_EQ(batches[5].batch.step, 2);
  EXPECT_EQ(batches.back().batch.step, 4);
  EXPECT_EQ(batches.back().batch.totalSteps, 4);
}

// train.sampler "balanced": the run says so (and warns beside class weights, which even the
// classes out a second time); each epoch is as long as with the shuffle.
TEST(Trainer, ABalancedSamplerIsLoggedAndWarnsBesideClassWeights) {
  TempDir dir;
  const auto run = trainRun(configFor(
      testutil::writeTrainProject(dir, {{"sampler", "balanced"}, {"class_weights", "auto"}}), dir));
  ASSERT_EQ(run.result.state, run::FinishState::Completed) << run.result.reason;
  bool said = false, warned = false;
  for (const auto& e : run.recorder->events()) {
    said |= e.message.find("train.sampler balanced: each epoch draws") != std::string::npos;
    warned |= e.message.find("keep one of the two") != std::string::npos;
  }
  EXPECT_TRUE(said);
  EXPECT_TRUE(warned);
  EXPECT_EQ(run.recorder->ofType(run::EventType::BatchEnd).size(), 12u);
}

TEST(Trainer, InitFromAnotherModelReportsWhatMatched) {
  TempDir dir;
  const auto path = testutil::writeTrainProject(dir, {{"epochs", 1}});
  const auto first = trainRun(configFor(path, dir));
  ASSERT_EQ(first.result.state, run::FinishState::Completed);
  // The same layers, but 6 classes: fc no longer fits.
  auto config = configFor(path, dir);
  setNodeParam(config, "fc", "out_features", 6);
  config.initFromPath = first.result.lastCheckpoint;
  const auto tuned = trainRun(config);
  ASSERT_EQ(tuned.result.state, run::FinishState::Completed) << tuned.result.reason;
  const auto& report = tuned.result.initReport;
  EXPECT_NE(report.find("shape mismatch 2"), std::string::npos) << report;
  EXPECT_NE(report.find("fc.weight"), std::string::npos) << report;
}

TEST(Trainer, FrozenNodesAreNotUpdated) {
  TempDir dir;
  auto config = configFor(testutil::writeTrainProject(dir, {{"epochs", 1}}), dir);
  for (auto& n : config.project.model.nodes)
    if (n.id == "conv") n.frozen = true;
  const auto run = trainRun(config);
  ASSERT_EQ(run.result.state, run::FinishState::Completed) << run.result.reason;
  // The same seed builds the same initial conv weights.
  torch::manual_seed(3);
  const auto registry = ops::OpRegistry::withBuiltins();
  const auto w = weightsOf(run.result.lastCheckpoint);
  graph::GraphModule fresh(config.project.model, registry);
  const auto init = checkpoint::moduleState(*fresh);
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (w[i].first.rfind("conv.", 0) == 0) {
      EXPECT_TRUE(torch::equal(w[i].second, init[i].second)) << w[i].first;
    }
    if (w[i].first == "fc.weight") {
      EXPECT_FALSE(torch::equal(w[i].second, init[i].second));
    }
  }
}

// Registries come from the program, not from core: a schedule a program registers is one
// validation, a sweep's path check and training all know, and a program without it refuses it
// by name.
TEST(Trainer, AScheduleTheProgramRegistersReachesValidationSweepsAndTraining) {
  TempDir dir;
  auto registries = std::make_shared<Registries>(*Registries::builtins());
  registries->schedules.add(
      {"halving",
       "halves the LR every step",
       {schema::ParamSpec::real("floor", 0.0, "the LR never goes below this").atLeast(0)},
       [](const schema::Params& p, double lr, std::int64_t step, const train::StepSpan&) {
         return std::max(lr * std::pow(0.5, double(step)), p.real("floor"));
       }});
  const Json train{{"epochs", 1},
                   {"batch_size", 32},
                   {"optimizer", {{"type", "sgd"}, {"lr", 0.2}}},
                   {"schedule", {{"type", "halving"}, {"floor", 0.01}}}};
  auto config = testutil::configFor(testutil::writeTrainProject(dir, train, 128), dir);
  config.registries = registries;
  config.limitTrain = 128;

  EXPECT_TRUE(resolve::checkTrainable(config.project, config.baseDir, *registries).empty());
  Problems problems;
  train::parseTrainOptions(config.project.train, registries->schedules, problems);
  EXPECT_TRUE(problems.empty()) << formatProblems(problems);
  const auto builtins = Registries::builtins();
  train::parseTrainOptions(config.project.train, builtins->schedules, problems);
  EXPECT_NE(formatProblems(problems).find("halving"), std::string::npos)
      << formatProblems(problems);
  problems.clear();

  const Json sweep{
      {"params", Json::array({Json{{"path", "train.schedule.floor"}, {"choice", {0.01, 0.05}}}})}};
  experiment::parseSweep(sweep, config.project, problems, *registries);
  EXPECT_TRUE(problems.empty()) << formatProblems(problems);
  experiment::parseSweep(sweep, config.project, problems, *builtins);
  EXPECT_FALSE(problems.empty());

  const auto run = testutil::trainRun(config);
  ASSERT_EQ(run.result.state, run::FinishState::Completed) << run.result.reason;
  const auto batches = run.recorder->ofType(run::EventType::BatchEnd);
  ASSERT_GE(batches.size(), 3u);
  for (std::size_t k = 0; k < batches.size(); ++k)
    EXPECT_NEAR(batches[k].batch.lr, std::max(0.2 * std::pow(0.5, double(k)), 0.01), 1e-12) << k;
}
