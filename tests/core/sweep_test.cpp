// Sweeps (core/experiment): the grid and random samplers enumerate exactly what is defined,
// seeded; ASHA stops the trials it should at a rung, on a made-up objective; setting paths are
// checked against the project with suggestions, and applied to a trial's project.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "experiment/samplers.h"
#include "experiment/sweep_event.h"
#include "experiment/sweep_spec.h"
#include "registries/registries.h"
#include "test_support.h"

using namespace netsmith;
using namespace netsmith::experiment;

namespace {

project::Project sweepBaseProject() {
  return project::loadProject(
             testutil::sourcePath("resources/examples/fashion_mnist.netsmith.json"))
      .project;
}

SweepSpec spec(const std::string& json) {
  Problems problems;
  auto s = parseSweep(Json::parse(json), sweepBaseProject(), problems,
                      *::netsmith::Registries::builtins());
  EXPECT_TRUE(problems.empty()) << formatProblems(problems);
  return s;
}

std::string sweepProblemsOf(const std::string& json) {
  Problems problems;
  parseSweep(Json::parse(json), sweepBaseProject(), problems, *::netsmith::Registries::builtins());
  return formatProblems(problems);
}

}  // namespace

TEST(Sweep, TheGridIsTheProductInOrder) {
  const auto s = spec(R"({"method": "grid", "trials": 100, "params": [
      {"path": "train.optimizer.type", "choice": ["sgd", "adam"]},
      {"path": "train.optimizer.lr", "log_uniform": [1e-4, 1e-2], "grid_points": 3}]})");
  const auto grid = gridAssignments(s);
  ASSERT_EQ(grid.size(), 6u);
  EXPECT_EQ(plannedTrials(s), 6);
  const std::vector<std::pair<std::string, double>> expected{
      {"sgd", 1e-4}, {"sgd", 1e-3}, {"sgd", 1e-2}, {"adam", 1e-4}, {"adam", 1e-3}, {"adam", 1e-2}};
  for (std::size_t i = 0; i < grid.size(); ++i) {
    EXPECT_EQ(grid[i].at("train.optimizer.type"), expected[i].first) << i;
    EXPECT_NEAR(grid[i].at("train.optimizer.lr").get<double>(), expected[i].second,
                expected[i].second * 1e-9)
        << i;
    EXPECT_EQ(trialAssignment(s, std::int64_t(i)), grid[i]);
  }
  const auto ints = spec(R"({"method": "grid", "params": [
      {"path": "train.batch_size", "int_uniform": [32, 128], "grid_points": 4}]})");
  std::vector<std::int64_t> sizes;
  for (const auto& a : gridAssignments(ints))
    sizes.push_back(a.at("train.batch_size"));
  EXPECT_EQ(sizes, (std::vector<std::int64_t>{32, 64, 96, 128}));
  // `trials` caps a grid.
  EXPECT_EQ(gridAssignments(spec(R"({"method": "grid", "trials": 4, "params": [
      {"path": "train.optimizer.type", "choice": ["sgd", "adam", "adamw"]},
      {"path": "train.batch_size", "choice": [32, 64]}]})"))
                .size(),
            4u);
}

TEST(Sweep, RandomTrialsAreSeededAndDrawnFromTheirRanges) {
  const std::string params = R"("params": [
      {"path": "train.optimizer.lr", "log_uniform": [1e-5, 1]},
      {"path": "train.batch_size", "int_uniform": [1, 3]},
      {"path": "train.optimizer.type", "choice": ["sgd", "adam"]}])";
  const auto a = spec(R"({"method": "random", "seed": 5, )" + params + "}");
  const auto b = spec(R"({"method": "random", "seed": 6, )" + params + "}");
  EXPECT_EQ(randomAssignment(a, 3), randomAssignment(a, 3));  // trial 3, whatever ran before
  EXPECT_NE(randomAssignment(a, 3), randomAssignment(b, 3));
  EXPECT_NE(randomAssignment(a, 3), randomAssignment(a, 4));
  int belowMilli = 0;
  std::map<std::int64_t, int> sizes;
  std::map<std::string, int> types;
  const int n = 4000;
  for (int k = 0; k < n; ++k) {
    const auto t = randomAssignment(a, k);
    const double lr = t.at("train.optimizer.lr");
    ASSERT_GE(lr, 1e-5);
    ASSERT_LE(lr, 1.0);
    belowMilli += lr < 1e-3;
    ++sizes[t.at("train.batch_size").get<std::int64_t>()];
    ++types[t.at("train.optimizer.type").get<std::string>()];
  }
  // Uniform in log space: 2 of the 5 decades lie below 1e-3.
  EXPECT_NEAR(double(belowMilli) / n, 0.4, 0.03);
  EXPECT_EQ(sizes.size(), 3u);
  for (const auto& [size, count] : sizes) {
    EXPECT_TRUE(size >= 1 && size <= 3);
    EXPECT_NEAR(double(count) / n, 1.0 / 3, 0.03) << size;
  }
  EXPECT_NEAR(double(types["sgd"]) / n, 0.5, 0.03);
}

TEST(Sweep, AshaStopsTheTrialsOutsideTheTopThirdOfItsRung) {
  // Nine trials reach the first rung in this order with these accuracies (reduction 3): a
  // trial goes on while it is among the best max(1, n / 3) of the n scores so far (by hand).
  const std::vector<double> arrivals{0.5, 0.7, 0.3, 0.9, 0.6, 0.2, 0.8, 0.4, 0.95};
  const std::vector<bool> goesOn{true, true, false, true, false, false, true, false, true};
  std::vector<double> rung;
  for (std::size_t i = 0; i < arrivals.size(); ++i) {
    rung.push_back(arrivals[i]);
    EXPECT_EQ(ashaContinues(rung, arrivals[i], 3, /*maximize=*/true), goesOn[i]) << "trial " << i;
  }
  // A loss: lower is better; a NaN never goes on.
  EXPECT_TRUE(ashaContinues({0.9, 0.4}, 0.4, 2, false));
  EXPECT_FALSE(ashaContinues({0.9, 0.4}, 0.9, 2, false));
  EXPECT_FALSE(ashaContinues({0.5, NAN}, NAN, 3, true));
  AshaOptions asha;
  asha.enabled = true;
  EXPECT_EQ(ashaRungs(asha, 10), (std::vector<std::int64_t>{1, 3, 9}));
  EXPECT_EQ(ashaRungs(asha, 9), (std::vector<std::int64_t>{1, 3}));
  asha.minEpochs = 2;
  asha.reduction = 2;
  EXPECT_EQ(ashaRungs(asha, 10), (std::vector<std::int64_t>{2, 4, 8}));
  asha.enabled = false;
  EXPECT_TRUE(ashaRungs(asha, 10).empty());
}

TEST(Sweep, PathsAreCheckedWithSuggestions) {
  const auto bad = sweepProblemsOf(R"({"params": [
      {"path": "train.optimizer.lrr", "log_uniform": [1e-5, 1]},
      {"path": "train.batch_sise", "choice": [32, 64]},
      {"path": "model.nodes[conv1_].out_channels", "choice": [16, 32]},
      {"path": "augment[HorizontalFlp].p", "uniform": [0, 1]},
      {"path": "model.nodes[conv1_1].out_chanels", "choice": [16, 32]},
      {"path": "data.train.root", "choice": ["a", "b"]},
      {"path": "train.optimizer.lr", "log_uniform": [0, 1]},
      {"path": "train.optimizer.lr"}],
      "objective": "val_acuracy", "method": "bayes"})");
  for (
      const std::string expected :
      {R"(sweep.params[0].path: train.optimizer has no key "lrr"; did you mean "lr"?)",
       R"(sweep.params[1].path: train has no key "batch_sise"; did you mean "batch_size"?)",
       R"(sweep.params[2].path: the model has no node "conv1_"; did you mean "conv1_1"?)",
       R"(sweep.params[3].path: the augment list has no transform "HorizontalFlp"; did you mean "HorizontalFlip"?)",
       R"(sweep.params[4].path: Conv2d "conv1_1" has no setting "out_chanels"; did you mean "out_channels"?)",
       R"(sweep.params[5].path: "data.train.root" starts with "data"; settings are under train, augment or model)",
       "sweep.params[6].log_uniform: must be [low, high] with low < high and low > 0",
       "sweep.params[7]: give exactly one of uniform, log_uniform, int_uniform or choice",
       R"(sweep.objective: unknown objective "val_acuracy"; did you mean "val_accuracy"?)",
       R"(sweep.method: must be "grid", "random" or "tpe" (model-based))"}) {
    EXPECT_NE(bad.find(expected), std::string::npos) << "missing: " << expected << "\nin:\n" << bad;
  }
}

TEST(Sweep, AnAssignmentMakesTheTrialsProject) {
  const auto base = sweepBaseProject();
  const auto trial = applyAssignment(base, {{"train.optimizer.lr", 0.01},
                                            {"train.batch_size", 64},
                                            {"model.nodes[conv1_1].out_channels", 16},
                                            {"augment[HorizontalFlip].p", 0.25}});
  EXPECT_DOUBLE_EQ(trial.train["optimizer"]["lr"].get<double>(), 0.01);
  EXPECT_EQ(trial.train["optimizer"]["type"], "adam");  // the rest of the section kept
  EXPECT_EQ(trial.train["batch_size"], 64);
  EXPECT_EQ(trial.model.find("conv1_1")->params["out_channels"], 16);
  EXPECT_EQ(trial.model.find("conv1_2")->params, base.model.find("conv1_2")->params);
  EXPECT_DOUBLE_EQ(trial.augment[0]["p"].get<double>(), 0.25);
  EXPECT_EQ(base.train["batch_size"], 128);  // the base is untouched
}

TEST(SweepEvent, EveryEventRoundTripsThroughItsJsonLine) {
  using experiment::SweepEvent;
  using experiment::SweepEventType;
  SweepEvent started;
  started.folder = "sweeps/lr-20261202-101500";
  started.name = "lr";
  started.plannedTrials = 12;
  started.parallel = 2;
  SweepEvent trial;
  trial.type = SweepEventType::TrialStarted;
  trial.trial = 3;
  trial.params = Json{{"train.optimizer.lr", 0.01}};
  trial.resumed = true;
  trial.fromEpoch = 2;
  trial.stopAtEpoch = 4;
  trial.epochs = 9;
  trial.folder = "trials/t0003";
  SweepEvent epoch;
  epoch.type = SweepEventType::Epoch;
  epoch.trial = 3;
  epoch.epoch = 3;
  epoch.epochs = 9;
  epoch.objective = "val_accuracy";
  epoch.value = std::nan("");
  SweepEvent rung;
  rung.type = SweepEventType::Rung;
  rung.trial = 3;
  rung.epoch = 3;
  rung.score = 0.8123;
  rung.cutoff = 0.841;
  rung.compared = 4;
  SweepEvent ended;
  ended.type = SweepEventType::TrialEnded;
  ended.trial = 3;
  ended.record = Json{{"status", "stopped"},
                      {"note", "ASHA at epoch 3"},
                      {"epochs_done", 3},
                      {"objective", 0.8123}};
  SweepEvent done;
  done.type = SweepEventType::SweepEnded;
  done.state = "interrupted";
  done.best = Json{{"id", 1}};
  for (const SweepEvent& e : {started, trial, epoch, rung, ended, done}) {
    const std::string line = e.toJson().dump();
    const auto back = SweepEvent::fromJson(Json::parse(line));
    ASSERT_TRUE(back) << line;
    EXPECT_EQ(back->type, e.type);
    EXPECT_EQ(back->toJson().dump(), line);
  }
  const auto e = SweepEvent::fromJson(ended.toJson()).value();
  EXPECT_EQ(e.status, "stopped");
  EXPECT_EQ(e.reason, "ASHA at epoch 3");
  EXPECT_EQ(e.epochsDone, 3);
  EXPECT_DOUBLE_EQ(e.trialObjective, 0.8123);
  EXPECT_TRUE(std::isnan(SweepEvent::fromJson(epoch.toJson())->value));
  // Not this sweep's events: shown as text by the studio.
  for (const char* text : {R"({"event": "party"})", R"({"no": "event"})", R"([1, 2])",
                           R"({"event": "rung", "score": "high"})", R"({"event": 7})"})
    EXPECT_FALSE(SweepEvent::fromJson(Json::parse(text))) << text;
}
