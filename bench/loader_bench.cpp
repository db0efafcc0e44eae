// Prints the loader's throughput (images/s) and, for comparison, the default CNN's training
// throughput on this machine:
//  1. the default Fashion-MNIST project with random crop (padding 2), horizontal flip and
//     normalisation, for 1 worker and for every hardware thread;
//  2. a 224x224 RGB image-folder pipeline (RandomResizedCrop, flip, ColorJitter, normalise)
//     on JPEG images this program writes to a temporary folder.
// Flags: `--jpeg-dir DIR` writes the JPEGs to DIR and keeps them (bench/loader_compare.py times
// torchvision on the same files); `--jpeg-only` runs part 2 alone; `--batches N` (part 2).
// Target: one worker feeds the default project at least 5x faster than the CNN trains.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <random>
#include <thread>

#include <unistd.h>

#include "augment/transform.h"
#include "common/error.h"
#include "data/data_loader.h"
#include "data/project_data.h"
#include "env/env_report.h"
#include "graph/graph_module.h"
#include "project/project.h"
#include "registries/registries.h"
#include "train/trainer.h"

using namespace netsmith;
namespace fs = std::filesystem;

namespace {

double seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double loaderRate(const data::SampleSet& set, const data::SampleProcessor& proc, int workers,
                  std::int64_t batches, std::int64_t batchSize) {
  data::LoaderOptions o;
  o.batchSize = batchSize;
  o.workers = workers;
  o.prefetchBatches = 2 * workers;
  data::DataLoader loader(set, proc, o);
  std::int64_t epoch = 0;
  loader.startEpoch(epoch);
  loader.next();  // warm up
  std::int64_t images = 0;
  const auto start = std::chrono::steady_clock::now();
  for (std::int64_t b = 0; b < batches;) {
    auto batch = loader.next();
    if (!batch) {  // a small folder: the next epoch
      loader.startEpoch(++epoch);
      continue;
    }
    images += batch->images.size(0);
    ++b;
  }
  return double(images) / seconds(start);
}

/// The project's training images/s through the trainer's own batch code (as `bench` measures).
double trainingRate(const project::Project& p, const std::string& baseDir, std::int64_t batchSize) {
  train::TrainerConfig config;
  config.registries = ::netsmith::Registries::builtins();
  config.project = p;
  config.project.train["batch_size"] = batchSize;
  config.baseDir = baseDir;
  config.writeRun = false;
  config.bench = true;
  config.benchOptions.realData = false;
  train::Trainer trainer(config);
  trainer.start();
  trainer.wait();
  const auto result = trainer.result();
  if (result.state == run::FinishState::Failed) throw Error("bench failed: " + result.reason);
  return result.bench.synthetic.imagesPerSecond();
}

void partOne(const std::string& projectPath, int hw, const augment::TransformRegistry& transforms) {
  auto loaded = project::loadProject(projectPath);
  auto pd = data::openProjectData(loaded.project, loaded.baseDir(), transforms, "");
  std::printf("1) %s: %lld training images, pipeline: %s\n", loaded.project.name.c_str(),
              (long long)pd->data.train.size(), pd->pipeline.describe().c_str());
  env::configureThreads(1);
  const double one = loaderRate(pd->data.train, *pd->processor, 1, 200, 128);
  std::printf("   loader, 1 worker:    %9.0f images/s\n", one);
  const double all = loaderRate(pd->data.train, *pd->processor, hw, 200, 128);
  std::printf("   loader, %d workers:   %9.0f images/s\n", hw, all);
  env::configureThreads(hw);
  const double train = trainingRate(loaded.project, loaded.baseDir(), 128);
  std::printf("   default CNN training (batch 128, Adam, %d threads): %.0f images/s\n", hw, train);
  std::printf("   1 worker / training = %.1fx (target >= 5x)\n\n", one / train);
}

/// 2) 224x224 RGB image folder: 256 JPEGs of 400x300 written to `dir` (kept) or to a temporary
/// folder (removed); an existing `dir` with the files is used as it is.
void partTwo(const std::string& dir, std::int64_t batches, int hw,
             const augment::TransformRegistry& transforms) {
  const bool keep = !dir.empty();
  const fs::path root =
      keep ? fs::path(dir)
           : fs::temp_directory_path() / ("netsmith-loader-bench-" + std::to_string(::getpid()));
  std::mt19937 rng(0);
  const int perClass = 64;
  for (int c = 0; c < 4; ++c) {
    fs::create_directories(root / ("class" + std::to_string(c)));
    for (int i = 0; i < perClass; ++i) {
      const fs::path file =
          root / ("class" + std::to_string(c)) / ("img" + std::to_string(i) + ".jpg");
      if (keep && fs::exists(file)) continue;
      cv::Mat img(300, 400, CV_8UC3);
      cv::randu(img, 0, 255);
      cv::GaussianBlur(img, img, cv::Size(9, 9), 3);
      cv::imwrite(file.string(), img);
    }
  }
  project::Project folder;
  folder.model.input = {3, 224, 224};
  folder.data = Json::parse(
      R"({"train": {"format": "image_folder", "root": ")" + root.string() +
      R"("}, "normalize": {"mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}})");
  folder.augment =
      Json::parse(R"([{"transform": "RandomResizedCrop"}, {"transform": "HorizontalFlip"},
                                   {"transform": "ColorJitter", "brightness": 0.4, "contrast": 0.4, "saturation": 0.4}])");
  auto fd = data::openProjectData(folder, "", transforms, "");
  std::printf("2) image folder: %lld JPEGs of 400x300 -> 3x224x224, pipeline: %s\n",
              (long long)fd->data.train.size(), fd->pipeline.describe().c_str());
  env::configureThreads(1);
  std::printf("   loader, 1 worker:    %9.0f images/s\n",
              loaderRate(fd->data.train, *fd->processor, 1, batches, 32));
  std::printf("   loader, %d workers:   %9.0f images/s\n", hw,
              loaderRate(fd->data.train, *fd->processor, hw, batches, 32));
  if (!keep) fs::remove_all(root);
}

}  // namespace

int main(int argc, char** argv) {
  std::string projectPath =
      std::string(NETSMITH_SOURCE_DIR) + "/resources/examples/fashion_mnist.netsmith.json";
  std::string jpegDir;
  bool jpegOnly = false;
  std::int64_t jpegBatches = 6;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--jpeg-dir" && i + 1 < argc) {
      jpegDir = argv[++i];
    } else if (arg == "--jpeg-only") {
      jpegOnly = true;
    } else if (arg == "--batches" && i + 1 < argc) {
      jpegBatches = std::max(1, std::atoi(argv[++i]));
    } else if (arg.rfind("--", 0) == 0) {
      std::fprintf(stderr, "loader_bench: unknown flag %s\n", arg.c_str());
      return 2;
    } else {
      projectPath = arg;
    }
  }
  const int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const auto registry = ops::OpRegistry::withBuiltins();
  const auto transforms = augment::TransformRegistry::withBuiltins();

  std::printf("Netsmith loader bench (%d hardware threads)\n\n", hw);
  if (!jpegOnly) partOne(projectPath, hw, transforms);
  partTwo(jpegDir, jpegBatches, hw, transforms);
  return 0;
}
