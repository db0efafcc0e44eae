// Output folders and files that Netsmith writes where someone else's files may already be: a
// folder is filled only when it is new, empty or an earlier output's, and only that output's
// files are ever removed; atomic rewrites keep the file's permissions; CSV text cells cannot run
// as spreadsheet formulas.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "common/error.h"
#include "common/file_util.h"
#include "common/output_folder.h"
#include "data/csv_table.h"
#include "data_fixtures.h"
#include "test_support.h"

using namespace netsmith;
using testutil::errorOf;
using testutil::TempDir;
namespace fs = std::filesystem;

namespace {

/// Every file under `dir` with its contents.
std::map<std::string, std::string> filesUnder(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out[e.path().string()] = readTextFile(e.path().string());
  return out;
}

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

}  // namespace

TEST(OutputFolder, ADataSetsOwnFolderIsRefusedAndNothingInItChanges) {
  TempDir dir;
  // make-dataset's test split: images and masks named as predictions are named.
  write(dir.path() / "test/images/000000.png", "image");
  write(dir.path() / "test/masks/000000.png", "true mask");
  write(dir.path() / "test/truth/000001.png", "another");
  const auto before = filesUnder(dir.path());
  const std::string e =
      errorOf([&] { OutputFolder(dir.file("test"), "segmentation predictions"); });
  EXPECT_NE(e.find("test: is not empty"), std::string::npos) << e;
  EXPECT_NE(e.find("nothing was changed"), std::string::npos) << e;
  EXPECT_EQ(errorOf([&] { OutputFolder::check(dir.file("test/"), "segmentation predictions"); }),
            e);
  EXPECT_EQ(filesUnder(dir.path()), before);
}

TEST(OutputFolder, AnEarlierOutputIsReplacedAndOnlyItsOwnFilesGo) {
  TempDir dir;
  const std::string out = dir.file("preds");
  {
    OutputFolder f(out, "segmentation predictions");
    f.folder("masks");
    for (const char* name : {"masks/000000.png", "masks/000001.png", "predictions.csv"})
      std::ofstream(f.claim(name)) << "first";
    f.record();
  }
  // Someone adds a file of their own; a second run of fewer samples replaces the first run's.
  std::ofstream(out + "/masks/mine.png") << "mine";
  {
    OutputFolder f(out, "segmentation predictions");
    EXPECT_FALSE(fs::exists(out + "/masks/000001.png"));
    f.folder("masks");
    std::ofstream(f.claim("masks/000000.png")) << "second";
    // A file that no earlier output listed is never replaced.
    const std::string e = errorOf([&] { f.claim("masks/mine.png"); });
    EXPECT_NE(e.find("no earlier segmentation predictions wrote it"), std::string::npos) << e;
    f.record();
  }
  EXPECT_EQ(readTextFile(out + "/masks/mine.png"), "mine");
  EXPECT_EQ(readTextFile(out + "/masks/000000.png"), "second");
  // Another kind of output refuses the folder.
  const std::string e = errorOf([&] { OutputFolder(out, "doctor report"); });
  EXPECT_NE(e.find("holds segmentation predictions, not doctor report"), std::string::npos) << e;
}

TEST(OutputFolder, LinksAndDamagedMarkersNeverLeadOutside) {
  TempDir dir;
  write(dir.path() / "victim/000000.png", "precious");
  const auto before = filesUnder(dir.path() / "victim");
  // The folder itself a link.
  fs::create_directory_symlink(dir.file("victim"), dir.file("link"));
  EXPECT_NE(errorOf([&] { OutputFolder(dir.file("link"), "p"); }).find("symbolic link"),
            std::string::npos);
  // A marked folder whose masks/ was replaced by a link: the listed file is not removed there.
  const std::string out = dir.file("out");
  {
    OutputFolder f(out, "p");
    f.folder("masks");
    std::ofstream(f.claim("masks/000000.png")) << "x";
    f.record();
  }
  fs::remove_all(out + "/masks");
  fs::create_directory_symlink(dir.file("victim"), out + "/masks");
  {
    OutputFolder f(out, "p");
    EXPECT_NE(errorOf([&] { f.folder("masks"); }).find("symbolic link"), std::string::npos);
  }
  // A marker that lists a path outside is refused as a whole.
  std::ofstream(out + "/" + OutputFolder::kMarker)
      << R"({"format": "netsmith-output", "kind": "p", "files": ["../victim/000000.png"]})";
  EXPECT_NE(errorOf([&] { OutputFolder(out, "p"); }).find("not a file inside the folder"),
            std::string::npos);
  std::ofstream(out + "/" + OutputFolder::kMarker) << "{not json";
  EXPECT_NE(errorOf([&] { OutputFolder(out, "p"); }).find("not a marker Netsmith wrote"),
            std::string::npos);
  EXPECT_EQ(filesUnder(dir.path() / "victim"), before);
}

TEST(OutputFolder, AnOutputFileIsCheckedBeforeTheWorkStarts) {
  TempDir dir;
  EXPECT_EQ(errorOf([&] { checkOutputFile(dir.file("p.csv")); }), "(no error)");
  EXPECT_NE(errorOf([&] { checkOutputFile(dir.file("no/such/p.csv")); }).find("does not exist"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { checkOutputFile(dir.path().string()); }).find("is a folder"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { checkOutputFile(""); }).find("needs a name"), std::string::npos);
}

TEST(AtomicWrite, ARewrittenFileKeepsItsPermissions) {
  TempDir dir;
  const std::string file = dir.file("train.csv");
  std::ofstream(file) << "path,label\n";
  ASSERT_EQ(::chmod(file.c_str(), 0600), 0);
  writeFileAtomically(file, "path,label\na.png,1\n");
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(readTextFile(file), "path,label\na.png,1\n");
  // A new file: 0644 less the umask, as before.
  writeFileAtomically(dir.file("new.csv"), "x");
  ASSERT_EQ(::stat(dir.file("new.csv").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0600, 0600u);
}

TEST(CsvText, CellsASpreadsheetWouldRunAreWrittenAsText) {
  EXPECT_EQ(data::csvTextCell("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
  EXPECT_EQ(data::csvTextCell("+1"), "'+1");
  EXPECT_EQ(data::csvTextCell("-cmd"), "'-cmd");
  EXPECT_EQ(data::csvTextCell("@SUM(A1)"), "'@SUM(A1)");
  EXPECT_EQ(data::csvTextCell("images/a.png"), "images/a.png");
  EXPECT_EQ(data::csvTextCell("a,b"), "\"a,b\"");
  for (const std::string text : {"=1+2", "-x", "plain", "'=kept", "@"})
    EXPECT_EQ(data::csvTextValue(data::splitCsvLine(data::csvTextCell(text)).at(0)), text);
}
