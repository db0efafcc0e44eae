// Fine-tuning edits and behaviour: the head found and replaced, freezing a node and everything
// before it, BatchNorm of frozen nodes kept in evaluation mode, a project's init_from, and
// gradual unfreezing.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <set>

#include "checkpoint/checkpoint.h"
#include "checkpoint/safetensors.h"
#include "common/file_util.h"
#include "graph/graph_module.h"
#include "graph/model_edits.h"
#include "project/project.h"
#include "registries/registries.h"
#include "resolve/resolved_project.h"
#include "test_support.h"
#include "train/trainer.h"
#include "train_fixtures.h"

using namespace netsmith;

namespace {

project::LoadedProject loadedDefaultProject() {
  return project::loadProject(
      testutil::sourcePath("resources/examples/fashion_mnist.netsmith.json"));
}

}  // namespace

TEST(FineTune, TheHeadIsTheLastLinearAndIsReplaced) {
  auto p = loadedDefaultProject().project;
  EXPECT_EQ(graph::headNode(p.model), "fc2");
  const auto& registry = ops::OpRegistry::withBuiltins();
  EXPECT_EQ(graph::replaceHead(p.model, 5), "fc2");
  const auto analysis = graph::analyseGraph(p.model, registry);
  ASSERT_TRUE(analysis.ok()) << formatProblems(analysis.problems);
  EXPECT_EQ(analysis.outputShape, (Shape{5}));
  // Through a Softmax and a Dropout after it; none without a Linear.
  auto loaded = testutil::parseModel(R"({"input": {"channels": 1, "height": 4, "width": 4},
    "nodes": [{"id": "input", "op": "Input"}, {"id": "f", "op": "Flatten", "inputs": ["input"]},
      {"id": "head", "op": "Linear", "params": {"out_features": 3}, "inputs": ["f"]},
      {"id": "d", "op": "Dropout", "inputs": ["head"]},
      {"id": "s", "op": "Softmax", "inputs": ["d"]}]})");
  EXPECT_EQ(graph::headNode(loaded.project.model), "head");
  auto convOnly = testutil::parseModel(R"({"input": {"channels": 1, "height": 4, "width": 4},
    "nodes": [{"id": "input", "op": "Input"},
      {"id": "c", "op": "Conv2d", "params": {"out_channels": 2}, "inputs": ["input"]}]})");
  EXPECT_EQ(graph::headNode(convOnly.project.model), "");
  EXPECT_THROW(graph::replaceHead(convOnly.project.model, 4), Error);
}

TEST(FineTune, FreezeUpToFreezesTheNodeAndEverythingBeforeIt) {
  auto p = loadedDefaultProject().project;
  const auto frozen = graph::freezeUpTo(p.model, "pool1");
  // The default model's first stage, by hand: input, two conv-BN-ReLU, the pool.
  EXPECT_EQ(frozen, (std::vector<std::string>{"input", "conv1_1", "bn1_1", "relu1_1", "conv1_2",
                                              "bn1_2", "relu1_2", "pool1"}));
  for (const auto& n : p.model.nodes)
    EXPECT_EQ(n.frozen, std::set<std::string>(frozen.begin(), frozen.end()).count(n.id) > 0)
        << n.id;
  const auto analysis = graph::analyseGraph(p.model, ops::OpRegistry::withBuiltins());
  std::int64_t total = 0, trainable = 0, firstStage = 0;
  for (const auto& n : analysis.nodes) {
    total += n.paramCount;
    trainable += n.trainableParams;
    if (std::find(frozen.begin(), frozen.end(), n.id) != frozen.end()) firstStage += n.paramCount;
  }
  EXPECT_EQ(trainable, total - firstStage);
  EXPECT_THROW(graph::freezeUpTo(p.model, "nope"), Error);
}

TEST(FineTune, FrozenBatchNormKeepsItsStatisticsWhileTheRestTrains) {
  auto loaded = testutil::parseModel(R"({"input": {"channels": 2, "height": 6, "width": 6},
    "nodes": [{"id": "input", "op": "Input"},
      {"id": "bn_frozen", "op": "BatchNorm2d", "inputs": ["input"], "frozen": true},
      {"id": "bn_live", "op": "BatchNorm2d", "inputs": ["bn_frozen"]},
      {"id": "f", "op": "Flatten", "inputs": ["bn_live"]},
      {"id": "fc", "op": "Linear", "params": {"out_features": 3}, "inputs": ["f"]}]})");
  ASSERT_TRUE(loaded.problems.empty());
  for (const bool keep : {true, false}) {
    graph::GraphModule net(loaded.project.model, ops::OpRegistry::withBuiltins());
    EXPECT_EQ(net->keepFrozenBatchNormInEval(keep), keep ? 1 : 0);
    net->train();
    const auto before = net->named_buffers()["bn_frozen.running_mean"].clone();
    const auto liveBefore = net->named_buffers()["bn_live.running_mean"].clone();
    net->forward(torch::randn({8, 2, 6, 6}) * 3 + 5);
    const bool frozenMoved = !torch::equal(before, net->named_buffers()["bn_frozen.running_mean"]);
    EXPECT_EQ(frozenMoved, !keep);
    EXPECT_FALSE(torch::equal(liveBefore, net->named_buffers()["bn_live.running_mean"]));
    EXPECT_TRUE(net->is_training());
  }
}

TEST(FineTune, InitFromRoundTripsAndIsChecked) {
  const std::string base = R"({"format": "netsmith-project", "version": 1,
    "model": {"input": {"channels": 1, "height": 4, "width": 4},
              "nodes": [{"id": "input", "op": "Input"}]}, )";
  auto loaded = project::parseProject(base + R"("init_from": "w.safetensors"})", "p.json");
  EXPECT_TRUE(loaded.problems.empty()) << formatProblems(loaded.problems);
  EXPECT_EQ(loaded.project.initFrom, "w.safetensors");
  EXPECT_TRUE(loaded.project.extra.empty());
  const auto again = project::parseProject(project::serialiseProject(loaded.project), "q.json");
  EXPECT_EQ(again.project.initFrom, "w.safetensors");
  const auto bad = project::parseProject(base + R"("init_from": 3})", "p.json");
  EXPECT_NE(formatProblems(bad.problems).find("init_from: must be a string (a weights file)"),
            std::string::npos)
      << formatProblems(bad.problems);
}

// Gradual unfreezing (train.unfreeze): frozen nodes from `from` on start to train at the start
// of the given epoch, and the run's events say so; nodes before `from` stay frozen. Checked
// against the weights the run started from (its init_from file) and its last checkpoint.
TEST(FineTune, GradualUnfreezingTrainsTheNodesFromItsEpochOn) {
  testutil::TempDir dir;
  const auto path = testutil::writeTrainProject(dir, {{"epochs", 2}});
  for (const int at : {1, 5}) {
    SCOPED_TRACE("unfreeze at epoch " + std::to_string(at));
    auto loaded = project::loadProject(path);
    auto& model = loaded.project.model;
    model.find("conv")->frozen = true;
    model.find("bn")->frozen = true;
    loaded.project.train["unfreeze"] = Json::array({Json{{"epoch", at}, {"from", "bn"}}});
    const std::string start = dir.file("start" + std::to_string(at) + ".safetensors");
    {
      torch::manual_seed(7);
      graph::GraphModule net(model, ops::OpRegistry::withBuiltins());
      checkpoint::writeSafetensors(start, checkpoint::moduleState(*net));
    }
    train::TrainerConfig config;
    config.registries = ::netsmith::Registries::builtins();
    config.project = loaded.project;
    config.baseDir = loaded.baseDir();
    config.runsRoot = dir.file("runs" + std::to_string(at));
    config.initFromPath = start;
    train::Trainer trainer(config);
    trainer.start();
    trainer.wait();
    const auto result = trainer.result();
    ASSERT_EQ(result.state, run::FinishState::Completed) << result.reason;
    const auto before = checkpoint::readSafetensors(start).tensors;
    const auto after =
        checkpoint::readCheckpoint(result.runDir + "/checkpoints/last.safetensors").model;
    const auto tensor = [](const checkpoint::NamedTensors& t, const std::string& name) {
      for (const auto& [n, v] : t)
        if (n == name) return v;
      ADD_FAILURE() << "no " << name;
      return torch::Tensor();
    };
    EXPECT_TRUE(torch::equal(tensor(before, "conv.weight"), tensor(after, "conv.weight")));
    EXPECT_EQ(torch::equal(tensor(before, "bn.weight"), tensor(after, "bn.weight")), at != 1);
    EXPECT_EQ(torch::equal(tensor(before, "bn.running_mean"), tensor(after, "bn.running_mean")),
              at != 1);
    EXPECT_FALSE(torch::equal(tensor(before, "fc.weight"), tensor(after, "fc.weight")));
    const std::string events = readTextFile(result.runDir + "/events.jsonl");
    EXPECT_EQ(events.find("epoch 2: unfroze 1 nodes from \\\"bn\\\"") != std::string::npos, at == 1)
        << events.substr(0, 2000);
  }
  // A node that is not in the model is named, with a suggestion.
  auto loaded = project::loadProject(path);
  loaded.project.train["unfreeze"] = Json::array({Json{{"epoch", 1}, {"from", "bnn"}}});
  train::TrainerConfig config;
  config.registries = ::netsmith::Registries::builtins();
  config.project = loaded.project;
  config.baseDir = loaded.baseDir();
  config.runsRoot = dir.file("runs-bad");
  train::Trainer trainer(config);
  trainer.start();
  trainer.wait();
  EXPECT_EQ(trainer.result().state, run::FinishState::Failed);
  EXPECT_NE(trainer.result().reason.find(
                "train.unfreeze[0].from: no node \"bnn\" in the model; did you mean \"bn\"?"),
            std::string::npos)
      << trainer.result().reason;
}

// train.replace_head: a head of the wrong width is given one output per class of the data and
// new weights; the checkpoint records the replaced model. Without it, the run is refused.
TEST(FineTune, ReplaceHeadAtTrainTimeFitsTheHeadToTheData) {
  testutil::TempDir dir;
  const auto path = testutil::writeTrainProject(dir, {{"epochs", 1}});  // 4 classes
  for (const bool replace : {true, false}) {
    auto loaded = project::loadProject(path);
    loaded.project.model.find("fc")->params["out_features"] = 2;  // fewer than the classes
    loaded.project.train["replace_head"] = replace;
    const auto problems =
        resolve::checkTrainable(loaded.project, loaded.baseDir(), *Registries::builtins());
    EXPECT_EQ(formatProblems(problems).find("set fc.out_features to 4") != std::string::npos,
              !replace)
        << formatProblems(problems);
    train::TrainerConfig config;
    config.registries = ::netsmith::Registries::builtins();
    config.project = loaded.project;
    config.baseDir = loaded.baseDir();
    config.runsRoot = dir.file(replace ? "runs-replace" : "runs-keep");
    train::Trainer trainer(config);
    trainer.start();
    trainer.wait();
    const auto result = trainer.result();
    if (!replace) {
      EXPECT_EQ(result.state, run::FinishState::Failed);
      continue;
    }
    ASSERT_EQ(result.state, run::FinishState::Completed) << result.reason;
    const auto ckpt = checkpoint::readCheckpoint(result.runDir + "/checkpoints/last.safetensors");
    for (const auto& [name, t] : ckpt.model) {
      if (name == "fc.weight") {
        EXPECT_EQ(t.size(0), 4);
      }
    }
    const auto recorded = project::parseProject(ckpt.meta["project"].dump(), "snapshot");
    EXPECT_EQ(recorded.project.model.find("fc")->params["out_features"], 4);
  }
}
