// The checkpoint writer and reader side by side (checkpoint/checkpoint.h): what is written reads
// back bit for bit (NaN payloads, -0, subnormals, every tensor's name and order) with the same
// metadata; a replaced file leaves no temporary; a write that fails (a full disk, a folder in
// the way, a missing or read-only folder) leaves the previous file as it was and no temporary;
// a link or hard link at the target is replaced, never written through.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <string>

#include "checkpoint/checkpoint.h"
#include "common/error.h"
#include "common/file_util.h"
#include "data_fixtures.h"

using namespace netsmith;
using netsmith::checkpoint::CheckpointData;
using netsmith::checkpoint::NamedTensors;
using netsmith::checkpoint::readCheckpoint;
using netsmith::checkpoint::writeCheckpoint;
using netsmith::testutil::TempDir;
namespace fs = std::filesystem;

namespace {

/// A tensor's raw bytes in logical order.
std::string rawBytesOf(const torch::Tensor& t) {
  const auto c = t.contiguous();
  return std::string(static_cast<const char*>(c.data_ptr()),
                     static_cast<std::size_t>(c.numel()) * c.element_size());
}

float floatFromBits(std::uint32_t bits) {
  float f = 0;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

/// A model's and an optimizer's worth of tensors with values a lossy writer would change.
CheckpointData awkwardCheckpoint(std::int64_t step) {
  auto w = torch::arange(12, torch::kFloat).reshape({3, 4}) / 7;
  auto* p = w.data_ptr<float>();
  p[0] = floatFromBits(0x7fc01234u);  // a NaN with a payload
  p[1] = -0.0f;
  p[2] = std::numeric_limits<float>::denorm_min();
  p[3] = -std::numeric_limits<float>::infinity();
  CheckpointData data;
  data.meta = Json{{"epoch", 3},
                   {"step", step},
                   {"classes", {"cat", "dog", "emu"}},
                   {"loop", {{"next_batch", 7}, {"lr_plateau", {{"factor", 0.125}}}}},
                   {"metrics", {{"val_loss", 0.3125}, {"val_accuracy", nullptr}}},
                   {"project_name", "tiny"}};
  data.model = {{"fc.weight", w},
                {"fc.bias", torch::tensor({1e-30, -2.5, 3.0}, torch::kDouble)},
                {"bn.num_batches_tracked", torch::tensor(42, torch::kLong)},
                {"half", (torch::arange(6, torch::kFloat) / 3).to(torch::kHalf)},
                {"strided", torch::arange(6, torch::kFloat).reshape({2, 3}).t()},
                {"optim/not-an-optimizer-entry", torch::ones({2})}};
  data.optimizer = {{"fc.weight/momentum_buffer", -w},
                    {"fc.bias/step", torch::tensor(step, torch::kLong)}};
  return data;
}

void expectSameTensors(const NamedTensors& got, const NamedTensors& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(want[i].first);
    EXPECT_EQ(got[i].first, want[i].first);
    EXPECT_EQ(got[i].second.scalar_type(), want[i].second.scalar_type());
    EXPECT_EQ(got[i].second.sizes(), want[i].second.sizes());
    EXPECT_TRUE(rawBytesOf(got[i].second) == rawBytesOf(want[i].second));
  }
}

/// The names in `dir` (temporaries included: they start with a dot).
std::set<std::string> namesIn(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    out.insert(e.path().filename().string());
  return out;
}

/// Turns the write fault off however the test ends.
struct DiskFullOff {
  ~DiskFullOff() { setWriteFaultForTesting("", 0); }
};

}  // namespace

TEST(CheckpointWriter, WhatIsWrittenReadsBackBitForBit) {
  TempDir dir;
  const auto data = awkwardCheckpoint(120);
  writeCheckpoint(dir.file("c.safetensors"), data);
  const auto back = readCheckpoint(dir.file("c.safetensors"));
  // The model's and the optimizer's tensors come back apart, named as given, in the order given
  // (a model tensor whose own name starts "optim/" stays the model's).
  expectSameTensors(back.model, data.model);
  expectSameTensors(back.optimizer, data.optimizer);
  // The metadata as given, with the format and version added.
  EXPECT_EQ(back.meta.at("format"), "netsmith-checkpoint");
  EXPECT_TRUE(back.meta.at("version").is_number_integer());
  Json meta = back.meta;
  meta.erase("format");
  meta.erase("version");
  EXPECT_EQ(meta, data.meta);
}

// Written twice to one path: the second replaces the first, and nothing else is left beside it.
TEST(CheckpointWriter, AReplacedFileLeavesNoTemporary) {
  TempDir dir;
  const std::string path = dir.file("last.safetensors");
  writeCheckpoint(path, awkwardCheckpoint(1));
  writeCheckpoint(path, awkwardCheckpoint(2));
  EXPECT_EQ(namesIn(dir.path().string()), std::set<std::string>{"last.safetensors"});
  EXPECT_EQ(readCheckpoint(path).meta.at("step"), 2);
}

// The disk fills half-way through the new file: the error says so and that the existing file is
// unchanged, and it is, byte for byte; no temporary is left. A folder where the file should go
// and a missing parent fail the same way, leaving what was there.
TEST(CheckpointWriter, AFailedWriteLeavesThePreviousFileAndNoTemporary) {
  TempDir dir;
  const std::string path = dir.file("last.safetensors");
  writeCheckpoint(path, awkwardCheckpoint(1));
  const std::string before = readTextFile(path);
  {
    DiskFullOff off;
    setWriteFaultForTesting("last.safetensors", 0);
    try {
      writeCheckpoint(path, awkwardCheckpoint(2));
      ADD_FAILURE() << "the write did not fail";
    } catch (const IoError& e) {
      EXPECT_EQ(std::string(e.what()),
                path + ": write failed (No space left on device); the existing file is unchanged");
    }
  }
  EXPECT_EQ(readTextFile(path), before);
  EXPECT_EQ(readCheckpoint(path).meta.at("step"), 1);
  EXPECT_EQ(namesIn(dir.path().string()), std::set<std::string>{"last.safetensors"});

  const std::string folder = dir.file("taken.safetensors");
  fs::create_directory(folder);
  std::ofstream(folder + "/inside.txt") << "mine";
  EXPECT_THROW(writeCheckpoint(folder, awkwardCheckpoint(3)), IoError);
  EXPECT_TRUE(fs::is_directory(folder));
  EXPECT_EQ(readTextFile(folder + "/inside.txt"), "mine");
  EXPECT_EQ(namesIn(dir.path().string()),
            (std::set<std::string>{"last.safetensors", "taken.safetensors"}));

  const std::string orphan = dir.file("missing/last.safetensors");
  EXPECT_THROW(writeCheckpoint(orphan, awkwardCheckpoint(4)), IoError);
  EXPECT_FALSE(fs::exists(dir.file("missing")));
}

TEST(CheckpointWriter, AReadOnlyFolderKeepsItsFile) {
  TempDir dir;
  const std::string folder = dir.file("checkpoints");
  fs::create_directory(folder);
  const std::string path = folder + "/last.safetensors";
  writeCheckpoint(path, awkwardCheckpoint(1));
  const std::string before = readTextFile(path);
  ASSERT_EQ(::chmod(folder.c_str(), 0555), 0);
  // Root (and CAP_DAC_OVERRIDE) writes in a read-only folder: nothing to refuse there.
  const bool writable = ::access(folder.c_str(), W_OK) == 0;
  if (!writable) {
    try {
      writeCheckpoint(path, awkwardCheckpoint(2));
      ADD_FAILURE() << "the write did not fail";
    } catch (const IoError& e) {
      EXPECT_EQ(std::string(e.what()), path + ": cannot write (Permission denied)");
    }
    EXPECT_EQ(readTextFile(path), before);
    EXPECT_EQ(namesIn(folder), std::set<std::string>{"last.safetensors"});
  }
  ::chmod(folder.c_str(), 0755);
  if (writable) GTEST_SKIP() << "this user writes in read-only folders (root)";
}

// A symbolic link planted where the checkpoint goes (to a file, or to nothing) is replaced by
// the checkpoint: what it pointed at is not written. A hard link is replaced the same way: the
// other name keeps the old bytes.
TEST(CheckpointWriter, ALinkAtTheTargetIsReplacedNotWrittenThrough) {
  TempDir dir;
  fs::create_directory(dir.file("outside"));
  std::ofstream(dir.file("outside/victim.txt")) << "precious\n";
  fs::create_directory(dir.file("run"));
  const std::string last = dir.file("run/last.safetensors");
  fs::create_symlink(dir.file("outside/victim.txt"), last);
  writeCheckpoint(last, awkwardCheckpoint(1));
  EXPECT_EQ(readTextFile(dir.file("outside/victim.txt")), "precious\n");
  EXPECT_FALSE(fs::is_symlink(fs::symlink_status(last)));
  EXPECT_EQ(readCheckpoint(last).meta.at("step"), 1);

  const std::string best = dir.file("run/best.safetensors");
  fs::create_symlink(dir.file("outside/absent.safetensors"), best);
  writeCheckpoint(best, awkwardCheckpoint(2));
  EXPECT_FALSE(fs::exists(dir.file("outside/absent.safetensors")));
  EXPECT_FALSE(fs::is_symlink(fs::symlink_status(best)));
  EXPECT_EQ(readCheckpoint(best).meta.at("step"), 2);

  const std::string kept = dir.file("outside/kept.safetensors");
  writeCheckpoint(kept, awkwardCheckpoint(3));
  const std::string keptBytes = readTextFile(kept);
  const std::string shared = dir.file("run/epoch-1.safetensors");
  fs::create_hard_link(kept, shared);
  writeCheckpoint(shared, awkwardCheckpoint(4));
  EXPECT_EQ(readTextFile(kept), keptBytes);
  EXPECT_EQ(readCheckpoint(shared).meta.at("step"), 4);
  EXPECT_EQ(fs::hard_link_count(kept), 1u);
  EXPECT_EQ(namesIn(dir.file("run")),
            (std::set<std::string>{"best.safetensors", "epoch-1.safetensors", "last.safetensors"}));
}
