// Writes the fuzz targets' seed inputs, made by the project's own writers so they are valid
// files of each format: `netsmith_fuzz_seeds SOURCE_DIR OUT_DIR` fills OUT_DIR/seeds/<target>/
// and creates OUT_DIR/corpus/<target>/ (where runs keep what they find) and OUT_DIR/findings/.
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "checkpoint/checkpoint.h"
#include "common/file_util.h"
#include "experiment/sweep_state.h"
#include "export/export_model.h"
#include "export/onnx_export.h"
#include "graph/graph_module.h"
#include "project/project.h"

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

namespace fs = std::filesystem;
using namespace netsmith;

namespace {

const char* const kTargets[] = {"project",    "idx",  "csv",   "cifar", "safetensors",
                                "checkpoint", "onnx", "sweep", "jpeg",  "boxes"};

void put(const fs::path& file, const std::string& bytes);

// Detection annotations, each after the byte that chooses its reader (fuzz_boxes.cpp).
void boxSeeds(const fs::path& dir) {
  const std::string coco =
      R"({"info": {"year": 2024}, "images": [{"id": 1, "file_name": "a.jpg", "width": 40,
          "height": 30}], "annotations": [{"id": 10, "image_id": 1, "category_id": 7,
          "bbox": [4, 2, 12, 8]}, {"id": 11, "image_id": 1, "category_id": 3,
          "bbox": [20, 10, 20, 20], "iscrowd": 0, "segmentation": [[20, 10, 40, 10, 40, 30]]}],
          "categories": [{"id": 7, "name": "dog"}, {"id": 3, "name": "cat"}]})";
  put(dir / "coco", std::string(1, '\0') + coco);
  put(dir / "coco-classes", std::string(1, '\1') + coco);
  put(dir / "voc", std::string(1, '\2') +
                       "<annotation><filename>a.jpg</filename><size><width>40</width><height>30"
                       "</height><depth>3</depth></size><object><name>dog</name><difficult>0"
                       "</difficult><bndbox><xmin>5</xmin><ymin>3</ymin><xmax>16</xmax><ymax>10"
                       "</ymax></bndbox></object></annotation>\n");
  put(dir / "yolo", std::string(1, '\3') + "1 0.25 0.2 0.3 0.26666667\n0 0.75 0.6 0.5 0.6\n");
  put(dir / "yaml", std::string(1, '\4') + "path: ../data\nnames:\n  0: cat\n  1: dog\n");
  put(dir / "names", std::string(1, '\5') + "cat\ndog\n");
}

// JPEGs as OpenCV writes them (baseline 4:2:0, progressive, grey, odd sizes), each after the
// four bytes that choose a region.
void jpegSeeds(const fs::path& dir) {
  cv::Mat colour(37, 53, CV_8UC3), grey(20, 9, CV_8UC1);
  cv::randu(colour, 0, 255);
  cv::randu(grey, 0, 255);
  const std::string regions[] = {std::string("\0\0\xff\xff", 4), "\x40\x20\x80\xc0"};
  int n = 0;
  for (const auto& [img, params] :
       {std::pair{colour, std::vector<int>{}},
        std::pair{colour, std::vector<int>{cv::IMWRITE_JPEG_PROGRESSIVE, 1}},
        std::pair{grey, std::vector<int>{cv::IMWRITE_JPEG_QUALITY, 50}}}) {
    std::vector<unsigned char> bytes;
    cv::imencode(".jpg", img, bytes, params);
    for (const auto& region : regions)
      put(dir / ("seed" + std::to_string(n++) + ".bin"),
          region + std::string(bytes.begin(), bytes.end()));
  }
}

// Mask PNGs for the mask reader, which the same target runs on every input: grey (8- and
// 16-bit) as OpenCV writes them, and an indexed-colour one with a short palette written here.
void maskSeeds(const fs::path& dir) {
  cv::Mat grey(11, 7, CV_8UC1), wide(5, 6, CV_16UC1);
  cv::randu(grey, 0, 4);
  cv::randu(wide, 0, 3);
  int n = 0;
  for (const auto& img : {grey, wide}) {
    std::vector<unsigned char> bytes;
    cv::imencode(".png", img, bytes);
    put(dir / ("mask" + std::to_string(n++) + ".bin"),
        std::string(4, '\0') + std::string(bytes.begin(), bytes.end()));
  }
  const auto be32 = [](std::uint32_t v) {
    return std::string{char(v >> 24), char((v >> 16) & 0xFF), char((v >> 8) & 0xFF),
                       char(v & 0xFF)};
  };
  const auto chunk = [&](const char* type, const std::string& data) {
    const std::string body = std::string(type, 4) + data;
    return be32(std::uint32_t(data.size())) + body +
           be32(std::uint32_t(
               crc32(0, reinterpret_cast<const Bytef*>(body.data()), uInt(body.size()))));
  };
  std::string raw;
  for (int y = 0; y < 6; ++y) {
    raw += char(y % 5);  // every filter type
    for (int x = 0; x < 8; ++x)
      raw += char((x + y) % 3);
  }
  uLongf size = compressBound(uLong(raw.size()));
  std::string z(size, '\0');
  compress(reinterpret_cast<Bytef*>(z.data()), &size, reinterpret_cast<const Bytef*>(raw.data()),
           uLong(raw.size()));
  z.resize(size);
  const std::string png = std::string("\x89PNG\r\n\x1a\n", 8) +
                          chunk("IHDR", be32(8) + be32(6) + std::string("\x08\x03\0\0\0", 5)) +
                          chunk("PLTE", std::string("\0\0\0\x80\0\0\0\x80\0", 9)) +
                          chunk("IDAT", z) + chunk("IEND", "");
  put(dir / "mask-palette.bin", std::string(4, '\0') + png);
}

// A sweep record as the runner writes it: trials completed, stopped at a rung, failed, paused
// and running.
void sweepSeeds(const fs::path& dir) {
  experiment::SweepState s;
  s.name = "seed";
  s.parallel = 2;
  s.samplerLag = 2;
  s.trainArgs = {"--limit-train", "600"};
  const experiment::TrialStatus statuses[] = {
      experiment::TrialStatus::Completed, experiment::TrialStatus::Stopped,
      experiment::TrialStatus::Failed, experiment::TrialStatus::Paused,
      experiment::TrialStatus::Running};
  for (int i = 0; i < 5; ++i) {
    experiment::Trial t;
    t.id = i;
    t.params = {{"train.optimizer.lr", 0.001 * (i + 1)}};
    t.status = statuses[i];
    t.maxEpochs = 4;
    for (int e = 1; e <= (i == 0 ? 4 : 1 + i % 2); ++e)
      t.scores[e] = 0.5 + 0.1 * i + 0.01 * e;
    t.epochsDone = t.scores.rbegin()->first;
    if (i == 2) t.error = "netsmith-cli: failed (exited with status 1)";
    s.trials.push_back(t);
  }
  put(dir / "sweep.json", experiment::sweepStateToJson(s).dump(1));
  s.trials.resize(1);
  put(dir / "one.json", experiment::sweepStateToJson(s).dump());
}

void put(const fs::path& file, const std::string& bytes) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + file.string());
}

std::string bigEndian(std::uint32_t v) {
  return {char(v >> 24), char(v >> 16), char(v >> 8), char(v)};
}

std::string gzip(const std::string& raw) {
  std::vector<unsigned char> out(compressBound(uLong(raw.size())) + 64);
  z_stream z{};
  deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
  z.avail_in = uInt(raw.size());
  z.next_out = out.data();
  z.avail_out = uInt(out.size());
  deflate(&z, Z_FINISH);
  const std::size_t n = z.total_out;
  deflateEnd(&z);
  return std::string(reinterpret_cast<const char*>(out.data()), n);
}

// The IDX target's input: a two-byte little-endian length, the labels file, the images file.
std::string idxInput(const std::string& labels, const std::string& images) {
  return std::string{char(labels.size() & 0xff), char(labels.size() >> 8)} + labels + images;
}

void idxSeeds(const fs::path& dir) {
  const std::uint32_t n = 5, rows = 4, cols = 3;
  std::string labels = bigEndian(0x801) + bigEndian(n);
  std::string images = bigEndian(0x803) + bigEndian(n) + bigEndian(rows) + bigEndian(cols);
  for (std::uint32_t i = 0; i < n; ++i) {
    labels += char(i % 3);
    for (std::uint32_t p = 0; p < rows * cols; ++p)
      images += char((i * 31 + p * 7) & 0xff);
  }
  put(dir / "plain", idxInput(labels, images));
  put(dir / "gzipped", idxInput(gzip(labels), gzip(images)));
  put(dir / "label_out_of_range",
      idxInput(labels.substr(0, 8) + std::string(5, char(200)), images));
}

void cifarSeeds(const fs::path& dir) {
  std::string batch;
  for (int r = 0; r < 3; ++r) {
    batch += char(r);
    for (int p = 0; p < 3072; ++p)
      batch += char((r * 17 + p) & 0xff);
  }
  put(dir / "ten_classes", std::string(1, '\0') + batch);
  put(dir / "three_names_fail", std::string(1, '\3') + batch);
}

void csvSeeds(const fs::path& dir) {
  put(dir / "indices", std::string(1, '\0') + "path,label\na.png,0\nb.png,1\na.png,2\n");
  put(dir / "names_quoted_crlf",
      std::string(1, '\1') + "\xEF\xBB\xBFid,\"path\",label\r\n1,\"a.png\",cat\r\n2,b.png,dog\r\n");
  put(dir / "fail_policy", std::string(1, '\2') + "label,path\n0,a.png\n1,missing.png\n");
  // Detection annotations: the first byte's reader (bits 2..) 3 YOLO labels, 4 names, 5 COCO,
  // 6 VOC; bit 0 gives the class names.
  put(dir / "yolo_labels",
      std::string(1, char(3 << 2 | 1)) + "0 0.5 0.5 0.25 0.5\n2 0.1 0.9 0.2 0.2\n");
  put(dir / "yolo_yaml",
      std::string(1, char(4 << 2 | 1)) + "path: .\nnames:\n  0: cat\n  1: 'dog'\n");
  put(dir / "coco", std::string(1, char(5 << 2)) +
                        R"({"images":[{"id":1,"file_name":"a.png","width":64,"height":48}],)"
                        R"("annotations":[{"id":1,"image_id":1,"category_id":3,"bbox":[4,2,12,8],)"
                        R"("iscrowd":0}],"categories":[{"id":3,"name":"cat"}]})");
  put(dir / "voc", std::string(1, char(6 << 2)) +
                       "<annotation><filename>a.png</filename><size><width>64</width><height>48"
                       "</height><depth>3</depth></size><object><name>dog</name><difficult>1"
                       "</difficult><bndbox><xmin>5</xmin><ymin>3</ymin><xmax>16</xmax><ymax>10"
                       "</ymax></bndbox></object></annotation>");
}

void safetensorsSeeds(const fs::path& dir) {
  put(dir / "three_dtypes",
      checkpoint::encodeSafetensors({{"w", torch::arange(6, torch::kFloat).reshape({2, 3})},
                                     {"n", torch::tensor({int64_t(7)})},
                                     {"h", torch::ones({2, 2}, torch::kDouble)}},
                                    {{"note", "seed"}}));
  put(dir / "empty", checkpoint::encodeSafetensors({}));
}

// A checkpoint as training writes it: a small template project, its weights, the metadata.
void checkpointSeeds(const fs::path& source, const fs::path& dir) {
  const auto loaded =
      project::loadProject((source / "resources/templates/lenet5.netsmith.json").string());
  const auto registry = ops::OpRegistry::withBuiltins();
  graph::GraphModule net(loaded.project.model, registry);
  checkpoint::CheckpointData data;
  data.meta = Json{{"project_name", loaded.project.name},
                   {"project", project::projectToJson(loaded.project)},
                   {"base_dir", "."},
                   {"epoch", 1},
                   {"step", 10},
                   {"classes", Json::array({"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"})},
                   {"normalization", Json{{"mean", {0.5}}, {"std", {0.25}}}},
                   {"metrics", Json{{"val_accuracy", 0.5}}}};
  data.model = checkpoint::moduleState(*net);
  const fs::path file = dir / "lenet5";
  checkpoint::writeCheckpoint(file.string(), data);
}

// ONNX models as Netsmith exports them (the importer's happy path): two templates with their
// weights, one with BatchNorm, pooling and a Linear head, one with residual Adds.
void onnxSeeds(const fs::path& source, const fs::path& dir) {
  const auto registry = std::make_shared<ops::OpRegistry>(ops::OpRegistry::withBuiltins());
  for (const char* name : {"lenet5", "small_resnet"}) {
    const auto loaded = project::loadProject(
        (source / "resources/templates" / (std::string(name) + ".netsmith.json")).string());
    graph::GraphModule net(loaded.project.model, *registry);
    const auto model = exporting::exportModelFrom(loaded.project, std::move(net), registry);
    exporting::OnnxOptions o;
    o.opset = 13;
    put(dir / name, exporting::buildOnnx(model, o));
  }
  // A decoder: the importer's ConvTranspose and Resize paths (with a roi at opset 11, without
  // one from 13).
  const auto decoder = project::parseProject(
      R"({"format": "netsmith-project", "version": 1, "name": "decoder", "model": {
      "input": {"channels": 1, "height": 4, "width": 4}, "nodes": [
      {"id": "input", "op": "Input"},
      {"id": "up", "op": "ConvTranspose2d", "params": {"out_channels": 2}, "inputs": ["input"]},
      {"id": "near", "op": "Upsample", "inputs": ["up"]},
      {"id": "blend", "op": "Upsample", "params": {"mode": "bilinear"}, "inputs": ["near"]}]}})",
      "decoder.netsmith.json");
  for (const int opset : {11, 13}) {
    graph::GraphModule net(decoder.project.model, *registry);
    const auto model = exporting::exportModelFrom(decoder.project, std::move(net), registry);
    exporting::OnnxOptions o;
    o.opset = opset;
    put(dir / ("decoder_opset" + std::to_string(opset)), exporting::buildOnnx(model, o));
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: netsmith_fuzz_seeds SOURCE_DIR OUT_DIR\n");
    return 2;
  }
  const fs::path source = argv[1], out = argv[2];
  try {
    for (const char* t : kTargets) {
      fs::create_directories(out / "seeds" / t);
      fs::create_directories(out / "corpus" / t);
    }
    fs::create_directories(out / "findings");
    for (const auto& dir :
         {source / "resources/examples", source / "resources/templates", source / "tests/data"}) {
      for (const auto& e : fs::directory_iterator(dir))
        if (e.path().extension() == ".json")
          fs::copy_file(e.path(), out / "seeds/project" / e.path().filename(),
                        fs::copy_options::overwrite_existing);
    }
    idxSeeds(out / "seeds/idx");
    cifarSeeds(out / "seeds/cifar");
    csvSeeds(out / "seeds/csv");
    safetensorsSeeds(out / "seeds/safetensors");
    onnxSeeds(source, out / "seeds/onnx");
    checkpointSeeds(source, out / "seeds/checkpoint");
    sweepSeeds(out / "seeds/sweep");
    jpegSeeds(out / "seeds/jpeg");
    boxSeeds(out / "seeds/boxes");
    maskSeeds(out / "seeds/jpeg");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "netsmith_fuzz_seeds: %s\n", e.what());
    return 1;
  }
  std::printf("netsmith_fuzz_seeds: seeds in %s\n", (out / "seeds").string().c_str());
  return 0;
}
