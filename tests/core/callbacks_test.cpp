// The callbacks on made-up epoch figures, without a model: checkpoint cadence and pruning,
// best-metric tracking, early stopping patience, plateau reduction, the numeric watchdog, and
// their state through a checkpoint's "loop" object, gradual unfreezing's schedule.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "data_fixtures.h"
#include "train/best_metric.h"
#include "train/checkpoint_callback.h"
#include "train/early_stopping.h"
#include "train/numeric_watchdog.h"
#include "train/plateau_callback.h"
#include "train/unfreeze_callback.h"

using namespace netsmith;
using namespace netsmith::train;
namespace fs = std::filesystem;

namespace {

run::EpochMetrics epochWithValLoss(std::int64_t epoch, double valLoss) {
  run::EpochMetrics e;
  e.epoch = epoch;
  e.hasValidation = true;
  e.validation.loss = valLoss;
  e.validation.accuracy = 1.0 - valLoss;
  e.validation.figures["accuracy"] = e.validation.accuracy;
  e.trainLoss = valLoss;
  return e;
}

std::set<std::string> filesIn(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& entry : fs::directory_iterator(dir))
    out.insert(entry.path().filename().string());
  return out;
}

}  // namespace

TEST(CheckpointCallback, LastEveryEpochBestWhenImprovedEpochNPruned) {
  testutil::TempDir dir;
  const fs::path ckpt = dir.file("checkpoints");
  fs::create_directories(ckpt);
  std::vector<std::string> written;
  auto writer = [&](const std::string& tag, const Json& metrics) {
    written.push_back(tag);
    EXPECT_EQ(metrics["event"], netsmith::run::eventTypeName(run::EventType::EpochEnd));
    const auto path = ckpt / (tag + ".safetensors");
    std::ofstream(path) << tag;
    return path.string();
  };
  auto best = std::make_shared<BestMetric>(MetricChoice{"val_loss", false});
  CallbackList list;
  list.add(best);
  list.add(std::make_shared<CheckpointCallback>(CheckpointCallback::Options{ckpt.string(), 2, 2},
                                                writer, best));
  const std::vector<double> losses{0.9, 0.8, 0.85, 0.7, 0.75, 0.76, 0.6};
  for (std::size_t i = 0; i < losses.size(); ++i)
    EXPECT_EQ(list.epochEnd(epochWithValLoss(std::int64_t(i), losses[i])), "");
  // Best after epochs 1, 2, 4 and 7; epoch-N after 2, 4, 6; the oldest epoch-2 pruned.
  EXPECT_EQ(std::count(written.begin(), written.end(), "last"), 7);
  EXPECT_EQ(std::count(written.begin(), written.end(), "best"), 4);
  EXPECT_EQ(std::count(written.begin(), written.end(), "epoch-2"), 1);
  EXPECT_EQ(filesIn(ckpt), (std::set<std::string>{"last.safetensors", "best.safetensors",
                                                  "epoch-4.safetensors", "epoch-6.safetensors"}));
  EXPECT_EQ(best->bestEpoch(), 6);
  EXPECT_DOUBLE_EQ(best->best(), 0.6);
}

TEST(CheckpointCallback, NoFolderWritesNothing) {
  int calls = 0;
  CheckpointCallback c(
      {"", 1, 1},
      [&](const std::string&, const Json&) {
        ++calls;
        return std::string();
      },
      nullptr);
  c.onEpochEnd(epochWithValLoss(0, 1.0));
  EXPECT_EQ(calls, 0);
}

TEST(EarlyStopping, StopsAfterPatienceEpochsWithoutImprovement) {
  EarlyStoppingOptions o;
  o.enabled = true;
  o.metric = {"val_loss", false};
  o.patience = 3;
  o.minDelta = 0.01;
  EarlyStopping es(o);
  EXPECT_EQ(es.onEpochEnd(epochWithValLoss(0, 1.0)), "");
  EXPECT_EQ(es.onEpochEnd(epochWithValLoss(1, 0.995)), "");  // within min_delta: not better
  EXPECT_EQ(es.onEpochEnd(epochWithValLoss(2, 0.9)), "");    // better: the count restarts
  EXPECT_EQ(es.onEpochEnd(epochWithValLoss(3, 0.95)), "");
  EXPECT_EQ(es.onEpochEnd(epochWithValLoss(4, 0.91)), "");
  EXPECT_EQ(es.badEpochs(), 2);
  const std::string why = es.onEpochEnd(epochWithValLoss(5, 0.92));
  EXPECT_NE(why.find("early stopping: val_loss has not improved for 3 epochs (best 0.9)"),
            std::string::npos)
      << why;
  // Disabled: never.
  EarlyStopping off(EarlyStoppingOptions{});
  for (int i = 0; i < 20; ++i)
    EXPECT_EQ(off.onEpochEnd(epochWithValLoss(i, 1.0)), "");
}

TEST(PlateauCallback, CutsTheFactorAfterPatienceAndKeepsMinLr) {
  PlateauOptions o;
  o.enabled = true;
  o.metric = {"val_loss", false};
  o.controller.patience = 1;
  o.controller.factor = 0.5;
  o.controller.minLr = 0.03;
  std::vector<std::string> said;
  PlateauCallback p(
      o, [] { return 0.1; }, [&](const std::string& m) { said.push_back(m); });
  EXPECT_DOUBLE_EQ(p.apply(0.1), 0.1);
  p.onEpochEnd(epochWithValLoss(0, 1.0));
  p.onEpochEnd(epochWithValLoss(1, 1.0));  // one bad epoch: within patience
  EXPECT_DOUBLE_EQ(p.factor(), 1.0);
  p.onEpochEnd(epochWithValLoss(2, 1.0));  // two: cut
  EXPECT_DOUBLE_EQ(p.factor(), 0.5);
  EXPECT_DOUBLE_EQ(p.apply(0.1), 0.05);
  ASSERT_EQ(said.size(), 1u);
  EXPECT_NE(said[0].find("learning rate 0.1 -> 0.05"), std::string::npos) << said[0];
  p.onEpochEnd(epochWithValLoss(3, 1.0));
  p.onEpochEnd(epochWithValLoss(4, 1.0));
  EXPECT_DOUBLE_EQ(p.apply(0.1), 0.03);  // 0.025 is below min_lr
  // The state survives a checkpoint.
  Json loop = Json::object();
  p.save(loop);
  PlateauCallback q(o, [] { return 0.1; }, {});
  q.restore(loop);
  EXPECT_DOUBLE_EQ(q.factor(), p.factor());
  // Disabled: the LR stays as scheduled.
  PlateauCallback off(PlateauOptions{}, [] { return 0.1; }, {});
  for (int i = 0; i < 10; ++i)
    off.onEpochEnd(epochWithValLoss(i, 1.0));
  EXPECT_DOUBLE_EQ(off.apply(0.1), 0.1);
}

TEST(NumericWatchdog, StopsWithTheRecentNormsOrSkips) {
  NumericWatchdog stop("stop");
  for (double n : {1.0, 2.0, 3.0, 4.0, 5.0, 6.0})
    stop.recordGradNorm(n);
  EXPECT_EQ(stop.recentNorms().size(), 5u);
  const auto v = stop.onNonFinite("loss", std::nan(""), {41, 2, 6, 0.5});
  EXPECT_TRUE(v.stop);
  EXPECT_NE(v.message.find("non-finite loss (nan) at step 42 (epoch 3, batch 7), learning rate "
                           "0.5; recent gradient norms: 2, 3, 4, 5, 6"),
            std::string::npos)
      << v.message;
  EXPECT_NE(v.message.find("train.nan_policy"), std::string::npos);
  const auto first = NumericWatchdog("stop").onNonFinite("gradient norm", INFINITY, {0, 0, 0, 1});
  EXPECT_NE(first.message.find("recent gradient norms: none yet"), std::string::npos);
  NumericWatchdog skip("skip");
  const auto s = skip.onNonFinite("gradient norm", INFINITY, {9, 0, 3, 1});
  EXPECT_FALSE(s.stop);
  EXPECT_EQ(s.message, "skipped step 10: non-finite gradient norm");
  EXPECT_EQ(skip.onNonFinite("loss", INFINITY, {9, 1, 3, 1}).message,
            "skipped batch 4 of epoch 2: non-finite loss");
}

TEST(CallbackList, StateRoundTripsThroughTheLoopObject) {
  EarlyStoppingOptions eo;
  eo.enabled = true;
  eo.patience = 2;
  auto es = std::make_shared<EarlyStopping>(eo);
  auto best = std::make_shared<BestMetric>(MetricChoice{"val_accuracy", true});
  CallbackList list;
  list.add(es);
  list.add(best);
  list.epochEnd(epochWithValLoss(0, 0.5));
  list.epochEnd(epochWithValLoss(1, 0.6));
  Json loop = Json::object();
  list.save(loop);
  EXPECT_TRUE(loop.contains("early_stopping"));
  EXPECT_TRUE(loop.contains("best"));
  auto es2 = std::make_shared<EarlyStopping>(eo);
  auto best2 = std::make_shared<BestMetric>(MetricChoice{"val_accuracy", true});
  CallbackList again;
  again.add(es2);
  again.add(best2);
  again.restore(loop);
  EXPECT_EQ(es2->badEpochs(), 1);
  EXPECT_EQ(best2->bestEpoch(), 0);
  // The next bad epoch ends the restored run as it would have ended the first.
  EXPECT_NE(again.epochEnd(epochWithValLoss(2, 0.7)), "");
}

TEST(CallbackList, EachStateHasItsKeyAndOlderCheckpointsStillLoad) {
  PlateauOptions o;
  o.enabled = true;
  o.controller.patience = 0;
  o.controller.factor = 0.5;
  auto plateau = std::make_shared<PlateauCallback>(
      o, [] { return 0.1; }, [](const std::string&) {});
  plateau->onEpochEnd(epochWithValLoss(0, 1.0));
  plateau->onEpochEnd(epochWithValLoss(1, 1.0));
  ASSERT_DOUBLE_EQ(plateau->factor(), 0.5);
  CallbackList list;
  list.add(plateau);
  Json loop = Json::object();
  list.save(loop);
  ASSERT_TRUE(loop.contains("lr_plateau"));
  EXPECT_DOUBLE_EQ(loop["lr_plateau"]["factor"].get<double>(), 0.5);

  // A checkpoint written before early stopping and the best metric were added: both start
  // fresh instead of refusing it, and the plateau's state comes back.
  EarlyStoppingOptions eo;
  eo.enabled = true;
  eo.patience = 1;
  auto es = std::make_shared<EarlyStopping>(eo);
  auto best = std::make_shared<BestMetric>(MetricChoice{"val_loss", false});
  auto plateau2 = std::make_shared<PlateauCallback>(
      o, [] { return 0.1; }, [](const std::string&) {});
  CallbackList later;
  later.add(es);
  later.add(best);
  later.add(plateau2);
  ASSERT_NO_THROW(later.restore(loop));
  EXPECT_DOUBLE_EQ(plateau2->factor(), 0.5);
  EXPECT_FALSE(best->hasBest());
  EXPECT_EQ(es->badEpochs(), 0);

  // The plateau's keys as checkpoints before per-callback keys wrote them.
  Json old = Json{{"lr_factor", 0.25}, {"plateau", loop["lr_plateau"]["controller"]}};
  auto plateau3 = std::make_shared<PlateauCallback>(
      o, [] { return 0.1; }, [](const std::string&) {});
  CallbackList again;
  again.add(plateau3);
  again.restore(old);
  EXPECT_DOUBLE_EQ(plateau3->factor(), 0.25);

  // A malformed state is refused, not half-read.
  Json bad = loop;
  bad["lr_plateau"] = Json{{"factor", "half"}};
  CallbackList broken;
  broken.add(std::make_shared<PlateauCallback>(
      o, [] { return 0.1; }, [](const std::string&) {}));
  EXPECT_ANY_THROW(broken.restore(bad));
}

// train.unfreeze: each step once, at the start of its epoch, with the nodes from `from` on (all
// of them without `from`); a run resumed at a later epoch replays the steps due by then at once.
TEST(UnfreezeCallback, UnfreezesEachStepOnceAtItsEpochAndReplaysThemOnResume) {
  graph::ModelGraph model;
  for (const auto& [id, input] : std::vector<std::pair<std::string, std::string>>{
           {"stem", ""}, {"body", "stem"}, {"side", "stem"}, {"head", "body"}}) {
    graph::Node n;
    n.id = id;
    n.op = "Identity";
    if (!input.empty()) n.inputs = {input};
    model.nodes.push_back(n);
  }
  // Given out of order: the callback keeps them by epoch.
  const std::vector<UnfreezeStep> steps{{3, ""}, {1, "body"}};
  std::vector<std::pair<std::int64_t, std::vector<std::string>>> calls;
  std::vector<std::string> logs;
  std::int64_t epochNow = -1;
  const auto make = [&] {
    return std::make_shared<UnfreezeCallback>(
        steps, model,
        [&](const std::vector<std::string>& ids) {
          calls.emplace_back(epochNow, ids);
          return UnfreezeCallback::Unfrozen{ids.size(), std::int64_t(10 * ids.size())};
        },
        [&](const std::string& m) { logs.push_back(m); });
  };

  CallbackList list;
  auto unfreeze = make();
  list.add(unfreeze);
  for (epochNow = 0; epochNow < 5; ++epochNow) {
    list.epochStart(epochNow);
    list.epochStart(epochNow);  // a second start of the same epoch does nothing again
  }
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].first, 1);
  EXPECT_EQ(calls[0].second, (std::vector<std::string>{"body", "head"}));
  EXPECT_EQ(calls[1].first, 3);
  EXPECT_EQ(calls[1].second, (std::vector<std::string>{"stem", "body", "side", "head"}));
  EXPECT_EQ(unfreeze->applied(), 2u);
  ASSERT_EQ(logs.size(), 2u);
  EXPECT_EQ(logs[0],
            "epoch 2: unfroze 2 nodes from \"body\" (20 parameters now train; train.unfreeze)");
  EXPECT_EQ(logs[1], "epoch 4: unfroze 4 nodes (40 parameters now train; train.unfreeze)");

  // Resumed in epoch 3 (0-based 2): the first step again, at once; the second at its epoch.
  calls.clear();
  CallbackList resumed;
  resumed.add(make());
  for (epochNow = 2; epochNow < 5; ++epochNow)
    resumed.epochStart(epochNow);
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].first, 2);
  EXPECT_EQ(calls[0].second, (std::vector<std::string>{"body", "head"}));
  EXPECT_EQ(calls[1].first, 3);
}

TEST(NumericWatchdog, WarnsOncePerEpochWhenTheLossOrGradientNormRunsAway) {
  NumericWatchdog w("stop");
  EXPECT_EQ(w.checkLoss(2.3, {0, 0, 0, 0.1}), "");
  for (int i = 1; i < 20; ++i)
    EXPECT_EQ(w.checkLoss(2.0 + 0.01 * i, {i, 0, i, 0.1}), "");
  EXPECT_EQ(w.checkLoss(150.0, {20, 0, 20, 0.1}), "");  // 65x: high, but not over 100x
  const std::string warned = w.checkLoss(9e14, {21, 0, 21, 0.1});
  EXPECT_NE(warned.find("the loss (9e+14) is over 100x the first batch's (2.3) at step 22 "
                        "(epoch 1, batch 22"),
            std::string::npos)
      << warned;
  EXPECT_NE(warned.find("training is diverging"), std::string::npos);
  EXPECT_EQ(w.checkLoss(9e15, {22, 0, 22, 0.1}), "");  // once per epoch
  EXPECT_NE(w.checkLoss(9e15, {40, 1, 0, 0.1}), "");   // and again in the next
  for (double n : {1.0, 1.2, 0.9, 1.1})
    w.recordGradNorm(n);
  EXPECT_EQ(w.checkGradNorm(800.0, {41, 1, 1, 0.1}), "");
  const std::string norm = w.checkGradNorm(2e4, {42, 1, 2, 0.1});
  EXPECT_NE(norm.find("the gradient norm (2e+04) jumped to over 1000x its recent median (1.1)"),
            std::string::npos)
      << norm;
  EXPECT_EQ(w.checkLoss(std::nan(""), {43, 2, 0, 0.1}), "");  // non-finite: the other rule's
}
