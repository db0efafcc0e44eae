// Starting points: a blank project (its Input only), and a project made from a user's data in
// each layout people bring: class folders, CSV manifests, images with masks, YOLO, COCO and VOC
// sets, whole or split into train/ and test/. The proposal's counts are checked against the
// files the test wrote, its model against a forward pass, and the whole project against the
// program's own validation.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <fstream>

#include "data_fixtures.h"
#include "graph/graph_analysis.h"
#include "graph/graph_module.h"
#include "import/project_starter.h"
#include "registries/registries.h"
#include "task/task_registry.h"
#include "test_support.h"

using namespace netsmith;
using netsmith::testutil::TempDir;
namespace fs = std::filesystem;

namespace {

struct Starter {
  RegistriesPtr registries = Registries::builtins();
  import::StarterContext context() const {import::StarterContext c;
  c.registries = registries;
  c.templatesDir = NETSMITH_SOURCE_DIR "/resources/templates";
  return c;
} import::DataProposal propose(const fs::path& data, const import::StarterChoices& choices = {}) {
  return import::proposeProject(data.string(), import::defaultProjectPath(data.string()), choices,
                                context());
}
};  // namespace

/// dir/images/NAME.png (w x h, grey) with boxes in YOLO, COCO and VOC form and a mask each:
/// image i holds one object of class i % classes in its top-left quarter.
void writeBoxSet(const fs::path& dir, int images, int classes, int w, int h) {
  fs::create_directories(dir / "images");
  fs::create_directories(dir / "labels");
  fs::create_directories(dir / "masks");
  fs::create_directories(dir / "annotations");
  nlohmann::json coco{{"images", nlohmann::json::array()},
                      {"annotations", nlohmann::json::array()},
                      {"categories", nlohmann::json::array()}};
  const char* names[] = {"cat", "dog", "fox", "owl"};
  for (int c = 0; c < classes; ++c)
    coco["categories"].push_back({{"id", c + 1}, {"name", names[c]}});
  for (int i = 0; i < images; ++i) {
    const std::string stem = "im" + std::to_string(i);
    const int cls = i % classes;
    cv::imwrite((dir / "images" / (stem + ".png")).string(), testutil::patternImage(h, w, 1, i));
    std::ofstream(dir / "labels" / (stem + ".txt")) << cls << " 0.25 0.25 0.5 0.5\n";
    cv::Mat mask(h, w, CV_8UC1, cv::Scalar(0));
    mask(cv::Rect(0, 0, w / 2, h / 2)).setTo(cls + 1);
    cv::imwrite((dir / "masks" / (stem + ".png")).string(), mask);
    coco["images"].push_back(
        {{"id", i + 1}, {"file_name", stem + ".png"}, {"width", w}, {"height", h}});
    coco["annotations"].push_back({{"id", i + 1},
                                   {"image_id", i + 1},
                                   {"category_id", cls + 1},
                                   {"bbox", {0, 0, w / 2, h / 2}},
                                   {"area", w * h / 4},
                                   {"iscrowd", 0}});
    std::ofstream(dir / "annotations" / (stem + ".xml"))
        << "<annotation><filename>" << stem << ".png</filename><size><width>" << w
        << "</width><height>" << h << "</height><depth>1</depth></size><object><name>" << names[cls]
        << "</name><bndbox><xmin>1</xmin><ymin>1</ymin><xmax>" << w / 2 << "</xmax><ymax>" << h / 2
        << "</ymax></bndbox></object></annotation>";
  }
  std::ofstream(dir / "annotations.json") << coco.dump();
}

std::string problemsOf(const import::DataProposal& p) {
  return formatProblems(p.problems);
}

}  // namespace

TEST(ProjectStarter, ClassFoldersGiveAClassifierSizedToTheImagesAndClasses) {
  TempDir dir;
  // 3 classes of colour images 30 high, 40 wide, 6 each, and one file that is no image.
  testutil::writeImageFolder(dir.path() / "pets", {"cat", "dog", "fox"}, 6, 30, 40, 3);
  std::ofstream(dir.path() / "pets" / "dog" / "broken.png") << "not a png";
  Starter s;
  const auto p = s.propose(dir.path() / "pets");
  EXPECT_EQ(p.found.format, "image_folder");
  EXPECT_EQ(p.task, "classification");
  EXPECT_EQ(p.templateName, "small_resnet");
  EXPECT_EQ(p.scan.classes, (std::vector<std::string>{"cat", "dog", "fox"}));
  EXPECT_EQ(p.scan.train + p.scan.validation, 18);  // the 18 images written
  ASSERT_EQ(p.scan.skipped.size(), 1u);
  EXPECT_NE(p.scan.skipped[0].item.find("broken.png"), std::string::npos);
  EXPECT_EQ(p.input.channels, 3);
  EXPECT_EQ(p.input.height, 30);
  EXPECT_EQ(p.input.width, 40);
  EXPECT_EQ(p.outputs, 3);
  EXPECT_EQ(p.project.data["validation"]["fraction"], 0.2);  // under 2,000 images
  EXPECT_TRUE(p.problems.empty()) << problemsOf(p);
  // Saved beside the data and read back: the paths are relative, the project valid.
  const std::string path = import::defaultProjectPath((dir.path() / "pets").string());
  EXPECT_EQ(path, dir.file("pets.netsmith.json"));
  project::saveProject(p.project, path);
  const auto loaded = project::loadProject(path);
  EXPECT_EQ(loaded.project.data["train"]["root"], "pets");
  EXPECT_TRUE(project::validateProject(loaded, s.registries->ops).empty())
      << formatProblems(project::validateProject(loaded, s.registries->ops));
  graph::GraphModule net(loaded.project.model, s.registries->ops);
  EXPECT_EQ(net->forward(torch::zeros({2, 3, 30, 40})).sizes(), (std::vector<std::int64_t>{2, 3}));
  const std::string text = import::proposalText(p);
  EXPECT_NE(text.find("18 training images"), std::string::npos) << text;
  EXPECT_NE(text.find("1 unreadable or unusable file"), std::string::npos) << text;
  EXPECT_NE(text.find("input: 3 x 30 x 40"), std::string::npos) << text;
  // 15 images to train: the template's batch of 128 would be one optimizer step an epoch; the
  // batch shrinks (in halves) to the least, 8, and the proposal says why.
  EXPECT_EQ(p.scan.train, 15);
  EXPECT_EQ(p.batchSize, 8);
  EXPECT_EQ(loaded.project.train["batch_size"], 8);
  EXPECT_NE(text.find("batch size: 8 (the template's 128 would give 1 step an epoch on 15 images "
                      "to train)"),
            std::string::npos)
      << text;

  // Large grey images: the input keeps their proportions, at most 64 pixels a side; choices
  // given are taken as they are.
  testutil::writeImageFolder(dir.path() / "big", {"a", "b"}, 2, 200, 100, 1);
  const auto big = s.propose(dir.path() / "big");
  EXPECT_EQ(big.input.channels, 1);
  EXPECT_EQ(big.input.height, 64);
  EXPECT_EQ(big.input.width, 32);
  import::StarterChoices choices;
  choices.channels = 3;
  choices.height = choices.width = 24;
  choices.validationFraction = 0.25;
  choices.explicitNormalization = true;
  const auto chosen = s.propose(dir.path() / "big", choices);
  EXPECT_EQ(chosen.input, (graph::InputSpec{3, 24, 24}));
  EXPECT_EQ(chosen.project.data["validation"]["fraction"], 0.25);
  ASSERT_TRUE(chosen.project.data["normalize"].is_object());
  EXPECT_EQ(chosen.project.data["normalize"]["mean"].size(), 3u);
}

TEST(ProjectStarter, ABoxSetIsASegmentationOrADetectionProjectAsTheTaskSays) {
  TempDir dir;
  writeBoxSet(dir.path() / "set" / "train", 12, 3, 48, 32);
  writeBoxSet(dir.path() / "set" / "test", 4, 3, 48, 32);
  Starter s;
  // Masks first: segmentation, the classes the mask values reach (background + 3).
  const auto seg = s.propose(dir.path() / "set");
  EXPECT_EQ(seg.found.format, "mask_folders");
  EXPECT_EQ(seg.task, "segmentation");
  EXPECT_EQ(seg.found.alternatives, (std::vector<std::string>{"yolo", "coco", "voc"}));
  EXPECT_EQ(seg.found.classes,
            (std::vector<std::string>{"background", "class 1", "class 2", "class 3"}));
  EXPECT_EQ(seg.outputs, 4);
  EXPECT_EQ(seg.scan.test, 4);
  EXPECT_EQ(seg.project.data["test"]["format"], "mask_folders");
  EXPECT_EQ(seg.input.height % 8, 0);  // the U-Net's pooling needs whole steps
  EXPECT_TRUE(seg.problems.empty()) << problemsOf(seg);

  // Detection: YOLO without names, so the class ids are named; the head 3 + 5 wide.
  import::StarterChoices detection;
  detection.task = "detection";
  const auto det = s.propose(dir.path() / "set", detection);
  EXPECT_EQ(det.found.format, "yolo");
  EXPECT_EQ(det.found.classes, (std::vector<std::string>{"class 0", "class 1", "class 2"}));
  EXPECT_EQ(det.outputs, 8);
  EXPECT_EQ(det.scan.train + det.scan.validation, 12);
  EXPECT_TRUE(det.problems.empty()) << problemsOf(det);

  // The COCO file on its own: its categories name the classes.
  const auto coco = s.propose(dir.path() / "set" / "train" / "annotations.json");
  EXPECT_EQ(coco.found.format, "coco");
  EXPECT_EQ(coco.scan.classes, (std::vector<std::string>{"cat", "dog", "fox"}));
  EXPECT_TRUE(coco.problems.empty()) << problemsOf(coco);

  // VOC alone (the others removed): the object names, in alphabetical order.
  for (const char* gone : {"masks", "labels"})
    fs::remove_all(dir.path() / "set" / "train" / gone);
  fs::remove(dir.path() / "set" / "train" / "annotations.json");
  const auto voc = s.propose(dir.path() / "set" / "train");
  EXPECT_EQ(voc.found.format, "voc");
  EXPECT_EQ(voc.found.classes, (std::vector<std::string>{"cat", "dog", "fox"}));
  EXPECT_TRUE(voc.problems.empty()) << problemsOf(voc);
}

TEST(ProjectStarter, CsvManifestsByTheirHeaders) {
  TempDir dir;
  testutil::writeImageFolder(dir.path() / "img", {"x"}, 8, 20, 20, 1);
  {
    std::ofstream reg(dir.path() / "train.csv");
    reg << "path,angle,scale\n";
    for (int i = 0; i < 8; ++i)
      reg << "img/x/img_" << i << ".png," << i * 3 << "," << 0.5 + i * 0.1 << "\n";
    std::ofstream multi(dir.path() / "tags.csv");
    multi << "path,labels\n";
    for (int i = 0; i < 8; ++i)
      multi << "img/x/img_" << i << ".png," << (i % 2 ? "red;round" : "blue") << "\n";
  }
  Starter s;
  const auto reg = s.propose(dir.path());  // the folder's train.csv
  EXPECT_EQ(reg.found.format, "regression_csv");
  EXPECT_EQ(reg.task, "regression");
  EXPECT_EQ(reg.scan.targetNames, (std::vector<std::string>{"angle", "scale"}));
  EXPECT_EQ(reg.outputs, 2);
  EXPECT_TRUE(reg.problems.empty()) << problemsOf(reg);
  EXPECT_EQ(import::defaultProjectPath(dir.file("train.csv")),
            (dir.path() / (dir.path().filename().string() + ".netsmith.json")).string());
  const auto multi = s.propose(dir.path() / "tags.csv");
  EXPECT_EQ(multi.task, "multilabel");
  EXPECT_EQ(multi.scan.classes, (std::vector<std::string>{"blue", "red", "round"}));
  EXPECT_EQ(multi.outputs, 3);
  // A task that the data cannot feed is refused by name.
  import::StarterChoices wrong;
  wrong.task = "segmentation";
  const auto error = testutil::errorOf([&] { s.propose(dir.path() / "tags.csv", wrong); });
  EXPECT_NE(error.find("segmentation"), std::string::npos) << error;
}

TEST(ProjectStarter, RefusesWhatIsNoDataAndMakesABlankProject) {
  TempDir dir;
  Starter s;
  testutil::writeImageFolder(dir.path() / "one", {"only"}, 3, 8, 8, 1);
  std::string error = testutil::errorOf([&] { s.propose(dir.path() / "one"); });
  EXPECT_NE(error.find("one"), std::string::npos) << error;
  EXPECT_NE(error.find("one sub-folder of images per class"), std::string::npos) << error;
  std::ofstream(dir.path() / "notes.txt") << "hello";
  error = testutil::errorOf([&] { s.propose(dir.path() / "notes.txt"); });
  EXPECT_NE(error.find("notes.txt"), std::string::npos) << error;
  std::ofstream(dir.path() / "bad.csv") << "file,\x1b[31mclass\n";
  error = testutil::errorOf([&] { s.propose(dir.path() / "bad.csv"); });
  EXPECT_NE(error.find("bad.csv line 1"), std::string::npos) << error;
  EXPECT_EQ(error.find('\x1b'), std::string::npos) << error;
  import::StarterChoices unknown;
  unknown.templateName = "no_such_template";
  testutil::writeImageFolder(dir.path() / "two", {"a", "b"}, 2, 8, 8, 1);
  error = testutil::errorOf([&] { s.propose(dir.path() / "two", unknown); });
  EXPECT_NE(error.find("small_resnet"), std::string::npos) << error;  // the list offered

  graph::InputSpec input;
  const auto blank = import::blankProject("empty", input, Json::object(), Json::object());
  ASSERT_EQ(blank.model.nodes.size(), 1u);
  EXPECT_EQ(blank.model.nodes[0].op, "Input");
}
