// Safetensors files: lossless round trips for every dtype, the reference layout, and a clear
// error for truncated, corrupt or foreign files.
#include "checkpoint/safetensors.h"

#include <map>

#include "common/error.h"
#include "data_fixtures.h"
#include "test_support.h"

using namespace netsmith;
using namespace netsmith::checkpoint;

namespace {

std::string errorOf(const std::string& bytes) {
  try {
    decodeSafetensors(bytes, "f.safetensors");
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST(Safetensors, RoundTripsEveryDtypeNamesAndMetadata) {
  torch::manual_seed(0);
  const NamedTensors tensors = {
      {"conv1.weight", torch::randn({4, 1, 3, 3})},
      {"conv1.bias", torch::randn({4}, torch::kFloat64)},
      {"half", torch::randn({2, 3}).to(torch::kFloat16)},
      {"bf", torch::randn({5}).to(torch::kBFloat16)},
      {"bn.num_batches_tracked", torch::tensor(7, torch::kLong)},
      {"i32", torch::arange(6, torch::kInt).reshape({2, 3})},
      {"bytes", torch::arange(10, torch::kUInt8)},
      {"flags", torch::tensor({true, false, true})},
      {"empty", torch::zeros({0, 3})},
      {"strided", torch::randn({4, 4}).t()},  // not contiguous: written in logical order
  };
  testutil::TempDir dir;
  const auto path = dir.file("m.safetensors");
  writeSafetensors(path, tensors, {{"format", "pt"}, {"netsmith", "1"}});
  const auto file = readSafetensors(path);
  EXPECT_EQ(file.metadata.at("format"), "pt");
  ASSERT_EQ(file.tensors.size(), tensors.size());
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    EXPECT_EQ(file.tensors[i].first, tensors[i].first);
    EXPECT_EQ(file.tensors[i].second.scalar_type(), tensors[i].second.scalar_type());
    EXPECT_TRUE(torch::equal(file.tensors[i].second, tensors[i].second)) << tensors[i].first;
  }
}

// An empty tensor starts where the next one does: the file reads back whatever the names' order
// (the header's keys are sorted by name, so "z" comes after "a" there).
TEST(Safetensors, AnEmptyTensorBesideAnotherAtTheSameOffsetReadsBack) {
  const auto bytes = encodeSafetensors({{"z", torch::zeros({0})}, {"a", torch::ones({4})}});
  const auto file = decodeSafetensors(bytes, "mem");
  ASSERT_EQ(file.tensors.size(), 2u);
  std::map<std::string, torch::Tensor> byName(file.tensors.begin(), file.tensors.end());
  EXPECT_EQ(byName.at("z").numel(), 0);
  EXPECT_TRUE(torch::equal(byName.at("a"), torch::ones({4})));
}

TEST(Safetensors, LayoutFollowsTheReference) {
  const auto bytes = encodeSafetensors({{"a", torch::tensor({1.0f, 2.0f})}});
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i)
    n = (n << 8) | static_cast<unsigned char>(bytes[static_cast<std::size_t>(i)]);
  EXPECT_EQ((8 + n) % 8, 0u);
  const auto header = Json::parse(bytes.substr(8, n));
  EXPECT_EQ(header["a"]["dtype"], "F32");
  EXPECT_EQ(header["a"]["shape"], Json::array({2}));
  EXPECT_EQ(header["a"]["data_offsets"], Json::array({0, 8}));
  float values[2];
  std::memcpy(values, bytes.data() + 8 + n, 8);
  EXPECT_EQ(values[0], 1.0f);
  EXPECT_EQ(values[1], 2.0f);
}

TEST(Safetensors, BadFilesGiveClearErrors) {
  const auto good = encodeSafetensors({{"w", torch::ones({3, 3})}, {"b", torch::zeros({3})}});
  EXPECT_NE(errorOf(good.substr(0, 5)).find("too short"), std::string::npos);
  EXPECT_NE(errorOf(good.substr(0, good.size() - 4)).find("outside the data (truncated file?)"),
            std::string::npos)
      << errorOf(good.substr(0, good.size() - 4));
  EXPECT_NE(errorOf(good.substr(0, 20)).find("does not fit the file"), std::string::npos);
  std::string corrupt = good;
  corrupt[9] = '#';
  EXPECT_NE(errorOf(corrupt).find("the header is not JSON"), std::string::npos);
  EXPECT_NE(errorOf(std::string("\x89PNG\r\n\x1a\n") + std::string(64, 'x'))
                .find("f.safetensors: not a valid safetensors file"),
            std::string::npos);
  // A header whose range disagrees with the shape.
  auto hand = [](const std::string& header, std::size_t dataBytes) {
    std::string out;
    for (int i = 0; i < 8; ++i)
      out += static_cast<char>((header.size() >> (8 * i)) & 0xFF);
    return out + header + std::string(dataBytes, '\0');
  };
  EXPECT_NE(errorOf(hand(R"({"x": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}})", 8))
                .find("does not match its shape"),
            std::string::npos);
  EXPECT_NE(errorOf(hand(R"({"x": {"dtype": "Q7", "shape": [1], "data_offsets": [0, 1]}})", 1))
                .find("unsupported dtype"),
            std::string::npos);
  EXPECT_NE(
      errorOf(
          hand(
              R"({"x": {"dtype": "U8", "shape": [2], "data_offsets": [0, 2]}, "y": {"dtype": "U8", "shape": [2], "data_offsets": [1, 3]}})",
              3))
          .find("overlaps"),
      std::string::npos);
  EXPECT_NE(errorOf(hand(R"({"x": {"dtype": "U8", "shape": [2], "data_offsets": [0, 2]}})", 5))
                .find("no tensor claims"),
            std::string::npos);
}
