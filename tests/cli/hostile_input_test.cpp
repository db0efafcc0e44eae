// Files from someone else: each case below once crashed, hung, read without end or leaked a
// raw library error. Each must end promptly with a clear message naming the place.
#include <gtest/gtest.h>
#include <zlib.h>

#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <opencv2/imgcodecs.hpp>

#include "../core/data_fixtures.h"
#include "checkpoint/safetensors.h"
#include "cli_runner.h"
#include "common/error.h"
#include "common/json.h"

using netsmith::Json;
using netsmith::testutil::runCli;
using netsmith::testutil::TempDir;

namespace {

std::string projectWithData(const TempDir& dir, const std::string& data) {
  const std::string path = dir.file("p.netsmith.json");
  std::ofstream(path) << R"({"format": "netsmith-project", "version": 1, "name": "h",
    "model": {"input": {"channels": 1, "height": 8, "width": 8}, "nodes": [
      {"id": "input", "op": "Input"}, {"id": "flat", "op": "Flatten", "inputs": ["input"]},
      {"id": "fc", "op": "Linear", "params": {"out_features": 2}, "inputs": ["flat"]}]},
    "data": )" << data << R"(, "train": {"epochs": 1, "batch_size": 4, "workers": 1}})";
  return path;
}

void bigEndian32(std::string& out, std::uint32_t v) {
  for (int s = 24; s >= 0; s -= 8)
    out += char((v >> s) & 0xFF);
}

/// A PNG chunk with its length and CRC.
std::string pngChunk(const std::string& type, const std::string& data) {
  std::string out;
  bigEndian32(out, std::uint32_t(data.size()));
  const std::string body = type + data;
  out += body;
  bigEndian32(out, std::uint32_t(
                       ::crc32(0, reinterpret_cast<const Bytef*>(body.data()), uInt(body.size()))));
  return out;
}

}  // namespace

TEST(HostileInput, JsonNestedDeeperThanTheLimitIsAnErrorNotACrash) {
  TempDir dir;
  for (const std::string where : {"format", "model", "unknown"}) {
    std::string nested(100000, '[');
    nested += std::string(100000, ']');
    const std::string path = dir.file(where + ".netsmith.json");
    std::ofstream(path) << "{\"" << where << "\": " << nested << "}";
    const auto r = runCli("validate " + path);
    EXPECT_EQ(r.exitCode, 2) << r.output.substr(0, 300);
    EXPECT_NE(r.output.find(path + ":1:"), std::string::npos) << r.output.substr(0, 300);
    EXPECT_NE(r.output.find("nested deeper than 128 levels"), std::string::npos);
  }
}

TEST(HostileInput, AnIdxHeaderAnnouncingTooMuchIsRefusedBeforeAnythingIsAllocated) {
  TempDir dir;
  std::string images;
  bigEndian32(images, 0x00000803);
  bigEndian32(images, 0x80000000u);  // 2^31 images
  bigEndian32(images, 65535);
  bigEndian32(images, 65535);
  images += std::string(1000, '\0');
  std::ofstream(dir.file("i.idx"), std::ios::binary) << images;
  std::string labels;
  bigEndian32(labels, 0x00000801);
  bigEndian32(labels, 0x80000000u);
  std::ofstream(dir.file("l.idx"), std::ios::binary) << labels;
  const auto r =
      runCli("data-stats " + projectWithData(dir, R"({"train": {"format": "idx", "images": "i.idx",
                                                 "labels": "l.idx"}})"));
  EXPECT_EQ(r.exitCode, 2) << r.output;
  EXPECT_NE(r.output.find("i.idx: the header announces 2147483648 images of 65535x65535"),
            std::string::npos)
      << r.output;
}

TEST(HostileInput, DevicesAndFifosAreRefusedWithoutBlocking) {
  TempDir dir;
  // /dev/zero as a project and as IDX data: refused at once, not read without end.
  auto r = runCli("validate /dev/zero");
  EXPECT_EQ(r.exitCode, 2) << r.output;
  EXPECT_NE(r.output.find("/dev/zero: is a device, not a file"), std::string::npos) << r.output;
  r = runCli("data-stats " + projectWithData(dir, R"({"train": {"format": "idx",
      "images": "/dev/zero", "labels": "/dev/zero"}})"));
  EXPECT_EQ(r.exitCode, 2) << r.output;
  EXPECT_NE(r.output.find("/dev/zero: is a device, not a file"), std::string::npos) << r.output;
  // A FIFO as a project and as a manifest: nothing opens it (which would block forever).
  const std::string fifo = dir.file("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  r = runCli("validate " + fifo);
  EXPECT_EQ(r.exitCode, 2) << r.output;
  EXPECT_NE(r.output.find("pipe: is a FIFO (named pipe), not a file"), std::string::npos)
      << r.output;
  r = runCli("data-stats " +
             projectWithData(dir, R"({"train": {"format": "csv", "manifest": "pipe"}})"));
  EXPECT_EQ(r.exitCode, 2) << r.output;
  EXPECT_NE(r.output.find("is a FIFO"), std::string::npos) << r.output;
}

TEST(HostileInput, ADecompressionBombPngIsSkippedByItsHeader) {
  TempDir dir;
  netsmith::testutil::writeImageFolder(dir.path() / "imgs", {"a", "b"}, 3, 8, 8, 1);
  // 30000 x 30000 grey announced in IHDR; the image data itself never has to be read.
  std::string ihdr;
  bigEndian32(ihdr, 30000);
  bigEndian32(ihdr, 30000);
  ihdr += std::string{char(8), char(0), char(0), char(0), char(0)};
  const std::string png = std::string("\x89PNG\r\n\x1a\n", 8) + pngChunk("IHDR", ihdr) +
                          pngChunk("IDAT", std::string(16, 'x')) + pngChunk("IEND", "");
  std::ofstream(dir.file("imgs/a/bomb.png"), std::ios::binary) << png;
  const auto r = runCli("data-stats " + projectWithData(dir, R"({"train": {"format":
      "image_folder", "root": "imgs"}, "normalize": "none"})"));
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("bomb.png: not read: 900 megapixels is more than the 100"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("Splits:  train 6,"), std::string::npos) << r.output;
}

TEST(HostileInput, AHugeLabelIsAnErrorNotTenBillionClasses) {
  TempDir dir;
  netsmith::testutil::writeImageFolder(dir.path() / "imgs", {"a"}, 2, 8, 8, 1);
  std::ofstream(dir.file("m.csv"))
      << "path,label\nimgs/a/img_0.png,0\nimgs/a/img_1.png,9999999999\n";
  const auto r = runCli(
      "data-stats " + projectWithData(dir, R"({"train": {"format": "csv", "manifest": "m.csv"}})"));
  EXPECT_EQ(r.exitCode, 2) << r.output;
  EXPECT_NE(r.output.find("m.csv: line 3: label 9999999999 would make 10000000000 classes; at "
                          "most 100000"),
            std::string::npos)
      << r.output;
}

TEST(HostileInput, SafetensorsShapesThatWrapAroundAreRefusedByName) {
  TempDir dir;
  const Json header{
      {"w", {{"dtype", "F32"}, {"shape", {4, 4611686018427387904LL}}, {"data_offsets", {0, 0}}}}};
  std::string text = header.dump();
  std::string bytes;
  for (int i = 0; i < 8; ++i)
    bytes += char((std::uint64_t(text.size()) >> (8 * i)) & 0xFF);
  bytes += text;
  std::ofstream(dir.file("w.safetensors"), std::ios::binary) << bytes;
  try {
    netsmith::checkpoint::readSafetensors(dir.file("w.safetensors"));
    FAIL() << "accepted";
  } catch (const netsmith::Error& e) {
    EXPECT_NE(std::string(e.what()).find("tensor \"w\" has a shape [4,4611686018427387904] "
                                         "larger than the file"),
              std::string::npos)
        << e.what();
  }
}

TEST(HostileInput, AbsurdThreadCountsAndPlansAreBounded) {
  TempDir dir;
  netsmith::testutil::writeImageFolder(dir.path() / "imgs", {"a", "b"}, 4, 8, 8, 1);
  const auto project = projectWithData(
      dir, R"({"train": {"format": "image_folder", "root": "imgs"}, "normalize": "none"})");
  auto r = runCli("train " + project + " --threads 4096 --out " + dir.file("runs"));
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("train.threads 4096 is more than 4x this machine's"), std::string::npos)
      << r.output;
  r = runCli("lr-schedule " + project + " --epochs 100000 --steps-per-epoch 100000");
  EXPECT_EQ(r.exitCode, 2) << r.output.substr(0, 300);
  EXPECT_NE(r.output.find("the plan has 10000000000 optimizer steps; lr-schedule prints at most"),
            std::string::npos)
      << r.output.substr(0, 300);
}
