#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/line_tail.h"

namespace {

namespace fs = std::filesystem;

struct TailFile {
  fs::path path;
  TailFile() {
    path = fs::temp_directory_path() /
           ("netsmith_line_tail_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove(path);
  }
  ~TailFile() { fs::remove(path); }
  void append(const std::string& text) const {
    std::ofstream out(path, std::ios::binary | std::ios::app);
    out << text;
  }
};

using Lines = std::vector<std::string>;

TEST(LineTail, ReturnsEachWholeLineOnceAndKeepsAPartOfALineForLater) {
  TailFile f;
  netsmith::LineTail tail(f.path.string());
  EXPECT_EQ(tail.readNew(), Lines{});  // no file yet
  f.append("one\ntwo\nthr");
  EXPECT_EQ(tail.readNew(), (Lines{"one", "two"}));
  EXPECT_EQ(tail.readNew(), Lines{});
  f.append("ee\n\nfour\n");
  EXPECT_EQ(tail.readNew(), (Lines{"three", "", "four"}));
  // What it read equals the file, byte for byte.
  EXPECT_EQ(tail.offset(), fs::file_size(f.path));
  EXPECT_FALSE(tail.restarted());
}

TEST(LineTail, SkipsOverLongLinesWholeAndReadsInBoundedSteps) {
  TailFile f;
  netsmith::LineTail tail(f.path.string(), /*maxLine=*/8, /*maxBytesPerRead=*/5);
  f.append("short\n" + std::string(30, 'x') + "\nok\n");
  Lines all;
  for (int i = 0; i < 20; ++i)
    for (auto& line : tail.readNew())
      all.push_back(line);
  EXPECT_EQ(all, (Lines{"short", "ok"}));
  EXPECT_EQ(tail.offset(), 6u + 31u + 3u);
}

TEST(LineTail, AFileThatGotShorterIsReadAgainFromItsStart) {
  TailFile f;
  netsmith::LineTail tail(f.path.string());
  f.append("a long first line\nsecond\n");
  EXPECT_EQ(tail.readNew().size(), 2u);
  fs::remove(f.path);
  f.append("new\n");
  EXPECT_EQ(tail.readNew(), Lines{"new"});
  EXPECT_TRUE(tail.restarted());
}

TEST(LineTail, AFifoIsNotOpened) {
  TailFile f;
  ASSERT_EQ(::mkfifo(f.path.c_str(), 0600), 0);
  netsmith::LineTail tail(f.path.string());
  EXPECT_EQ(tail.readNew(), Lines{});  // returns at once instead of blocking on the pipe
}

}  // namespace
