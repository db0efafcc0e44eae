#include <filesystem>

#include "graph/graph_module.h"
#include "test_support.h"

using namespace netsmith;

class TemplatesTest : public testutil::SeededTest {};

TEST_F(TemplatesTest, EveryTemplateValidatesBuildsAndRuns) {
  int count = 0;
  for (const auto& dir : {"resources/templates", "resources/examples"}) {
    for (const auto& entry : std::filesystem::directory_iterator(testutil::sourcePath(dir))) {
      const auto path = entry.path().string();
      // Only the project files (a studio run of the example leaves its runs/ folder beside it).
      if (path.size() < 14 || path.compare(path.size() - 14, 14, ".netsmith.json") != 0) continue;
      SCOPED_TRACE(path);
      const auto loaded = project::loadProject(path);
      const auto problems = project::validateProject(loaded, registry);
      ASSERT_TRUE(problems.empty()) << formatProblems(problems);
      graph::GraphModule net(loaded.project.model, registry);
      const auto& in = loaded.project.model.input;
      net->eval();
      const auto out = net->forward(torch::randn({2, in.channels, in.height, in.width}));
      // A score per class of data.classes (10 where the classes come from the data: the
      // templates' default head), a regression one number per target of data.targets, a
      // segmentation a score per class for every input pixel, a detector its head's map.
      const auto& section = loaded.project.data;
      const auto classes =
          section.contains("classes") ? std::int64_t(section["classes"].size()) : std::int64_t(10);
      if (loaded.project.task == "segmentation") {
        ASSERT_TRUE(section.contains("classes"));
        EXPECT_EQ(out.sizes().vec(), (std::vector<std::int64_t>{2, classes, in.height, in.width}));
      } else if (loaded.project.task == "detection") {
        // Per location of the head's map (stride 4 or 8): class scores, 4 distances,
        // centre-ness.
        ASSERT_EQ(out.dim(), 4);
        EXPECT_EQ(out.size(1), classes + 5);
        const auto stride = in.height / out.size(2);
        EXPECT_TRUE(stride == 4 || stride == 8) << stride;
        EXPECT_EQ(out.size(2) * stride, in.height);
        EXPECT_EQ(out.size(3) * stride, in.width);
      } else if (loaded.project.task == "regression") {
        ASSERT_TRUE(section.contains("targets"));
        EXPECT_EQ(out.sizes().vec(),
                  (std::vector<std::int64_t>{2, std::int64_t(section["targets"].size())}));
      } else {
        EXPECT_EQ(out.sizes().vec(), (std::vector<std::int64_t>{2, classes}));
      }
      std::int64_t numel = 0;
      for (const auto& p : net->parameters())
        numel += p.numel();
      EXPECT_EQ(numel, net->analysis().totalParams);
      // Templates round-trip byte for byte.
      EXPECT_EQ(project::serialiseProject(
                    project::parseProject(project::serialiseProject(loaded.project), "x").project),
                project::serialiseProject(loaded.project));
      ++count;
    }
  }
  EXPECT_GE(count, 5);
}

TEST_F(TemplatesTest, DefaultProjectIsTheFashionMnistVggAndTheSmallCnnAnotherTemplate) {
  const auto opsOf = [](const std::string& path) {
    const auto loaded = project::loadProject(testutil::sourcePath(path));
    EXPECT_EQ(loaded.project.model.input.shape(), (Shape{1, 28, 28}));
    EXPECT_EQ(loaded.project.data["classes"].size(), 10u);
    std::vector<std::string> ops;
    for (const auto& n : loaded.project.model.nodes)
      ops.push_back(n.op);
    return ops;
  };
  const std::vector<std::string> stage = {"Conv2d",      "BatchNorm2d", "ReLU",     "Conv2d",
                                          "BatchNorm2d", "ReLU",        "MaxPool2d"};
  std::vector<std::string> expected = {"Input"};
  expected.insert(expected.end(), stage.begin(), stage.end());
  expected.insert(expected.end(), stage.begin(), stage.end());
  for (const char* op : {"Flatten", "Dropout", "Linear", "ReLU", "Dropout", "Linear"})
    expected.push_back(op);
  EXPECT_EQ(opsOf("resources/examples/fashion_mnist.netsmith.json"), expected);
  const std::vector<std::string> small = {
      "Input", "Conv2d",    "BatchNorm2d", "ReLU",   "MaxPool2d", "Conv2d",  "BatchNorm2d",
      "ReLU",  "MaxPool2d", "Flatten",     "Linear", "ReLU",      "Dropout", "Linear"};
  EXPECT_EQ(opsOf("resources/templates/fashion_mnist_cnn.netsmith.json"), small);
}

// The torchvision-layout templates (tools/import_templates.sh) against torchvision's own
// figures: its parameter count with num_classes=10 (sum of p.numel() in torchvision 0.14), and
// the published multiply-accumulates at 224x224 (ResNet-18 1.82 G, MobileNetV2 0.30 G,
// EfficientNet-B0 0.39 G; the 10-class head changes them by under 0.1%).
TEST_F(TemplatesTest, TorchvisionLayoutsHaveTorchvisionsCounts) {
  struct Expected {
    const char* name;
    std::int64_t params;
    double gmacs;
  };
  for (const auto& e :
       {Expected{"resnet18", 11181642, 1.82}, Expected{"mobilenet_v2", 2236682, 0.30},
        Expected{"efficientnet_b0", 4020358, 0.39}}) {
    for (const std::string suffix : {"", "_32"}) {
      SCOPED_TRACE(std::string(e.name) + suffix);
      const auto loaded = project::loadProject(testutil::sourcePath(
          "resources/templates/" + std::string(e.name) + suffix + ".netsmith.json"));
      const auto analysis = graph::analyseGraph(loaded.project.model, registry);
      ASSERT_TRUE(analysis.ok()) << formatProblems(analysis.problems);
      EXPECT_EQ(analysis.totalParams, e.params);
      if (suffix.empty()) {
        EXPECT_EQ(loaded.project.model.input, (graph::InputSpec{3, 224, 224}));
        EXPECT_NEAR(double(analysis.totalMacs) / 1e9, e.gmacs, 0.02 * e.gmacs + 0.005);
      } else {
        EXPECT_EQ(loaded.project.model.input, (graph::InputSpec{3, 32, 32}));
      }
    }
  }
}
