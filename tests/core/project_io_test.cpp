#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "common/file_util.h"
#include "test_support.h"

using namespace netsmith;
namespace fs = std::filesystem;

namespace {

std::string minimal(const std::string& header) {
  return "{" + header +
         R"(, "model": {"input": {"channels": 1, "height": 2, "width": 2}, "nodes": [{"id": "input", "op": "Input"}]}})";
}

std::string errorOf(const std::string& text) {
  try {
    project::parseProject(text, "p.netsmith.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

class TempDir {
 public:
  TempDir()
      : m_path(fs::temp_directory_path() / ("netsmith-test-" + std::to_string(::getpid()) + "-" +
                                            std::to_string(counter()++))) {
    fs::create_directories(m_path);
  }
  ~TempDir() { fs::remove_all(m_path); }
  std::string file(const std::string& name) const { return (m_path / name).string(); }
  const fs::path& path() const { return m_path; }

 private:
  static int& counter() {
    static int c = 0;
    return c;
  }
  fs::path m_path;
};

}  // namespace

TEST(ProjectIo, MalformedJsonReportsLineAndColumn) {
  const std::string text =
      "{\n  \"format\": \"netsmith-project\",\n  \"version\": 1\n  \"model\": {}\n}";
  const auto err = errorOf(text);
  EXPECT_EQ(err.rfind("p.netsmith.json:4:3: JSON syntax error: ", 0), 0u) << err;
  EXPECT_EQ(errorOf("").rfind("p.netsmith.json:1:1: JSON syntax error", 0), 0u) << errorOf("");
}

TEST(ProjectIo, NotAProject) {
  EXPECT_NE(errorOf("[1, 2]").find("not a Netsmith project: the file holds a JSON array"),
            std::string::npos);
  EXPECT_NE(
      errorOf(R"({"format": "other"})").find(R"("format" must be "netsmith-project", got "other")"),
      std::string::npos);
  EXPECT_NE(
      errorOf(R"({"format": "netsmith-project"})").find(R"("version" must be a whole number)"),
      std::string::npos);
  EXPECT_NE(errorOf(minimal(R"("format": "netsmith-project", "version": 9)"))
                .find("written by a newer Netsmith (format version 9"),
            std::string::npos);
}

TEST(ProjectIo, WrongSectionTypesAreProblems) {
  const auto loaded = project::parseProject(
      minimal(
          R"("format": "netsmith-project", "version": 1, "name": 5, "train": [], "augment": {})"),
      "p");
  const auto text = formatProblems(loaded.problems);
  EXPECT_NE(text.find("name: must be a string"), std::string::npos) << text;
  EXPECT_NE(text.find("train: must be an object"), std::string::npos) << text;
  EXPECT_NE(text.find("augment: must be a list"), std::string::npos) << text;
}

TEST(ProjectIo, RoundTripIsLossless) {
  const std::string text = R"({
  "format": "netsmith-project",
  "version": 1,
  "name": "rt",
  "description": "round trip",
  "model": {
    "input": {"channels": 3, "height": 32, "width": 32},
    "nodes": [
      {"id": "input", "op": "Input", "params": {}, "inputs": [], "pos": [10.5, -3]},
      {"id": "c", "op": "Conv2d", "params": {"out_channels": 8, "kernel_size": [3, 5], "padding": "same"},
       "inputs": ["input"], "pos": [0, 80], "init": "kaiming_normal", "frozen": true}
    ],
    "output": "c"
  },
  "data": {"source": "idx", "zeta": [1, 2.5, {"deep": null}], "alpha": "first key after zeta"},
  "augment": [{"op": "HorizontalFlip", "p": 0.5}],
  "train": {"epochs": 3, "optimizer": {"type": "sgd", "lr": 0.1}},
  "x-custom": {"kept": true}
})";
  const auto first = project::parseProject(text, "rt");
  ASSERT_TRUE(first.problems.empty()) << formatProblems(first.problems);
  const auto saved = project::serialiseProject(first.project);
  const auto second = project::parseProject(saved, "rt2");
  EXPECT_TRUE(second.project.model == first.project.model);
  EXPECT_EQ(project::serialiseProject(second.project), saved);
  // Saved JSON equals the original JSON value, key order included.
  EXPECT_EQ(Json::parse(saved), Json::parse(text));
  EXPECT_EQ(Json::parse(saved).dump(), Json::parse(text).dump());
}

TEST(ProjectIo, SaveIsAtomicAndLeavesNoTemporaryFiles) {
  TempDir dir;
  const auto path = dir.file("m.netsmith.json");
  auto loaded =
      project::loadProject(testutil::sourcePath("resources/examples/fashion_mnist.netsmith.json"));
  project::saveProject(loaded.project, path);
  const auto reloaded = project::loadProject(path);
  EXPECT_TRUE(reloaded.project.model == loaded.project.model);
  EXPECT_EQ(reloaded.project.name, "fashion_mnist");
  int files = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir.path()))
    ++files;
  EXPECT_EQ(files, 1);
}

TEST(ProjectIo, FailedSaveKeepsTheOldFile) {
  TempDir dir;
  const auto path = dir.file("keep.netsmith.json");
  writeFileAtomically(path, "old contents\n");
  // A folder in place of the target makes the final rename fail.
  const auto blocked = dir.file("blocked.netsmith.json");
  fs::create_directories(fs::path(blocked) / "child");
  EXPECT_THROW(writeFileAtomically(blocked, "new"), Error);
  EXPECT_EQ(readTextFile(path), "old contents\n");
  // Writing into a missing folder fails with the path in the message.
  try {
    writeFileAtomically(dir.file("no/such/dir/p.json"), "x");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no/such/dir/p.json: cannot write"), std::string::npos)
        << e.what();
  }
  int leftovers = 0;
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    if (entry.path().filename().string().find(".tmp-") != std::string::npos) ++leftovers;
  }
  EXPECT_EQ(leftovers, 0);
}

TEST(ProjectIo, MissingFileNamesThePath) {
  try {
    project::loadProject("/nonexistent/x.netsmith.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("/nonexistent/x.netsmith.json: cannot open", 0), 0u)
        << e.what();
  }
}

TEST(ProjectIo, NameDefaultsToTheFileStem) {
  TempDir dir;
  const auto path = dir.file("my_model.netsmith.json");
  std::ofstream(path) << minimal(R"("format": "netsmith-project", "version": 1)");
  EXPECT_EQ(project::loadProject(path).project.name, "my_model");
}
