// Sweeps' decisions (core/experiment): the model-based sampler (TPE), a whole ASHA sweep
// simulated on a made-up objective with the schedule's own functions (which trials stop at
// each rung, worked out by hand), the record on disk and its checks, and the rule that keeps a
// model-based sweep's proposals independent of which trials finished first.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "common/error.h"
#include "data_fixtures.h"
#include "experiment/samplers.h"
#include "experiment/sweep_schedule.h"
#include "experiment/sweep_state.h"
#include "experiment/tpe.h"
#include "registries/registries.h"
#include "test_support.h"

using namespace netsmith;
using namespace netsmith::experiment;

namespace {

SweepSpec specOf(const std::string& json) {
  const auto base =
      project::loadProject(testutil::sourcePath("resources/examples/fashion_mnist.netsmith.json"))
          .project;
  Problems problems;
  auto s = parseSweep(Json::parse(json), base, problems, *::netsmith::Registries::builtins());
  EXPECT_TRUE(problems.empty()) << formatProblems(problems);
  return s;
}

/// A record with trials 0..n-1 of `epochs` epochs each, none started.
SweepState trialsOf(int n, std::int64_t epochs) {
  SweepState state;
  for (int i = 0; i < n; ++i) {
    Trial t;
    t.id = i;
    t.maxEpochs = epochs;
    state.trials.push_back(t);
  }
  return state;
}

/// A made-up objective: best at lr = 1e-2, falling with the distance in decades.
double fakeAccuracy(double lr) {
  return 0.9 - 0.1 * std::pow(std::log10(lr) + 2, 2);
}

}  // namespace

TEST(Tpe, StartsRandomThenProposesNearTheBestTrials) {
  const auto spec = specOf(R"({"method": "tpe", "seed": 11, "trials": 60, "params": [
      {"path": "train.optimizer.lr", "log_uniform": [1e-5, 1]}]})");
  std::vector<Observation> seen;
  // Before `startup` scored trials, the random sampler's trials, exactly.
  for (std::int64_t k = 0; k < 5; ++k) {
    EXPECT_EQ(tpeAssignment(spec, k, seen, true), randomAssignment(spec, k)) << k;
    const double lr = randomAssignment(spec, k).at("train.optimizer.lr");
    seen.push_back({randomAssignment(spec, k), fakeAccuracy(lr)});
  }
  // Then sequentially: proposals gather within half a decade of the optimum far more often
  // than random draws over five decades (one in five).
  int nearTpe = 0, nearRandom = 0;
  for (std::int64_t k = 5; k < 45; ++k) {
    const auto a = tpeAssignment(spec, k, seen, true);
    EXPECT_EQ(a, tpeAssignment(spec, k, seen, true));  // a pure function
    const double lr = a.at("train.optimizer.lr");
    ASSERT_GE(lr, 1e-5);
    ASSERT_LE(lr, 1.0);
    nearTpe += std::abs(std::log10(lr) + 2) < 0.5;
    nearRandom +=
        std::abs(std::log10(randomAssignment(spec, k).at("train.optimizer.lr").get<double>()) + 2) <
        0.5;
    seen.push_back({a, fakeAccuracy(lr)});
  }
  EXPECT_GE(nearTpe, 20) << "TPE proposals within half a decade of the optimum, of 40";
  EXPECT_LT(nearRandom, nearTpe);
  const auto best = std::max_element(
      seen.begin(), seen.end(), [](const auto& a, const auto& b) { return a.score < b.score; });
  EXPECT_LT(std::abs(std::log10(best->params.at("train.optimizer.lr").get<double>()) + 2), 0.1);
}

TEST(Tpe, ChoicesAndWholeNumbers) {
  const auto spec = specOf(R"({"method": "tpe", "seed": 2, "params": [
      {"path": "train.optimizer.type", "choice": ["sgd", "adam", "adamw"]},
      {"path": "train.batch_size", "int_uniform": [16, 256]}]})");
  std::vector<Observation> seen;
  // adam is best, and larger batches are better: a loss to minimise.
  for (std::int64_t k = 0; k < 30; ++k) {
    const auto a = tpeAssignment(spec, k, seen, /*maximize=*/false);
    const auto type = a.at("train.optimizer.type").get<std::string>();
    const auto& batch = a.at("train.batch_size");
    ASSERT_TRUE(batch.is_number_integer());
    ASSERT_GE(batch.get<std::int64_t>(), 16);
    ASSERT_LE(batch.get<std::int64_t>(), 256);
    const double loss = (type == "adam" ? 0.2 : 0.6) + 0.001 * (256 - batch.get<double>());
    seen.push_back({a, loss});
  }
  int adam = 0;
  for (std::size_t i = 10; i < seen.size(); ++i)
    adam += seen[i].params.at("train.optimizer.type") == "adam";
  EXPECT_GE(adam, 14) << "of the 20 model-based trials";
  // A diverged trial (NaN) counts as the worst, not the best.
  std::vector<Observation> withNan(seen.begin(), seen.begin() + 8);
  for (auto& o : withNan)
    o.score = o.params.at("train.optimizer.type") == "sgd" ? NAN : 0.5;
  int sgd = 0;
  for (std::int64_t k = 8; k < 28; ++k)
    sgd += tpeAssignment(spec, k, withNan, false).at("train.optimizer.type") == "sgd";
  EXPECT_LE(sgd, 5);
}

TEST(SweepSchedule, AnAshaSweepOnAMadeUpObjective) {
  // Six trials of 9 epochs, rungs at 1 and 3 (reduction 3), one at a time. Trial i's accuracy
  // after epoch e is base[i] + 0.01 e. In trial order, at rung 1 (best max(1, n/3) of the n so
  // far): t0 0.51 alone, on; t1 0.61 best of 2, on; t2 0.31: cutoff 0.61 (1 of 3), stops;
  // t3 0.71 best, on; t4 0.41: cutoff 0.61 (1 of 5), stops; t5 0.66: cutoff 0.66 (2 of 6) is
  // its own, on. At rung 3: t0 alone, on; t1 0.63 > 0.53, on; t3 0.73, on (1 of 3);
  // t5 0.68: the best 1 of 4 is 0.73, so it stops.
  const std::vector<double> base{0.5, 0.6, 0.3, 0.7, 0.4, 0.65};
  auto spec = specOf(R"({"method": "grid", "trials": 6, "asha": {"min_epochs": 1,
      "reduction": 3}, "params": [{"path": "train.seed", "choice": [0, 1, 2, 3, 4, 5]}]})");
  SweepState state;
  state.parallel = 1;
  int safety = 0;
  while (!sweepDone(state, spec, false) && ++safety < 100) {
    decideRungs(state, spec);
    Trial* next = nullptr;
    for (auto& t : state.trials)
      if (t.status == TrialStatus::Running && !next) next = &t;
    Assignment settings;
    if (!next && nextTrialSettings(state, spec, settings)) {
      Trial t;
      t.id = static_cast<std::int64_t>(state.trials.size());
      t.params = settings;
      t.maxEpochs = 9;
      state.trials.push_back(t);
      next = &state.trials.back();
    }
    if (!next) continue;
    // "Train" the segment: scores up to its stop.
    const auto stop = segmentStop(*next, spec);
    auto scores = next->scores;
    for (auto e = next->epochsDone + 1; e <= (stop ? stop : next->maxEpochs); ++e)
      scores[e] = base[static_cast<std::size_t>(next->id)] + 0.01 * double(e);
    endSegment(*next, scores, SegmentEnd::Exited, stop, "");
  }
  ASSERT_TRUE(sweepDone(state, spec, false));
  std::vector<std::int64_t> epochs;
  for (const auto& t : state.trials)
    epochs.push_back(t.epochsDone);
  EXPECT_EQ(epochs, (std::vector<std::int64_t>{9, 9, 1, 9, 1, 3}));
  EXPECT_EQ(state.trials[2].status, TrialStatus::Stopped);
  EXPECT_NE(state.trials[2].note.find("ASHA at epoch 1: val_accuracy 0.3100 below the rung's "
                                      "0.6100 (best 1/3 of 3)"),
            std::string::npos)
      << state.trials[2].note;
  EXPECT_EQ(state.trials[5].status, TrialStatus::Stopped);
  EXPECT_EQ(state.trials[3].status, TrialStatus::Completed);
  const auto* best = bestTrial(state, spec);
  ASSERT_NE(best, nullptr);
  EXPECT_EQ(best->id, 3);
  EXPECT_NEAR(best->objective(), 0.79, 1e-12);
}

TEST(SweepSchedule, ARungWaitsForTheTrialsBeforeIt) {
  auto spec = specOf(R"({"method": "random", "trials": 3, "asha": {"min_epochs": 2}, "params": [
      {"path": "train.optimizer.lr", "log_uniform": [1e-4, 1]}]})");
  SweepState state = trialsOf(2, 6);
  // Trial 1 reaches the rung at epoch 2 first; trial 0 is still on its way: no decision yet.
  endSegment(state.trials[1], {{1, 0.5}, {2, 0.6}}, SegmentEnd::Exited, 2, "");
  EXPECT_EQ(state.trials[1].status, TrialStatus::Paused);
  EXPECT_TRUE(decideRungs(state, spec).empty());
  // Trial 0 fails: it will never reach the rung, so trial 1 is judged against its own score.
  endSegment(state.trials[0], {{1, 0.2}}, SegmentEnd::Failed, 2, "netsmith-cli: boom");
  EXPECT_EQ(state.trials[0].status, TrialStatus::Failed);
  EXPECT_EQ(state.trials[0].error, "netsmith-cli: boom");
  const auto d = decideRungs(state, spec);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_TRUE(d[0].continues);
  EXPECT_EQ(d[0].compared, 1);
  EXPECT_EQ(state.trials[1].status, TrialStatus::Running);
  // An interrupted segment keeps the trial running, with the epochs it recorded.
  endSegment(state.trials[1], {{1, 0.5}, {2, 0.6}, {3, 0.65}}, SegmentEnd::Interrupted, 6, "");
  EXPECT_EQ(state.trials[1].status, TrialStatus::Running);
  EXPECT_EQ(state.trials[1].epochsDone, 3);
  EXPECT_EQ(segmentStop(state.trials[1], spec), 0);  // past its only rung (2 x 3 = 6 is the end)
  // A run that ends early by its own early stopping is complete; one with no epoch failed.
  endSegment(state.trials[1], {{1, 0.5}, {2, 0.6}, {3, 0.65}}, SegmentEnd::Exited, 0, "");
  EXPECT_EQ(state.trials[1].status, TrialStatus::Completed);
  Trial empty;
  empty.maxEpochs = 3;
  endSegment(empty, {}, SegmentEnd::Exited, 0, "");
  EXPECT_EQ(empty.status, TrialStatus::Failed);
  // The time budget stops what waits; what runs finishes its segment.
  state.trials.push_back(Trial{});
  state.trials.back().id = 2;
  stopWaitingTrials(state, {}, "the sweep's time budget of 5 min ran out");
  EXPECT_EQ(state.trials[2].status, TrialStatus::Stopped);
  EXPECT_TRUE(sweepDone(state, spec, true));
}

TEST(SweepSchedule, ATrialStoppedAtItsRungIsJudgedThereWhenTheSweepResumes) {
  // Rungs at epochs 1 and 2 of 4. A sweep killed (or interrupted) just after a trial's segment
  // reached its rung must not carry the trial past that rung unjudged.
  auto spec = specOf(R"({"method": "random", "trials": 2, "asha": {"min_epochs": 1, "reduction": 2},
      "params": [
      {"path": "train.optimizer.lr", "log_uniform": [1e-4, 1]}]})");
  SweepState state = trialsOf(2, 4);
  endSegment(state.trials[0], {{1, 0.8}}, SegmentEnd::Exited, 1, "");
  ASSERT_EQ(decideRungs(state, spec).size(), 1u);  // alone at its rung: it goes on
  // Interrupted after its segment's last epoch: paused at the rung, not running past it.
  state.trials[1].status = TrialStatus::Running;
  endSegment(state.trials[1], {{1, 0.3}}, SegmentEnd::Interrupted, 1, "");
  EXPECT_EQ(state.trials[1].status, TrialStatus::Paused);
  // Killed: the record says running; the run on disk has reached the rung.
  state.trials[1].status = TrialStatus::Running;
  state.trials[1].scores.clear();
  pauseAtReachedRung(state.trials[1], {{1, 0.3}}, spec);
  EXPECT_EQ(state.trials[1].status, TrialStatus::Paused);
  EXPECT_EQ(state.trials[1].epochsDone, 1);
  auto d = decideRungs(state, spec);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_FALSE(d[0].continues);  // 0.3 is below the best half of {0.8, 0.3}
  EXPECT_EQ(state.trials[1].status, TrialStatus::Stopped);
  // Between rungs (epoch 3 of 4, past the last rung) it runs on; a rung it was already judged
  // at is judged again with the same result.
  state.trials[0].status = TrialStatus::Running;
  pauseAtReachedRung(state.trials[0], {{1, 0.8}, {2, 0.85}, {3, 0.86}}, spec);
  EXPECT_EQ(state.trials[0].status, TrialStatus::Running);
  EXPECT_EQ(state.trials[0].epochsDone, 3);
  pauseAtReachedRung(state.trials[0], {{1, 0.8}}, spec);
  EXPECT_EQ(state.trials[0].status, TrialStatus::Paused);
  d = decideRungs(state, spec);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_TRUE(d[0].continues);
  EXPECT_EQ(state.trials[0].status, TrialStatus::Running);
  // At its last epoch it is left for the segment's end to complete.
  pauseAtReachedRung(state.trials[0], {{1, 0.8}, {2, 0.85}, {3, 0.86}, {4, 0.87}}, spec);
  EXPECT_EQ(state.trials[0].status, TrialStatus::Running);
}

TEST(SweepSchedule, AModelBasedTrialLearnsOnlyFromTrialsALagBehind) {
  auto spec = specOf(R"({"method": "tpe", "trials": 20, "startup_trials": 2, "params": [
      {"path": "train.optimizer.lr", "log_uniform": [1e-4, 1]}]})");
  SweepState state;
  state.samplerLag = 2;
  Assignment a;
  for (int i = 0; i < 4; ++i) {  // trials 0..3 exist: 0 and 1 ended, 2 and 3 run
    ASSERT_TRUE(nextTrialSettings(state, spec, a));
    Trial t;
    t.id = i;
    t.params = a;
    t.maxEpochs = 1;
    t.status = i < 2 ? TrialStatus::Completed : TrialStatus::Running;
    if (i < 2) t.scores[1] = 0.5 + 0.1 * i;
    state.trials.push_back(t);
  }
  // Trial 4 learns from trials 0..1 (ended), not from 2 and 3, whatever they do.
  ASSERT_TRUE(nextTrialSettings(state, spec, a));
  std::vector<Observation> known{{state.trials[0].params, 0.5}, {state.trials[1].params, 0.6}};
  TpeOptions options;
  options.startup = 2;
  EXPECT_EQ(a, tpeAssignment(spec, 4, known, true, options));
  state.trials[3].status = TrialStatus::Completed;
  state.trials[3].scores[1] = 0.99;
  Assignment again;
  ASSERT_TRUE(nextTrialSettings(state, spec, again));
  EXPECT_EQ(a, again);
  // Trial 5 learns from trials 0..2, and trial 2 has not ended: it waits.
  Trial t4;
  t4.id = 4;
  t4.params = a;
  state.trials.push_back(t4);
  EXPECT_FALSE(nextTrialSettings(state, spec, again));
  state.trials[2].status = TrialStatus::Failed;
  EXPECT_TRUE(nextTrialSettings(state, spec, again));
}

TEST(SweepState, TheRecordRoundTripsAndIsChecked) {
  SweepState s;
  s.name = "lr";
  s.parallel = 2;
  s.threadsPerTrial = 1;
  s.samplerLag = 2;
  s.trainArgs = {"--limit-train", "6000"};
  Trial t;
  t.id = 0;
  t.params = {{"train.optimizer.lr", 0.01}, {"train.batch_size", 64}};
  t.status = TrialStatus::Stopped;
  t.maxEpochs = 9;
  t.scores = {{1, 0.8}, {2, NAN}};
  t.epochsDone = 2;
  t.note = "ASHA";
  s.trials.push_back(t);
  const Json j = sweepStateToJson(s);
  EXPECT_TRUE(j["trials"][0]["objective"].is_null());  // a NaN score is written as null
  const auto back = sweepStateFromJson(j, "sweep.json");
  EXPECT_EQ(sweepStateToJson(back), j);
  EXPECT_EQ(back.trials[0].epochsDone, 2);

  const auto refused = [&](const std::function<void(Json&)>& edit, const std::string& expected) {
    Json bad = j;
    edit(bad);
    try {
      sweepStateFromJson(bad, "dir/sweep.json");
      ADD_FAILURE() << "accepted: " << bad.dump();
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  };
  refused([](Json& b) { b["format"] = "x"; }, "dir/sweep.json: not a Netsmith sweep record");
  // Keys of the wrong kind are refused, not thrown raw (found by fuzz_sweep).
  refused([](Json& b) { b["format"] = Json::array({Json::object()}); },
          "dir/sweep.json: not a Netsmith sweep record");
  refused([](Json& b) { b["version"] = "1"; }, "is not one this Netsmith reads");
  refused([](Json& b) { b["trials"][0]["status"] = "sleeping"; },
          "dir/sweep.json.trials[0].status: unknown status \"sleeping\"");
  refused([](Json& b) { b["trials"][0]["id"] = 3; }, "trials must be numbered 0, 1");
  refused([](Json& b) { b["trials"][0]["scores"]["x"] = 1; }, "\"x\" is not an epoch number");
  refused([](Json& b) { b["trials"][0]["scores"]["10"] = 1; }, "scores.10: out of range");
  refused([](Json& b) { b["parallel"] = "two"; }, "dir/sweep.json.parallel: has the wrong type");
  refused(
      [](Json& b) {
        b["train_args"] = Json::array({"--resume", "x"});
      },
      "\"--resume\" is not a flag a sweep passes on");

  namespace fs = std::filesystem;
  const testutil::TempDir temp;
  const std::string dir = temp.path().string();
  saveSweepState(dir, s);
  EXPECT_EQ(sweepStateToJson(loadSweepState(dir)), j);
  std::ofstream(fs::path(dir) / "sweep.json")
      << "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
         "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
         "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
         "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
         "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[";
  EXPECT_THROW(loadSweepState(dir), Error);
  EXPECT_THROW(loadSweepState(dir + "/nothing"), Error);
  EXPECT_EQ(trialFolderName(7), "trials/t0007");
}

TEST(SweepState, APathsCopyReadsTheSameFilesFromAnyFolder) {
  const Json project{{"init_from", "weights.safetensors"},
                     {"data",
                      {{"train", {{"format", "idx"}, {"images", "d/i.idx"}, {"labels", "/abs/l"}}},
                       {"test", {{"format", "cifar10"}, {"files", {"a.bin", "b.bin"}}}},
                       {"validation", {{"fraction", 0.1}}}}}};
  const Json out = withAbsolutePaths(project, "/base/dir");
  EXPECT_EQ(out["init_from"], "/base/dir/weights.safetensors");
  EXPECT_EQ(out["data"]["train"]["images"], "/base/dir/d/i.idx");
  EXPECT_EQ(out["data"]["train"]["labels"], "/abs/l");
  EXPECT_EQ(out["data"]["test"]["files"][1], "/base/dir/b.bin");
  EXPECT_EQ(out["data"]["validation"], project["data"]["validation"]);
}
