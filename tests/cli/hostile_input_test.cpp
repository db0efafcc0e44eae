// Files from someone else: each case below once crashed, hung, read without end or leaked a
// raw library error. Each must end promptly with a clear message naming the place.
#include <gtest/gtest.h>
#include <zlib.h>

#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <opencv2/imgcodecs.hpp>

#include "../core/data_fixtures.h"
#include "../core/train_fixtures.h"
#include "checkpoint/safetensors.h"
#include "cli_runner.h"
#include "common/error.h"
#include "common/file_util.h"
#include "common/json.h"

using netsmith::Json;
using netsmith::testutil::runCli;
using netsmith::testutil::TempDir;

namespace {

std::string projectWithData(const TempDir& dir, const std::string& data) {
  return netsmith::testutil::writeClassifierProject(dir, data, 2);
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
  EXPECT_NE(r.output.find("i.idx: the header announces 2147483648 images; an IDX file may hold "
                          "at most 16777216"),
            std::string::npos)
      << r.output;
  // Within the record count, the pixel bytes are bounded too (65535x65535 images).
  images.replace(4, 4, std::string("\0\0\x10\0", 4));  // 4096 images
  std::ofstream(dir.file("i.idx"), std::ios::binary) << images;
  labels.replace(4, 4, std::string("\0\0\x10\0", 4));
  std::ofstream(dir.file("l.idx"), std::ios::binary) << labels;
  const auto big =
      runCli("data-stats " + projectWithData(dir, R"({"train": {"format": "idx", "images": "i.idx",
                                                 "labels": "l.idx"}})"));
  EXPECT_EQ(big.exitCode, 2) << big.output;
  EXPECT_NE(big.output.find("i.idx: the header announces 4096 images of 65535x65535"),
            std::string::npos)
      << big.output;
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

namespace {

/// A real checkpoint of the blob project, trained for one epoch; returns its path.
std::string trainedCheckpoint(const TempDir& dir, const std::string& project) {
  const auto r = runCli("train " + project + " --epochs 1 --out " + dir.file("runs"));
  EXPECT_EQ(r.exitCode, 0) << r.output;
  for (const auto& run : std::filesystem::directory_iterator(dir.file("runs")))
    return (run.path() / "checkpoints" / "last.safetensors").string();
  return {};
}

/// `path` with its Netsmith metadata changed by `edit`, written to `out`.
std::string withMeta(const std::string& path, const std::string& out,
                     const std::function<void(Json&)>& edit) {
  auto file = netsmith::checkpoint::readSafetensors(path);
  Json meta = Json::parse(file.metadata.at("netsmith"));
  edit(meta);
  file.metadata["netsmith"] = meta.dump();
  netsmith::checkpoint::writeSafetensors(out, file.tensors, file.metadata);
  return out;
}

}  // namespace

TEST(HostileInput, ValuesOfTheWrongKindAreNamedNotThrownRaw) {
  TempDir dir;
  // A number no double holds.
  const auto project = netsmith::testutil::writeTrainProject(dir);
  std::string text = netsmith::readTextFile(project);
  text.insert(text.rfind('}'), ", \"x\": 1e309");
  std::ofstream(dir.file("big.netsmith.json")) << text;
  auto r = runCli("validate " + dir.file("big.netsmith.json"));
  EXPECT_EQ(r.exitCode, 2) << r.output;
  EXPECT_NE(r.output.find("a number too large for a double ('1e309')"), std::string::npos)
      << r.output;
  // Checkpoint metadata of the wrong types: named, before anything reads it.
  const std::string ckpt = trainedCheckpoint(dir, project);
  const std::vector<std::pair<std::function<void(Json&)>, std::string>> cases{
      {[](Json& m) { m["version"] = "1"; }, "\"version\" must be a whole number >= 0, got \"1\""},
      {[](Json& m) { m["classes"] = 4; }, "\"classes\" must be a list of class names, got 4"},
      {[](Json& m) { m["normalization"].erase("std"); }, "\"normalization\" must be"},
      {[](Json& m) { m["epoch"] = -5; }, "\"epoch\" must be a whole number >= 0, got -5"}};
  int k = 0;
  for (const auto& [edit, expected] : cases) {
    const auto bad = withMeta(ckpt, dir.file("bad" + std::to_string(k++) + ".safetensors"), edit);
    for (const std::string command : {"eval ", "export "}) {
      r = runCli(command + bad);
      EXPECT_EQ(r.exitCode, 2) << command << r.output;
      EXPECT_NE(r.output.find("corrupt checkpoint metadata: " + expected), std::string::npos)
          << command << r.output;
      EXPECT_EQ(r.output.find("json.exception"), std::string::npos) << r.output;
    }
  }
  // A project snapshot with a node whose "op" key was renamed (a fuzzer's find: the model was
  // built from it, a null op dereferenced): refused with the snapshot's problem, by eval and
  // export alike.
  const auto noOp = withMeta(ckpt, dir.file("noop.safetensors"), [](Json& m) {
    auto& node = m["project"]["model"]["nodes"].back();
    node["1p"] = node["op"];
    node.erase("op");
  });
  for (const std::string command : {"eval ", "export "}) {
    r = runCli(command + noOp);
    EXPECT_EQ(r.exitCode, 2) << command << r.output;
    EXPECT_NE(r.output.find("the checkpoint's project snapshot has problems"), std::string::npos)
        << command << r.output;
    EXPECT_NE(r.output.find("\"op\" is missing"), std::string::npos) << command << r.output;
  }
  // Out-of-range loop state: --resume refuses it.
  const auto far = withMeta(ckpt, dir.file("far.safetensors"),
                            [](Json& m) { m["loop"]["next_batch"] = 1000000000000LL; });
  r = runCli("train " + project + " --epochs 3 --resume " + far);
  EXPECT_EQ(r.exitCode, 2) << r.output;
  EXPECT_NE(r.output.find("corrupt loop state in the checkpoint (epoch 1, next batch "
                          "1000000000000 of 6"),
            std::string::npos)
      << r.output;
  // A checkpoint whose class list is longer than its model's scores.
  const auto more = withMeta(ckpt, dir.file("more.safetensors"), [](Json& m) {
    m["classes"] = Json::array({"a", "b", "c", "d", "e"});
  });
  r = runCli("eval " + more + " --data " + project);
  EXPECT_EQ(r.exitCode, 2) << r.output;
  EXPECT_NE(r.output.find("the checkpoint's model does not fit this data: the model outputs 4 "
                          "scores but the data has 5 classes"),
            std::string::npos)
      << r.output;
}

TEST(HostileInput, FolderLoopsAndUndecodableClassNamesAreNamed) {
  TempDir dir;
  netsmith::testutil::writeImageFolder(dir.path() / "imgs", {"a", "b"}, 3, 8, 8, 1);
  std::filesystem::create_directory_symlink("..", dir.path() / "imgs" / "a" / "loop");
  const auto project = projectWithData(
      dir, R"({"train": {"format": "image_folder", "root": "imgs"}, "normalize": "none"})");
  auto r = runCli("data-stats " + project + " --json");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const Json j = Json::parse(r.output);
  EXPECT_EQ(j["class_counts"]["train"]["a"], 3);  // b's images are not counted as a's
  ASSERT_EQ(j["skipped"].size(), 1u);
  EXPECT_EQ(j["skipped"][0]["reason"], "a link to a folder already listed");
  // A class folder whose name is not UTF-8: refused before any training.
  std::filesystem::create_directories(dir.path() / "bad" / "ok");
  std::filesystem::create_directories(dir.path() / "bad" / "caf\xe9");
  for (const char* c : {"ok", "caf\xe9"})
    cv::imwrite((dir.path() / "bad" / c / "x.png").string(),
                netsmith::testutil::patternImage(8, 8, 1, 1));
  r = runCli("train " + projectWithData(dir, R"({"train": {"format": "image_folder", "root":
      "bad"}, "normalize": "none"})") +
             " --out " + dir.file("runs"));
  EXPECT_EQ(r.exitCode, 2) << r.output;
  EXPECT_NE(r.output.find("has a name that is not valid UTF-8"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir.file("runs")));
}

TEST(HostileInput, ACheckpointReadsOnlyDataTheUserNamed) {
  TempDir home, elsewhere;
  // The user's own run: data beside the project, evaluated without naming it again.
  netsmith::testutil::writeImageFolder(home.path() / "imgs", {"a", "b"}, 4, 8, 8, 1);
  const auto project = projectWithData(
      home, R"({"train": {"format": "image_folder", "root": "imgs"}, "normalize": "none"})");
  const std::string ckpt = trainedCheckpoint(home, project);
  auto r = runCli("eval " + ckpt);
  EXPECT_EQ(r.exitCode, 0) << r.output;

  // A checkpoint from someone else, sent to another folder, whose snapshot points at data the
  // user never named (an absolute folder, and a recorded base_dir of "/").
  const auto secret = elsewhere.path() / "private";
  netsmith::testutil::writeImageFolder(secret, {"a", "b"}, 4, 8, 8, 1);
  const auto inbox = elsewhere.path() / "inbox";
  std::filesystem::create_directories(inbox);
  const auto hostile = withMeta(ckpt, (inbox / "model.safetensors").string(), [&](Json& m) {
    m["project"]["data"]["train"]["root"] = secret.string();
    m["base_dir"] = "/";
  });
  for (const std::string command : {"eval ", "eval --json "}) {
    r = runCli(command + hostile);
    EXPECT_EQ(r.exitCode, 2) << r.output;
    EXPECT_NE(r.output.find("its project reads data from " + secret.string() +
                            ", outside the checkpoint's folder " + inbox.string()),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("--data-from-checkpoint"), std::string::npos) << r.output;
  }
  // Export still writes and checks everything, with random inputs instead of that data.
  r = runCli("export " + hostile + " --onnx " + (inbox / "m.onnx").string());
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("random inputs only: no real samples, its data (" + secret.string()),
            std::string::npos)
      << r.output;
  // Named by the user: with --data, or with --data-from-checkpoint.
  r = runCli("eval " + hostile + " --data " + project);
  EXPECT_EQ(r.exitCode, 0) << r.output;
  r = runCli("eval " + hostile + " --data-from-checkpoint");
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("train split"), std::string::npos) << r.output;
  // A project file shipped beside the checkpoint names nothing: it came from the same sender.
  // Nor does a link in the checkpoint's folder that leads out of it.
  std::ofstream(inbox / "mine.netsmith.json")
      << netsmith::readTextFile(netsmith::testutil::writeClassifierProject(
             elsewhere,
             R"({"train": {"format": "image_folder", "root": ")" + secret.string() +
                 R"("}, "normalize": "none"})",
             2));
  r = runCli("eval " + hostile);
  EXPECT_EQ(r.exitCode, 2) << r.output;
  EXPECT_NE(r.output.find("outside the checkpoint's folder " + inbox.string()), std::string::npos)
      << r.output;
  std::filesystem::create_directory_symlink(secret, inbox / "imgs");
  const auto linked = withMeta(ckpt, (inbox / "linked.safetensors").string(), [&](Json& m) {
    m["project"]["data"]["train"]["root"] = "imgs";
    m["base_dir"] = inbox.string();
  });
  r = runCli("eval " + linked);
  EXPECT_EQ(r.exitCode, 2) << r.output;
  EXPECT_NE(r.output.find("its project reads data from " + (inbox / "imgs").string()),
            std::string::npos)
      << r.output;
}

TEST(HostileInput, AnOnnxFileThatIsNotAModelIsRefusedAndNothingIsWritten) {
  TempDir dir;
  const auto import = [&](const std::string& file) {
    return runCli("import " + dir.file(file) + " --out " + dir.file("p.netsmith.json"));
  };
  std::ofstream(dir.file("garbage.onnx"), std::ios::binary) << std::string(4096, '\xff');
  std::ofstream(dir.file("empty.onnx"), std::ios::binary);
  // A protobuf that parses but has no graph: field 1 (ir_version) only.
  std::ofstream(dir.file("nograph.onnx"), std::ios::binary) << std::string("\x08\x07", 2);
  for (const auto& [file, message] :
       {std::pair<std::string, std::string>{"garbage.onnx", "not an ONNX model"},
        {"empty.onnx", "not an ONNX model"},
        {"nograph.onnx", "not an ONNX model with a graph"},
        {"missing.onnx", "missing.onnx: cannot open"}}) {
    const auto r = import(file);
    EXPECT_EQ(r.exitCode, 2) << file << ": " << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << file << ": " << r.output;
    EXPECT_FALSE(std::filesystem::exists(dir.file("p.netsmith.json"))) << file;
    EXPECT_FALSE(std::filesystem::exists(dir.file("p.safetensors"))) << file;
  }
  const auto noOut = runCli("import " + dir.file("garbage.onnx"));
  EXPECT_EQ(noOut.exitCode, 2);
  EXPECT_NE(noOut.output.find("--out PROJECT.netsmith.json is required"), std::string::npos)
      << noOut.output;
  const auto badInput = runCli("import " + dir.file("garbage.onnx") + " --out " +
                               dir.file("p.netsmith.json") + " --input 3x224");
  EXPECT_NE(badInput.output.find("--input expects CxHxW"), std::string::npos) << badInput.output;
}
