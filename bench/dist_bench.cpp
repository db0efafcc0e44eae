// Data-parallel scaling on this machine: training images/s of the default Fashion-MNIST project
// with 1 process and with N local processes (torch.distributed over loopback, 1 compute thread
// and 1 loader thread each), and the scaling efficiency (images/s with N) / (N x images/s
// with 1). Global batch = batch_size x N, as in PyTorch's DistributedDataParallel.
//
//   dist_bench [--ranks N] [--batches K] [--batch-size B] [--project FILE] [--device D]
//              [--threads T] [--backend gloo|nccl] [--repeat R]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/error.h"
#include "project/project.h"
#include "registries/registries.h"
#include "train/trainer.h"

using namespace netsmith;

namespace {

/// Steady-state throughput: global images over the wall time of the batches after warm-up.
class Throughput : public run::EventSink {
 public:
  explicit Throughput(std::int64_t warmup) : m_warmup(warmup) {}
  void onEvent(const run::TrainingEvent& e) override {
    if (e.type != run::EventType::BatchEnd) return;
    std::lock_guard<std::mutex> lock(m_mutex);
    ++m_batches;
    if (m_batches == m_warmup) {
      m_start = e.time;
      return;
    }
    if (m_batches > m_warmup) {
      m_end = e.time;
      m_images += m_perBatch;  // every timed batch is full (the sample limit sees to it)
    }
  }
  void setImagesPerBatch(std::int64_t n) { m_perBatch = n; }
  double imagesPerSecond() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_end > m_start ? double(m_images) / (m_end - m_start) : 0.0;
  }

 private:
  mutable std::mutex m_mutex;
  std::int64_t m_warmup;
  std::int64_t m_batches = 0;
  std::int64_t m_images = 0;
  std::int64_t m_perBatch = 0;
  double m_start = 0, m_end = 0;
};

struct Options {
  int ranks = 2;
  std::int64_t batches = 60;
  std::int64_t batchSize = 128;
  int threads = 1;
  std::string project =
      std::string(NETSMITH_SOURCE_DIR) + "/resources/examples/fashion_mnist.netsmith.json";
  std::string device = "cpu";
  std::string backend = "auto";
  int repeat = 3;
};

train::TrainerConfig benchConfig(const Options& o, int ranks) {
  auto loaded = project::loadProject(o.project);
  auto& t = loaded.project.train;
  t["local_processes"] = ranks;
  t["threads"] = o.threads;
  t["workers"] = 1;
  t["batch_size"] = o.batchSize;
  t["device"] = o.device;
  t["dist_backend"] = o.backend;
  t["epochs"] = 1;
  t["eval_test"] = false;
  train::TrainerConfig config;
  config.registries = ::netsmith::Registries::builtins();
  config.project = loaded.project;
  config.baseDir = loaded.baseDir();
  config.writeRun = false;
  config.workerProgram = NETSMITH_CLI;
  // Enough samples for the batches asked (plus warm-up); a small validation split.
  config.limitTrain = (o.batches + 10) * o.batchSize * ranks;
  config.limitVal = 256;
  config.stopAfterBatches = o.batches + 5;
  return config;
}

/// One training on `ranks` local processes; its steady-state images/s.
double measure(const Options& o, int ranks) {
  auto sink = std::make_shared<Throughput>(5);
  sink->setImagesPerBatch(o.batchSize * ranks);
  train::Trainer trainer(benchConfig(o, ranks));
  trainer.addSink(sink);
  trainer.start();
  trainer.wait();
  const auto r = trainer.result();
  if (r.state == run::FinishState::Failed) throw Error("training failed: " + r.reason);
  return sink->imagesPerSecond();
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--ranks")
      o.ranks = std::atoi(v.c_str());
    else if (k == "--batches")
      o.batches = std::atoll(v.c_str());
    else if (k == "--batch-size")
      o.batchSize = std::atoll(v.c_str());
    else if (k == "--threads")
      o.threads = std::atoi(v.c_str());
    else if (k == "--project")
      o.project = v;
    else if (k == "--device")
      o.device = v;
    else if (k == "--repeat")
      o.repeat = std::max(1, std::atoi(v.c_str()));
    else if (k == "--backend")
      o.backend = v;
    else {
      std::fprintf(stderr, "dist_bench: unknown option %s\n", k.c_str());
      return 2;
    }
  }
  try {
    std::printf(
        "dist_bench: %s, %lld timed batches of %lld per process, %d compute thread%s "
        "per process, device %s\n",
        o.project.c_str(), (long long)o.batches, (long long)o.batchSize, o.threads,
        o.threads == 1 ? "" : "s", o.device.c_str());
    // This machine's figures vary from run to run: each configuration runs `repeat` times,
    // alternating, and the medians are compared.
    std::vector<double> ones, manys;
    for (int r = 0; r < o.repeat; ++r) {
      ones.push_back(measure(o, 1));
      manys.push_back(measure(o, o.ranks));
    }
    const auto describe = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      char buf[96];
      std::snprintf(buf, sizeof buf, "%8.0f images/s (median; %.0f-%.0f over %zu runs)",
                    v[v.size() / 2], v.front(), v.back(), v.size());
      return std::pair<double, std::string>(v[v.size() / 2], buf);
    };
    const auto [one, oneText] = describe(ones);
    const auto [many, manyText] = describe(manys);
    std::printf("1 process:   %s\n", oneText.c_str());
    std::printf("%d processes: %s, global batch %lld\n", o.ranks, manyText.c_str(),
                (long long)(o.batchSize * o.ranks));
    std::printf("speed-up %.2fx, scaling efficiency %.0f%%\n", many / one,
                100.0 * many / (double(o.ranks) * one));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dist_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
