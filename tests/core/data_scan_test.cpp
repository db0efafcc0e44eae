// The data scan behind the Data page and `data-stats` (data/data_scan.h): counts against the
// files the test wrote, the project's on_error obeyed, samples per class, cancelling.
#include <gtest/gtest.h>

#include <fstream>

#include "common/error.h"
#include "data/data_scan.h"
#include "data_fixtures.h"
#include "project/project.h"
#include "registries/registries.h"

using namespace netsmith;
using netsmith::testutil::TempDir;

namespace {

project::Project folderProject(const TempDir& dir, const std::string& onError) {
  project::Project p;
  p.name = "scan";
  p.model.input = {1, 8, 8};
  p.data = Json{{"train", Json{{"format", "image_folder"}, {"root", dir.file("imgs")}}},
                {"normalize", "auto"},
                {"on_error", onError}};
  return p;
}

}  // namespace

TEST(DataScan, CountsWhatTrainingWouldReadUnderTheProjectsOnError) {
  TempDir dir;
  testutil::writeImageFolder(dir.path() / "imgs", {"a", "b", "c"}, 5, 8, 8, 1);
  // One file of class b that is not an image.
  std::ofstream(dir.path() / "imgs" / "b" / "broken.png") << "not a png";

  data::DataScanOptions options;
  options.samplesPerClass = 2;
  options.imageSizes = data::DataScanOptions::Sizes::OfFiles;
  std::int64_t lastDone = -1, lastTotal = -1;
  options.progress = [&](const std::string& phase, std::int64_t done, std::int64_t total) {
    if (phase == "reading images") {
      lastDone = done;
      lastTotal = total;
    }
    return true;
  };
  const auto s = data::scanProjectData(folderProject(dir, "skip"), dir.path().string(),
                                       Registries::builtins()->transforms, options);
  ASSERT_FALSE(s.cancelled);
  EXPECT_EQ(s.classes, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(s.train, 15);  // 16 files, the broken one left out
  EXPECT_EQ(s.trainCounts, (std::vector<std::int64_t>{5, 5, 5}));
  ASSERT_EQ(s.skipped.size(), 1u);
  EXPECT_NE(s.skipped[0].item.find("broken.png"), std::string::npos) << s.skipped[0].item;
  EXPECT_EQ(lastDone, 16);
  EXPECT_EQ(lastTotal, 16);
  EXPECT_EQ(s.normalizationMode, "auto");
  ASSERT_EQ(s.mean.size(), 1u);
  EXPECT_EQ(s.normalizationMean, s.mean);  // auto: computed over the same training split
  ASSERT_TRUE(s.imageSizes.has_value());
  EXPECT_EQ(s.imageSizes->begin()->second, 15);
  EXPECT_EQ(s.samples.size(), 6u);
  EXPECT_EQ(s.sampleLabels, (std::vector<std::int64_t>{0, 0, 1, 1, 2, 2}));

  // on_error "fail": the scan stops at the broken file, by name (as training would).
  try {
    data::scanProjectData(folderProject(dir, "fail"), dir.path().string(),
                          Registries::builtins()->transforms, {});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("broken.png"), std::string::npos) << e.what();
  }

  // Cancelled from the progress callback: said, not an error.
  options.progress = [](const std::string& phase, std::int64_t, std::int64_t) {
    return phase != "reading images";
  };
  EXPECT_TRUE(data::scanProjectData(folderProject(dir, "skip"), dir.path().string(),
                                    Registries::builtins()->transforms, options)
                  .cancelled);
}
