// Starting points: a blank project (its Input only) and a project made from an image folder,
// whose small CNN is sized to the folder's images and classes and validates as it is.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "data_fixtures.h"
#include "graph/graph_analysis.h"
#include "graph/graph_module.h"
#include "import/project_starter.h"
#include "test_support.h"

using namespace netsmith;
using netsmith::testutil::TempDir;

TEST(ProjectStarter, FromAnImageFolderSizesTheCnnToItsImagesAndClasses) {
  TempDir dir;
  // 3 classes of colour images 30 high, 40 wide.
  testutil::writeImageFolder(dir.path() / "pets", {"cat", "dog", "fox"}, 6, 30, 40, 3);
  const auto p = import::projectFromImageFolder((dir.path() / "pets").string(), "pets");
  EXPECT_EQ(p.model.input.channels, 3);
  EXPECT_EQ(p.model.input.height, 30);
  EXPECT_EQ(p.model.input.width, 40);
  EXPECT_EQ(p.data["classes"], (Json{"cat", "dog", "fox"}));
  const auto registry = ops::OpRegistry::withBuiltins();
  const auto a = graph::analyseGraph(p.model, registry);
  ASSERT_TRUE(a.ok()) << formatProblems(a.problems);
  EXPECT_EQ(a.outputShape, (Shape{3}));
  // Saved and read back, the whole project (data included) has no problem.
  const std::string path = dir.file("pets.netsmith.json");
  project::saveProject(p, path);
  const auto loaded = project::loadProject(path);
  EXPECT_TRUE(loaded.problems.empty()) << formatProblems(loaded.problems);
  EXPECT_TRUE(project::validateProject(loaded, registry).empty())
      << formatProblems(project::validateProject(loaded, registry));
  graph::GraphModule net(loaded.project.model, registry);
  EXPECT_EQ(net->forward(torch::zeros({2, 3, 30, 40})).sizes(), (std::vector<std::int64_t>{2, 3}));

  // Large grey images: the input keeps their proportions, at most 64 pixels a side.
  testutil::writeImageFolder(dir.path() / "big", {"a", "b"}, 2, 200, 100, 1);
  const auto big = import::projectFromImageFolder((dir.path() / "big").string(), "big");
  EXPECT_EQ(big.model.input.channels, 1);
  EXPECT_EQ(big.model.input.height, 64);
  EXPECT_EQ(big.model.input.width, 32);
}

TEST(ProjectStarter, RefusesAFolderWithoutClassesAndMakesABlankProject) {
  TempDir dir;
  testutil::writeImageFolder(dir.path() / "one", {"only"}, 3, 8, 8, 1);
  try {
    import::projectFromImageFolder((dir.path() / "one").string(), "x");
    ADD_FAILURE() << "a single class was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("at least 2 classes"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("one"), std::string::npos) << e.what();
  }
  graph::InputSpec input;
  const auto blank = import::blankProject("empty", input, Json::object(), Json::object());
  ASSERT_EQ(blank.model.nodes.size(), 1u);
  EXPECT_EQ(blank.model.nodes[0].op, "Input");
}
