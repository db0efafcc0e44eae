#pragma once

// A small, learnable classification problem written as IDX files, and a project around it:
// 16x16 grey images, class c has a bright blob in quadrant c on a noisy background.
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "common/json.h"
#include "data_fixtures.h"
#include "project/project.h"
#include "registries/registries.h"
#include "run/events.h"
#include "train/trainer.h"

namespace netsmith::testutil {

/// Records every event a trainer sends (thread-safe).
class Recorder : public run::EventSink {
 public:
  void onEvent(const run::TrainingEvent& e) override {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_events.push_back(e);
  }
  std::vector<run::TrainingEvent> events() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_events;
  }
  std::vector<run::TrainingEvent> ofType(run::EventType type) const {
    std::vector<run::TrainingEvent> out;
    for (const auto& e : events())
      if (e.type == type) out.push_back(e);
    return out;
  }

 private:
  mutable std::mutex m_mutex;
  std::vector<run::TrainingEvent> m_events;
};

inline IdxData makeBlobData(int count, std::uint32_t seed) {
  IdxData d;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> noise(0, 90), jitter(0, 3);
  for (int i = 0; i < count; ++i) {
    const int label = i % 4;
    std::vector<unsigned char> img(16 * 16);
    for (auto& p : img)
      p = static_cast<unsigned char>(noise(rng));
    const int y0 = (label / 2) * 8 + jitter(rng), x0 = (label % 2) * 8 + jitter(rng);
    for (int y = y0; y < std::min(16, y0 + 5); ++y)
      for (int x = x0; x < std::min(16, x0 + 5); ++x)
        img[static_cast<std::size_t>(y * 16 + x)] = 230;
    d.images.push_back(img);
    d.labels.push_back(static_cast<unsigned char>(label));
  }
  return d;
}

/// Writes train (count) and test (count / 4) IDX files into `dir` and a project file using
/// them; `train` is merged over a small default train section. Returns the project path.
inline std::string writeTrainProject(const TempDir& dir, const Json& train = Json::object(),
                                     int count = 256, const std::string& augment = "[]",
                                     const std::string& extraNodes = "") {
  writeIdx(makeBlobData(count, 1), 16, 16, dir.file("train-images.idx"),
           dir.file("train-labels.idx"), false);
  writeIdx(makeBlobData(count / 4, 2), 16, 16, dir.file("test-images.idx"),
           dir.file("test-labels.idx"), false);
  Json t{{"epochs", 2},
         {"batch_size", 32},
         {"seed", 3},
         {"threads", 1},
         {"workers", 1},
         {"optimizer", Json{{"type", "adam"}, {"lr", 0.01}}},
         {"schedule", Json{{"type", "cosine"}}}};
  // NETSMITH_TEST_DEVICE=cuda runs the trainer tests on a GPU (bench/gpu_check.sh); a test that
  // names its own device keeps it.
  if (const char* device = std::getenv("NETSMITH_TEST_DEVICE"); device && *device)
    t["device"] = device;
  for (auto it = train.begin(); it != train.end(); ++it)
    t[it.key()] = it.value();
  const std::string path = dir.file("blobs.netsmith.json");
  std::ofstream(path) << R"({"format": "netsmith-project", "version": 1, "name": "blobs",
    "model": {"input": {"channels": 1, "height": 16, "width": 16}, "nodes": [
      {"id": "input", "op": "Input"},
      {"id": "conv", "op": "Conv2d", "params": {"out_channels": 8, "kernel_size": 3, "padding": 1},
       "inputs": ["input"]},
      {"id": "bn", "op": "BatchNorm2d", "inputs": ["conv"]},
      {"id": "relu", "op": "ReLU", "inputs": ["bn"]},
      {"id": "pool", "op": "MaxPool2d", "params": {"kernel_size": 4}, "inputs": ["relu"]},
      {"id": "flat", "op": "Flatten", "inputs": ["pool"]},
      {"id": "drop", "op": "Dropout", "params": {"p": 0.2}, "inputs": ["flat"]},
      {"id": "fc", "op": "Linear", "params": {"out_features": 4}, "inputs": ["drop"]})"
                      << extraNodes << R"(]},
    "data": {"train": {"format": "idx", "images": "train-images.idx", "labels": "train-labels.idx"},
             "validation": {"fraction": 0.25, "seed": 0},
             "test": {"format": "idx", "images": "test-images.idx", "labels": "test-labels.idx"},
             "classes": ["top-left", "top-right", "bottom-left", "bottom-right"],
             "normalize": {"mean": [0.3], "std": [0.3]}},
    "augment": )" << augment
                      << R"(, "train": )" << t.dump() << "}";
  return path;
}

/// A trainer config for the project at `projectPath` as loaded (its problems in `problems`),
/// its runs under `dir`/runs.
inline train::TrainerConfig trainerConfigFor(const std::string& projectPath, const TempDir& dir,
                                             Problems* problems = nullptr) {
  auto loaded = project::loadProject(projectPath);
  if (problems) *problems = loaded.problems;
  train::TrainerConfig c;
  c.registries = ::netsmith::Registries::builtins();
  c.project = loaded.project;
  c.baseDir = loaded.baseDir();
  c.runsRoot = dir.file("runs");
  return c;
}

}  // namespace netsmith::testutil
