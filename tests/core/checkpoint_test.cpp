// Checkpoints: model and optimizer state round trips (training continues exactly), partial
// loads with a report, crash safety under SIGKILL, and clear errors for bad files.
#include "checkpoint/checkpoint.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "common/file_util.h"
#include "data_fixtures.h"
#include "graph/graph_module.h"
#include "test_support.h"
#include "train/optimizer_factory.h"

using namespace netsmith;
using namespace netsmith::checkpoint;

namespace {

graph::ModelGraph smallModel(int classes = 3) {
  auto loaded =
      testutil::parseModel(R"({"input": {"channels": 1, "height": 8, "width": 8}, "nodes": [
      {"id": "input", "op": "Input"},
      {"id": "conv", "op": "Conv2d", "params": {"out_channels": 4, "padding": 1}, "inputs": ["input"]},
      {"id": "bn", "op": "BatchNorm2d", "inputs": ["conv"]},
      {"id": "relu", "op": "ReLU", "inputs": ["bn"]},
      {"id": "flat", "op": "Flatten", "inputs": ["relu"]},
      {"id": "fc", "op": "Linear", "params": {"out_features": )" +
                           std::to_string(classes) + R"(}, "inputs": ["flat"]}]})");
  EXPECT_TRUE(loaded.problems.empty());
  return loaded.project.model;
}

train::OptimizerOptions optimizerOptions(const std::string& type) {
  Problems problems;
  auto o = train::parseTrainOptions(Json{{"optimizer", Json{{"type", type}, {"lr", 0.01}}}},
                                    train::ScheduleRegistry::withBuiltins(), problems);
  EXPECT_TRUE(problems.empty()) << formatProblems(problems);
  return o.optimizer;
}

void trainSteps(graph::GraphModule& net, torch::optim::Optimizer& opt, int from, int count) {
  net->train();
  for (int s = from; s < from + count; ++s) {
    torch::manual_seed(100 + s);  // each step's batch depends only on its number
    const auto x = torch::randn({6, 1, 8, 8});
    const auto y = torch::randint(0, 3, {6}, torch::kLong);
    opt.zero_grad();
    torch::nn::functional::cross_entropy(net->forward(x), y).backward();
    opt.step();
  }
}

}  // namespace

class CheckpointTest : public testutil::SeededTest {};

TEST_F(CheckpointTest, ResumingEveryOptimizerContinuesBitwiseExactly) {
  testutil::TempDir dir;
  for (const std::string type : {"sgd", "adam", "adamw", "rmsprop", "adagrad"}) {
    SCOPED_TRACE(type);
    const auto options = optimizerOptions(type);
    torch::manual_seed(0);
    graph::GraphModule straight(smallModel(), registry);
    auto opt = train::makeOptimizer(options, straight->named_parameters());
    trainSteps(straight, *opt, 0, 5);

    torch::manual_seed(0);
    graph::GraphModule first(smallModel(), registry);
    auto opt1 = train::makeOptimizer(options, first->named_parameters());
    trainSteps(first, *opt1, 0, 3);
    CheckpointData data;
    data.meta = Json{{"step", 3}};
    data.model = moduleState(*first);
    data.optimizer = optimizerState(*opt1, type, *first);
    writeCheckpoint(dir.file(type + ".safetensors"), data);

    torch::manual_seed(42);  // a different initialisation, overwritten by the checkpoint
    graph::GraphModule resumed(smallModel(), registry);
    auto opt2 = train::makeOptimizer(options, resumed->named_parameters());
    const auto back = readCheckpoint(dir.file(type + ".safetensors"));
    EXPECT_EQ(back.meta["step"], 3);
    EXPECT_TRUE(loadModuleState(*resumed, back.model).complete());
    restoreOptimizerState(*opt2, type, *resumed, back.optimizer);
    trainSteps(resumed, *opt2, 3, 2);
    for (const auto& [name, t] : moduleState(*straight)) {
      const auto other = resumed->named_parameters().find(name)
                             ? *resumed->named_parameters().find(name)
                             : *resumed->named_buffers().find(name);
      EXPECT_TRUE(torch::equal(t, other)) << name;
    }
  }
}

TEST_F(CheckpointTest, PartialLoadReportsWhatMatched) {
  graph::GraphModule source(smallModel(3), registry);
  graph::GraphModule target(smallModel(5), registry);
  const auto before = target->named_parameters()["fc.weight"].clone();
  auto state = moduleState(*source);
  state.emplace_back("extra.weight", torch::ones({2}));
  state.erase(std::remove_if(state.begin(), state.end(),
                             [](const auto& p) { return p.first == "bn.running_var"; }),
              state.end());
  const auto report = loadModuleState(*target, state);
  EXPECT_TRUE(torch::equal(target->named_parameters()["conv.weight"],
                           source->named_parameters()["conv.weight"]));
  EXPECT_TRUE(torch::equal(target->named_parameters()["fc.weight"], before))
      << "mismatched shapes are left alone";
  EXPECT_EQ(report.unexpected, (std::vector<std::string>{"extra.weight"}));
  EXPECT_EQ(report.missing, (std::vector<std::string>{"bn.running_var"}));
  ASSERT_EQ(report.shapeMismatch.size(), 2u);
  EXPECT_EQ(report.shapeMismatch[0], "fc.weight: file 3x256, model 5x256");
  EXPECT_NE(report.summary().find("shape mismatch 2 (fc.weight: file 3x256, model 5x256, fc.bias"),
            std::string::npos)
      << report.summary();
  EXPECT_FALSE(report.complete());
}

TEST_F(CheckpointTest, SurvivesSigkillWhileWriting) {
  testutil::TempDir dir;
  const auto path = dir.file("last.safetensors");
  graph::GraphModule net(smallModel(), registry);
  CheckpointData data;
  data.model = moduleState(*net);
  data.model.emplace_back("padding", torch::zeros({256, 1024}));  // 1 MiB: writes take a while
  data.meta = Json{{"step", 0}};
  writeCheckpoint(path, data);
  for (int round = 0; round < 3; ++round) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      for (int i = 1;; ++i) {
        data.meta["step"] = i;
        writeCheckpoint(path, data);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(150 + 70 * round));
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    const auto back = readCheckpoint(path);  // must load, whatever moment the kill hit
    EXPECT_EQ(back.model.size(), data.model.size());
    EXPECT_TRUE(torch::equal(back.model[0].second, data.model[0].second));
  }
}

TEST_F(CheckpointTest, BadFilesGiveClearErrors) {
  testutil::TempDir dir;
  writeSafetensors(dir.file("plain.safetensors"), {{"w", torch::ones({2})}});
  try {
    readCheckpoint(dir.file("plain.safetensors"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a Netsmith checkpoint"), std::string::npos)
        << e.what();
  }
  graph::GraphModule net(smallModel(), registry);
  CheckpointData data;
  data.model = moduleState(*net);
  writeCheckpoint(dir.file("c.safetensors"), data);
  const auto bytes = readTextFile(dir.file("c.safetensors"));
  writeFileAtomically(dir.file("cut.safetensors"), bytes.substr(0, bytes.size() / 2));
  EXPECT_THROW(readCheckpoint(dir.file("cut.safetensors")), Error);
  writeFileAtomically(dir.file("junk.safetensors"), std::string(100, 'z'));
  EXPECT_THROW(readCheckpoint(dir.file("junk.safetensors")), Error);
  EXPECT_THROW(readCheckpoint(dir.file("missing.safetensors")), Error);
}
