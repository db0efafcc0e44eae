#include "train/trainer.h"

#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <filesystem>
#include <limits>
#include <random>
#include <regex>
#include <sstream>

#include "augment/sample_rng.h"
#include "augment/transform.h"
#include "checkpoint/checkpoint.h"
#include "common/error.h"
#include "common/torch_compat.h"
#include "data/data_loader.h"
#include "data/project_data.h"
#include "dist/comm.h"
#include "dist/grad_buckets.h"
#include "dist/local_launcher.h"
#include "env/env_report.h"
#include "graph/graph_module.h"
#include "netsmith/version.h"
#include "ops/op_registry.h"
#include "train/dist_worker.h"
#include "train/metrics.h"
#include "train/optimizer_factory.h"
#include "train/run_writer.h"
#include "train/train_options.h"

namespace netsmith::train {

namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t kDropoutStream = 0xD409ull << 40;
constexpr std::uint64_t kSubsetStream = 0x5B5Eull << 40;

double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string brief(double v, int precision = 4) {
  std::ostringstream ss;
  ss.precision(precision);
  ss << v;
  return ss.str();
}

/// Autocast for one forward pass (bf16 on CPU or CUDA, fp16 on CUDA).
class AutocastScope {
 public:
  AutocastScope(const std::string& amp, const torch::Device& device) {
    if (amp == "off") return;
    m_active = true;
    m_type = device.is_cuda() ? at::kCUDA : at::kCPU;
    const auto dtype = amp == "fp16" ? at::kHalf : at::kBFloat16;
#if NETSMITH_TORCH_AT_LEAST(2, 4)
    at::autocast::set_autocast_enabled(m_type, true);
    at::autocast::set_autocast_dtype(m_type, dtype);
#else
    if (m_type == at::kCUDA) {
      at::autocast::set_enabled(true);
      at::autocast::set_autocast_gpu_dtype(dtype);
    } else {
      at::autocast::set_cpu_enabled(true);
      at::autocast::set_autocast_cpu_dtype(dtype);
    }
#endif
    at::autocast::increment_nesting();
  }
  ~AutocastScope() {
    if (!m_active) return;
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
#if NETSMITH_TORCH_AT_LEAST(2, 4)
    at::autocast::set_autocast_enabled(m_type, false);
#else
    if (m_type == at::kCUDA)
      at::autocast::set_enabled(false);
    else
      at::autocast::set_cpu_enabled(false);
#endif
  }
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool m_active = false;
  at::DeviceType m_type = at::kCPU;
};

/// A fingerprint of the model's structure (ops, parameters, wiring; not editor positions), so
/// a resume can refuse a checkpoint of another model.
std::string modelSignature(const graph::ModelGraph& model) {
  Json j = graph::modelToJson(model);
  if (j.contains("nodes")) {
    for (auto& n : j["nodes"])
      n.erase("pos");
  }
  const std::string text = j.dump();
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace

/// The loop's position and running figures: all of it goes into a checkpoint, so a resumed
/// run continues exactly.
struct LoopState {
  std::int64_t epoch = 0;      ///< the epoch in progress
  std::int64_t nextBatch = 0;  ///< the next batch of that epoch
  std::int64_t step = 0;       ///< optimizer steps taken
  double lossSum = 0;          ///< this epoch so far (sum over samples)
  std::int64_t correct = 0;
  std::int64_t seen = 0;
  double epochSeconds = 0;
  std::map<std::string, double> normSums;
  std::int64_t normSteps = 0;
  double lrFactor = 1.0;  ///< from ReduceLROnPlateau
  Json plateau = Json::object();
  bool esHasBest = false;
  double esBest = 0;
  std::int64_t esBadEpochs = 0;
  bool hasBest = false;
  double best = 0;
  std::int64_t bestEpoch = -1;
  double lossScale = 65536.0;
  std::int64_t scaleGrowth = 0;
  std::int64_t skippedSteps = 0;

  Json toJson() const {
    return Json{{"epoch", epoch},
                {"next_batch", nextBatch},
                {"step", step},
                {"epoch_loss_sum", lossSum},
                {"epoch_correct", correct},
                {"epoch_seen", seen},
                {"epoch_seconds", epochSeconds},
                {"epoch_grad_norm_sums", normSums},
                {"epoch_grad_norm_steps", normSteps},
                {"lr_factor", lrFactor},
                {"plateau", plateau},
                {"early_stopping",
                 Json{{"has_best", esHasBest}, {"best", esBest}, {"bad_epochs", esBadEpochs}}},
                {"best", Json{{"has", hasBest}, {"value", best}, {"epoch", bestEpoch}}},
                {"loss_scaler", Json{{"scale", lossScale}, {"growth_tracker", scaleGrowth}}},
                {"skipped_steps", skippedSteps}};
  }
  void fromJson(const Json& j) {
    epoch = j.at("epoch").get<std::int64_t>();
    nextBatch = j.at("next_batch").get<std::int64_t>();
    step = j.at("step").get<std::int64_t>();
    lossSum = j.at("epoch_loss_sum").get<double>();
    correct = j.at("epoch_correct").get<std::int64_t>();
    seen = j.at("epoch_seen").get<std::int64_t>();
    epochSeconds = j.at("epoch_seconds").get<double>();
    normSums = j.at("epoch_grad_norm_sums").get<std::map<std::string, double>>();
    normSteps = j.at("epoch_grad_norm_steps").get<std::int64_t>();
    lrFactor = j.at("lr_factor").get<double>();
    plateau = j.at("plateau");
    const auto& es = j.at("early_stopping");
    esHasBest = es.at("has_best").get<bool>();
    esBest = es.at("best").get<double>();
    esBadEpochs = es.at("bad_epochs").get<std::int64_t>();
    const auto& b = j.at("best");
    hasBest = b.at("has").get<bool>();
    best = b.at("value").get<double>();
    bestEpoch = b.at("epoch").get<std::int64_t>();
    lossScale = j.at("loss_scaler").at("scale").get<double>();
    scaleGrowth = j.at("loss_scaler").at("growth_tracker").get<std::int64_t>();
    skippedSteps = j.value("skipped_steps", std::int64_t(0));
  }
};

/// Thrown inside the loop to end the run with a state and a reason.
struct RunEnd {
  FinishState state;
  std::string reason;
};

// The body of a run, on the trainer thread.
struct TrainerLoop {
  Trainer& trainer;
  const TrainerConfig& config;
  TrainOptions opt;
  ops::OpRegistry registry = ops::OpRegistry::withBuiltins();
  augment::TransformRegistry transforms = augment::TransformRegistry::withBuiltins();
  std::unique_ptr<data::ProjectData> pd;
  torch::Device device{torch::kCPU};
  graph::GraphModule net{nullptr};
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  std::unique_ptr<data::DataLoader> trainLoader, valLoader, testLoader;
  std::int64_t numClasses = 0;
  std::int64_t batchesPerEpoch = 0;
  RunPlan plan;
  torch::Tensor classWeights;
  std::unique_ptr<PlateauController> plateau;
  LoopState s;
  std::deque<double> recentNorms;
  std::string runDir, checkpointDir, signature;
  std::vector<torch::Tensor> params;
  std::vector<std::string> paramNodes;  // node id of each entry of `params`
  std::int64_t batchesThisSession = 0;
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  TrainResult result;
  // Data parallelism (absent in a single process). The launcher outlives the process group.
  std::unique_ptr<dist::LocalLauncher> launcher;
  std::unique_ptr<dist::Comm> comm;
  std::unique_ptr<dist::GradBuckets> buckets;
  std::string workerSpecDir;
  bool syncBatchNorm = false;
  bool bucketsReported = false;
  int rank = 0, worldSize = 1;

  TrainerLoop(Trainer& t, const TrainerConfig& c) : trainer(t), config(c) {}
  ~TrainerLoop() {
    // Closing the process group first ends the others' exchanges at once after a failure
    // here; then they have a moment to exit before they are terminated.
    buckets.reset();
    comm.reset();
    if (launcher) launcher->finish(0.5);
    launcher.reset();
    if (!workerSpecDir.empty()) {
      std::error_code ec;
      fs::remove_all(workerSpecDir, ec);
    }
  }

  /// Sums `values` over the ranks (a no-op in a single process).
  void exchange(std::vector<double>& values, const std::string& what) {
    if (!comm) return;
    std::vector<torch::Tensor> t{torch::tensor(values, torch::kDouble).to(device)};
    comm->allreduceSum(t, what);
    const auto back = t[0].to(torch::kCPU).contiguous();
    for (std::size_t i = 0; i < values.size(); ++i)
      values[i] = back.data_ptr<double>()[i];
  }

  /// True when any rank says true (every rank gets the same answer).
  bool anyRank(bool mine, const std::string& what) {
    std::vector<double> v{mine ? 1.0 : 0.0};
    exchange(v, what);
    return v[0] > 0;
  }

  /// Joins (or starts) the data-parallel job this process belongs to.
  void setupDistributed() {
    dist::DistEnv env = config.dist;
    if (!env.distributed() && (config.lrFind || opt.fastDevRun)) {
      // Single-process jobs by nature: train.local_processes does not apply.
      if (opt.processes > 1)
        log(std::string(config.lrFind ? "the LR range test" : "fast_dev_run") +
            " runs in one process (train.local_processes is " + std::to_string(opt.processes) +
            ")");
      return;
    }
    bool spawn = false;
    if (opt.processes > 1 && !env.distributed()) {
      env.worldSize = env.localWorldSize = opt.processes;
      env.rank = env.localRank = 0;
      env.masterAddr = "127.0.0.1";
      env.pickFreePort = true;
      env.launcher = "netsmith";
      spawn = true;
      if (config.workerProgram.empty())
        throw Error("train.local_processes is " + std::to_string(opt.processes) +
                    ", but netsmith-cli, which runs the other processes, was not found (it "
                    "is installed beside the studio)");
    } else if (opt.processes > 1 && env.launcher != "netsmith" && env.worldSize != opt.processes) {
      throw Error("train.local_processes is " + std::to_string(opt.processes) + " but " +
                  env.launcher + " started this process as rank " + std::to_string(env.rank) +
                  " of " + std::to_string(env.worldSize) +
                  "; under a launcher set train.local_processes to 1 (the launcher decides)");
    }
    if (!env.distributed()) return;
    if (config.lrFind || opt.fastDevRun)
      throw Error(std::string(config.lrFind ? "lr-find" : "train.fast_dev_run") +
                  " runs in one process; start it without " + env.launcher);
    if (device.is_cuda() && !device.has_index())
      device = torch::Device(torch::kCUDA, env.localRank);
    comm = std::make_unique<dist::Comm>(env, opt.distBackend, device, opt.distTimeout);
    if (spawn) {
      env.masterPort = comm->storePort();
      workerSpecDir = (fs::temp_directory_path() / ("netsmith-dist-" + std::to_string(::getpid()) +
                                                    "-" + std::to_string(env.masterPort)))
                          .string();
      fs::create_directories(workerSpecDir);
      const std::string spec = (fs::path(workerSpecDir) / "worker.json").string();
      TrainerConfig forWorkers = config;
      forWorkers.project.train["local_processes"] = opt.processes;
      writeWorkerSpec(forWorkers, spec);
      launcher = std::make_unique<dist::LocalLauncher>();
      launcher->start(config.workerProgram, {"dist-worker", spec}, env);
      comm->setFailureHint([this] { return launcher ? launcher->failures(0.3) : std::string(); });
      std::string pids;
      for (const auto& c : launcher->poll())
        pids += (pids.empty() ? "" : ", ") + std::to_string(c.pid);
      log("started " + std::to_string(env.worldSize - 1) + " local process" +
          (env.worldSize > 2 ? "es" : "") + " for ranks 1-" + std::to_string(env.worldSize - 1) +
          " (pid " + pids + ")");
    }
    comm->connect();
    rank = comm->rank();
    worldSize = comm->size();
    result.rank = rank;
    result.worldSize = worldSize;
    char bucket[32];
    std::snprintf(bucket, sizeof bucket, "%g", opt.distBucketMb);
    log("distributed: world size " + std::to_string(worldSize) + ", rank " + std::to_string(rank) +
        ", backend " + comm->backendName() + ", rendezvous " + env.masterAddr + ":" +
        std::to_string(comm->storePort()) + " (" + env.launcher + "); batch_size " +
        std::to_string(opt.batchSize) + " per process, global batch " +
        std::to_string(opt.batchSize * worldSize) + "; gradient buckets of " + bucket + " MB");
  }

  /// Broadcasts rank 0's parameters and buffers (at start, and after a resume).
  void broadcastModel(const std::string& what, bool buffersOnly = false) {
    if (!comm) return;
    torch::NoGradGuard noGrad;
    std::vector<torch::Tensor> ts;
    if (!buffersOnly) {
      for (auto& p : net->parameters())
        ts.push_back(p.data());
    }
    for (auto& b : net->buffers())
      ts.push_back(b);
    comm->broadcast(ts, what);
  }

  /// Validation and test figures of every rank's share, summed into one.
  EvalMetrics reduceMetrics(const EvalMetrics& m) {
    if (!comm) return m;
    std::vector<double> v;
    v.reserve(static_cast<std::size_t>(numClasses * numClasses + 1));
    for (std::int64_t t = 0; t < numClasses; ++t) {
      for (std::int64_t q = 0; q < numClasses; ++q) {
        const bool has = t < std::int64_t(m.confusion.size()) &&
                         q < std::int64_t(m.confusion[std::size_t(t)].size());
        v.push_back(has ? double(m.confusion[std::size_t(t)][std::size_t(q)]) : 0.0);
      }
    }
    v.push_back(m.samples ? m.loss * double(m.samples) : 0.0);
    exchange(v, "the evaluation figures");
    std::vector<std::int64_t> counts(v.size() - 1);
    for (std::size_t i = 0; i + 1 < v.size(); ++i)
      counts[i] = std::llround(v[i]);
    return ConfusionCounter(numClasses, std::move(counts)).metrics(v.back());
  }

  double elapsed() const { return secondsSince(t0); }

  void log(const std::string& message, const std::string& level = "info") {
    TrainingEvent e;
    e.type = level == "warning" ? EventType::Warning : EventType::Log;
    e.level = level;
    e.message = message;
    trainer.publish(std::move(e));
  }

  void prepare() {
    Problems problems;
    opt = parseTrainOptions(config.project.train, ScheduleRegistry::withBuiltins(), problems);
    if (!problems.empty())
      throw Error("the train section has problems:\n" + formatProblems(problems));
    device = resolveDevice(opt.device);
    setupDistributed();
    if (opt.amp == "fp16" && !device.is_cuda()) {
      throw Error("train.amp is \"fp16\", which needs a CUDA device (train.device is \"" +
                  opt.device + "\"); use \"bf16\" on CPU, or \"off\"");
    }

    // Threads: the loader's workers first (a quarter of the cores, 1 to 8), compute threads on
    // the cores they leave. With two cores or fewer the loader shares them: it is idle most of
    // the time (one worker prepares ~75,000 Fashion-MNIST images/s against ~1,000 trained).
    // Local ranks share the machine's cores.
    const int localRanks = comm ? std::max(1, comm->env().localWorldSize) : 1;
    const int hw = std::max(
        1, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())) / localRanks);
    const int workers = opt.workers > 0 ? opt.workers : std::clamp(hw / 4, 1, 8);
    const int threads = opt.threads > 0 ? opt.threads : (hw <= 2 ? hw : std::max(1, hw - workers));
    env::configureThreads(threads);
    if (opt.deterministic) at::globalContext().setDeterministicAlgorithms(true, false);
    log("device " + device.str() + ", " + std::to_string(threads) + " compute thread" +
        (threads == 1 ? "" : "s") + ", " + std::to_string(workers) + " loader thread" +
        (workers == 1 ? "" : "s") + (opt.deterministic ? ", deterministic" : ""));

    // Data.
    log("opening data");
    pd = data::openProjectData(config.project, config.baseDir, transforms, config.cacheDir,
                               [this](std::int64_t, std::int64_t) { return !trainer.m_stopNow; });
    if (!pd) throw RunEnd{FinishState::Stopped, "stopped while computing data statistics"};
    for (const auto& item : pd->data.skippedAtScan())
      log("skipped " + item.item + ": " + item.reason, "warning");
    auto& d = pd->data;
    numClasses = d.numClasses();
    limitSet(d.train, config.limitTrain);
    limitSet(d.validation, config.limitVal);
    limitSet(d.test, config.limitVal);
    if (d.train.empty()) throw Error("data.train: no training samples");
    if (opt.overfitBatches > 0) {
      d.train.indices.resize(static_cast<std::size_t>(
          std::min<std::int64_t>(d.train.size(), opt.overfitBatches * opt.batchSize * worldSize)));
      d.validation = d.train;
      d.validation.name = "validation";
      log("overfit_batches: training and validating on the same " + std::to_string(d.train.size()) +
          " samples");
    }
    if (opt.dropLast && opt.batchSize * worldSize > d.train.size()) {
      throw Error("train.batch_size " + std::to_string(opt.batchSize) +
                  (worldSize > 1 ? " x " + std::to_string(worldSize) + " processes" : "") +
                  " is larger than the " + std::to_string(d.train.size()) +
                  " training samples and train.drop_last is true: no batch would be trained; "
                  "lower the batch size or turn drop_last off");
    }

    // Model.
    torch::manual_seed(opt.seed);
    net = graph::GraphModule(config.project.model, registry);
    const auto& out = net->analysis().outputShape;
    if (out.size() != 1) {
      throw Error("the model's output is " + formatShape(out) +
                  "; a classifier needs one score per class (end with Linear or Flatten)");
    }
    if (out[0] < numClasses) {
      throw Error("the data has " + std::to_string(numClasses) + " classes but the model outputs " +
                  std::to_string(out[0]) + " scores; set the last Linear's out_features to " +
                  std::to_string(numClasses));
    }
    numClasses = std::max<std::int64_t>(numClasses, out[0]);
    net->to(device);
    if (opt.channelsLast) {
      for (auto& p : net->parameters()) {
        if (p.dim() == 4) p.set_data(p.contiguous(torch::MemoryFormat::ChannelsLast));
      }
    }
    if (!config.initFromPath.empty()) initFrom();
    for (const auto& item : net->named_parameters()) {
      if (!item.value().requires_grad()) continue;
      params.push_back(item.value());
      paramNodes.push_back(item.key().substr(0, item.key().find('.')));
    }
    optimizer = makeOptimizer(opt.optimizer, net->named_parameters());
    signature = modelSignature(config.project.model);

    // Loaders.
    data::LoaderOptions lo;
    lo.batchSize = opt.batchSize;
    lo.workers = workers;
    lo.seed = opt.seed;
    lo.onError = d.config.onError;
    lo.numClasses = numClasses;
    lo.channelsLast = opt.channelsLast;
    lo.pinMemory = device.is_cuda();
    lo.dropLast = opt.dropLast;
    lo.shuffle = opt.overfitBatches == 0;
    lo.mixes = pd->pipeline.batchMixes();
    lo.rank = rank;
    lo.worldSize = worldSize;
    trainLoader = std::make_unique<data::DataLoader>(d.train, *pd->processor, lo);
    data::LoaderOptions eo = lo;
    eo.training = false;
    eo.shuffle = false;
    eo.dropLast = false;
    eo.mixes.clear();
    if (!d.validation.empty())
      valLoader = std::make_unique<data::DataLoader>(d.validation, *pd->processor, eo);
    if (!d.test.empty() && opt.evalTest && !opt.fastDevRun)
      testLoader = std::make_unique<data::DataLoader>(d.test, *pd->processor, eo);

    batchesPerEpoch = trainLoader->batchesPerEpoch();
    if (opt.fastDevRun) {
      batchesPerEpoch = 1;
      opt.epochs = 1;
    }
    plan.epochs = opt.epochs;
    plan.stepsPerEpoch = (batchesPerEpoch + opt.gradAccumulation - 1) / opt.gradAccumulation;

    if (opt.classWeights != "none") {
      std::vector<double> w(static_cast<std::size_t>(numClasses), 1.0);
      if (opt.classWeights == "auto") {
        const auto counts = data::classCounts(d.train, numClasses);
        for (std::size_t c = 0; c < w.size(); ++c) {
          w[c] = counts[c] ? double(d.train.size()) / double(numClasses * counts[c]) : 0.0;
        }
      } else {
        if (static_cast<std::int64_t>(opt.classWeightValues.size()) != numClasses) {
          throw Error("train.class_weights has " + std::to_string(opt.classWeightValues.size()) +
                      " values but there are " + std::to_string(numClasses) + " classes");
        }
        w = opt.classWeightValues;
      }
      classWeights = torch::tensor(w, torch::kFloat).to(device);
    }
    if (opt.plateau.enabled) plateau = std::make_unique<PlateauController>(opt.plateau.controller);

    if (!config.resumePath.empty()) resumeFrom();
    if (comm) {
      broadcastModel("the initial weights");
      buckets = std::make_unique<dist::GradBuckets>(*comm, params, opt.distBucketMb);
      if (opt.syncBatchNorm) {
        auto* c = comm.get();
        const int users = net->setCrossProcessSum(
            [c](const torch::Tensor& t) { return dist::allreduceSumAutograd(*c, t); });
        syncBatchNorm = users > 0;
        log("BatchNorm statistics synchronised across processes (" + std::to_string(users) +
            " layer" + (users == 1 ? "" : "s") + ")");
      }
    }

    // The run folder (after everything that can reject the input). Only rank 0 writes one.
    if (config.writeRun && !config.lrFind && rank == 0) {
      runDir = config.runDir;
      if (runDir.empty()) {
        runDir = createRunFolder(config.runsRoot, config.project.name,
                                 project::projectToJson(config.project));
      } else {
        std::error_code ec;
        fs::create_directories(fs::path(runDir) / "checkpoints", ec);
        fs::create_directories(fs::path(runDir) / "exports", ec);
        if (ec) throw Error(runDir + ": cannot create the run folder (" + ec.message() + ")");
      }
      checkpointDir = (fs::path(runDir) / "checkpoints").string();
      trainer.attachRunWriter(runDir);
    }
  }

  void limitSet(data::SampleSet& set, std::int64_t limit) {
    if (limit <= 0 || set.size() <= limit) return;
    // A seeded subset, in source order: every class keeps its share on average.
    std::mt19937_64 rng(augment::mixSeed(opt.seed ^ kSubsetStream, 0, 0));
    std::shuffle(set.indices.begin(), set.indices.end(), rng);
    set.indices.resize(static_cast<std::size_t>(limit));
    std::sort(set.indices.begin(), set.indices.end());
  }

  void initFrom() {
    checkpoint::NamedTensors tensors;
    try {
      tensors = checkpoint::readCheckpoint(config.initFromPath).model;
    } catch (const Error&) {
      // A plain safetensors file of weights (an export) is fine too.
      tensors = checkpoint::readSafetensors(config.initFromPath).tensors;
    }
    torch::NoGradGuard noGrad;
    const auto report = checkpoint::loadModuleState(*net, tensors);
    result.initReport = report.summary();
    log("initialised from " + config.initFromPath + ": " + report.summary());
    if (report.loaded.empty()) {
      throw Error(config.initFromPath +
                  ": no tensor matches this model by name and shape; nothing to initialise from");
    }
  }

  void resumeFrom() {
    const auto data = checkpoint::readCheckpoint(config.resumePath);
    const std::string theirs = data.meta.value("model_signature", "");
    if (theirs != signature) {
      throw Error(config.resumePath + ": a checkpoint of another model (" +
                  data.meta.value("project_name", std::string("unknown project")) +
                  "); --resume continues the same model, --init-from loads matching weights");
    }
    torch::NoGradGuard noGrad;
    const auto report = checkpoint::loadModuleState(*net, data.model);
    if (!report.complete())
      throw Error(config.resumePath + ": does not fit this model: " + report.summary());
    if (data.meta.value("optimizer", "") != opt.optimizer.type) {
      throw Error(config.resumePath + ": written with optimizer \"" +
                  data.meta.value("optimizer", "") + "\" but train.optimizer.type is \"" +
                  opt.optimizer.type + "\"");
    }
    checkpoint::restoreOptimizerState(*optimizer, opt.optimizer.type, *net, data.optimizer);
    try {
      s.fromJson(data.meta.at("loop"));
    } catch (const std::exception& e) {
      throw Error(config.resumePath + ": corrupt loop state in the checkpoint (" + e.what() + ")");
    }
    if (plateau && !s.plateau.empty()) plateau->restore(s.plateau);
    if (s.epoch >= opt.epochs) {
      throw Error(config.resumePath + ": the run already finished its " +
                  std::to_string(opt.epochs) + " epochs; raise --epochs to train further");
    }
    log("resumed from " + config.resumePath + " at epoch " + std::to_string(s.epoch + 1) +
        ", batch " + std::to_string(s.nextBatch) + ", step " + std::to_string(s.step));
  }

  std::string writeCheckpointFile(const std::string& tag, const Json& metrics) {
    if (checkpointDir.empty() || opt.fastDevRun) return {};
    checkpoint::CheckpointData data;
    if (plateau) s.plateau = plateau->state();
    data.meta = Json{
        {"project_name", config.project.name},
        {"project", project::projectToJson(config.project)},
        {"base_dir",
         fs::absolute(config.baseDir.empty() ? "." : config.baseDir).lexically_normal().string()},
        {"model_signature", signature},
        {"optimizer", opt.optimizer.type},
        {"epoch", s.epoch},
        {"step", s.step},
        {"loop", s.toJson()},
        {"schedule", Json{{"type", opt.schedule.type()},
                          {"base_lr", opt.schedule.baseLr()},
                          {"epochs", plan.epochs},
                          {"steps_per_epoch", plan.stepsPerEpoch}}},
        {"rng", Json{{"seed", opt.seed},
                     {"scheme",
                      "per-batch: torch seeded from (seed, epoch, batch); "
                      "augmentation from (seed, epoch, sample)"}}},
        {"data_order", Json{{"seed", opt.seed},
                            {"epoch", s.epoch},
                            {"next_batch", s.nextBatch},
                            {"batches_per_epoch", batchesPerEpoch}}},
        {"classes", pd->data.classes},
        {"normalization", Json{{"mean", pd->normalization.mean}, {"std", pd->normalization.std}}},
        {"metrics", metrics},
        {"versions", Json{{"netsmith", NETSMITH_VERSION}, {"libtorch", compat::torchVersion()}}}};
    data.model = checkpoint::moduleState(*net);
    data.optimizer = checkpoint::optimizerState(*optimizer, opt.optimizer.type, *net);
    const std::string path = (fs::path(checkpointDir) / (tag + ".safetensors")).string();
    checkpoint::writeCheckpoint(path, data);  // atomic: the previous file stays on failure
    TrainingEvent e;
    e.type = EventType::Checkpoint;
    e.path = path;
    e.tag = tag;
    e.epoch.epoch = s.epoch;
    trainer.publish(std::move(e));
    if (tag == "last") result.lastCheckpoint = path;
    if (tag == "best") result.bestCheckpoint = path;
    return path;
  }

  void pruneEpochCheckpoints() {
    std::vector<std::pair<std::int64_t, fs::path>> found;
    const std::regex pattern("epoch-([0-9]+)\\.safetensors");
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(checkpointDir, ec)) {
      std::smatch m;
      const std::string name = entry.path().filename().string();
      if (std::regex_match(name, m, pattern)) found.emplace_back(std::stoll(m[1]), entry.path());
    }
    std::sort(found.begin(), found.end());
    while (static_cast<std::int64_t>(found.size()) > opt.keepCheckpoints) {
      fs::remove(found.front().second, ec);
      found.erase(found.begin());
    }
  }

  bool stopAgreed = false;  // from the last batch exchange
  bool pauseAgreed = false;

  /// Pause and stop in a data-parallel job: every rank pauses and stops together. While any
  /// rank is paused they all keep exchanging a heartbeat, so no one's timeout runs out.
  bool agreedStop() {
    if (pauseAgreed && !stopAgreed) {
      trainer.m_state = RunState::Paused;
      log("paused");
      const auto pausedAt = std::chrono::steady_clock::now();
      for (;;) {
        {
          std::unique_lock<std::mutex> lock(trainer.m_pauseMutex);
          trainer.m_pauseCv.wait_for(lock, std::chrono::milliseconds(200),
                                     [&] { return !trainer.m_paused || trainer.m_stopNow; });
        }
        std::vector<double> v{trainer.m_paused ? 1.0 : 0.0, trainer.m_stopNow ? 1.0 : 0.0};
        exchange(v, "the pause heartbeat");
        if (v[1] > 0) {
          stopAgreed = true;
          break;
        }
        if (v[0] == 0) break;
      }
      t0 += std::chrono::steady_clock::now() - pausedAt;
      trainer.m_state = RunState::Running;
      log("resumed");
    }
    return stopAgreed;
  }

  /// Pause and stop, between batches.
  bool shouldStopNow() {
    if (trainer.m_paused && !trainer.m_stopNow) {
      trainer.m_state = RunState::Paused;
      log("paused");
      const auto pausedAt = std::chrono::steady_clock::now();
      std::unique_lock<std::mutex> lock(trainer.m_pauseMutex);
      trainer.m_pauseCv.wait(lock, [&] { return !trainer.m_paused || trainer.m_stopNow; });
      t0 += std::chrono::steady_clock::now() - pausedAt;  // paused time is not run time
      trainer.m_state = RunState::Running;
      log("resumed");
    }
    return trainer.m_stopNow ||
           (config.stopAfterBatches > 0 && batchesThisSession >= config.stopAfterBatches);
  }

  [[noreturn]] void watchdog(const std::string& what, double value, double lr) {
    std::string norms;
    for (double n : recentNorms)
      norms += (norms.empty() ? "" : ", ") + brief(n);
    const std::string message = "non-finite " + what + " (" + brief(value) + ") at step " +
                                std::to_string(s.step + 1) + " (epoch " +
                                std::to_string(s.epoch + 1) + ", batch " +
                                std::to_string(s.nextBatch + 1) + "), learning rate " + brief(lr) +
                                "; recent gradient norms: " + (norms.empty() ? "none yet" : norms) +
                                ". Lower the learning rate (train.optimizer.lr) or clip gradients "
                                "(train.clip_grad_norm), or set train.nan_policy to \"skip\"";
    optimizer->zero_grad();
    std::string where;
    try {
      where = writeCheckpointFile("last", Json::object());
    } catch (const Error& e) {
      log(std::string("could not write the checkpoint before stopping: ") + e.what(), "warning");
    }
    throw RunEnd{FinishState::Failed,
                 message + (where.empty() ? "" : "; the state before this step is in " + where)};
  }

  double currentLr() const {
    double lr = opt.schedule.lrAt(
                    std::min(s.step, std::max<std::int64_t>(0, plan.totalSteps() - 1)), plan) *
                s.lrFactor;
    if (opt.plateau.enabled && s.lrFactor < 1.0) lr = std::max(lr, opt.plateau.controller.minLr);
    return lr;
  }

  // One optimizer step after the group's backward passes. Returns false when skipped.
  bool optimizerStep(double& gradNorm, double lr) {
    const bool scaling = opt.amp == "fp16";
    std::vector<torch::Tensor> norms;
    std::vector<std::size_t> which;
    for (std::size_t i = 0; i < params.size(); ++i) {
      auto& g = params[i].mutable_grad();
      if (!g.defined()) continue;
      if (scaling) g.div_(s.lossScale);
      norms.push_back(g.detach().norm(2).to(torch::kFloat));
      which.push_back(i);
    }
    gradNorm = 0;
    std::map<std::string, double> nodeSq;
    if (!norms.empty()) {
      const auto all = torch::stack(norms).to(torch::kCPU, torch::kDouble).contiguous();
      const double* v = all.data_ptr<double>();
      for (std::size_t k = 0; k < which.size(); ++k) {
        gradNorm += v[k] * v[k];
        nodeSq[paramNodes[which[k]]] += v[k] * v[k];
      }
      gradNorm = std::sqrt(gradNorm);
    }
    if (!std::isfinite(gradNorm)) {
      if (scaling) {  // the loss scaler's normal business: skip, shrink the scale
        optimizer->zero_grad();
        s.lossScale = std::max(1.0, s.lossScale * 0.5);
        s.scaleGrowth = 0;
        ++s.skippedSteps;
        return false;
      }
      if (opt.nanPolicy == "skip") {
        optimizer->zero_grad();
        ++s.skippedSteps;
        log("skipped step " + std::to_string(s.step + 1) + ": non-finite gradient norm (lr " +
                brief(lr) + ")",
            "warning");
        return false;
      }
      watchdog("gradient norm", gradNorm, lr);
    }
    recentNorms.push_back(gradNorm);
    if (recentNorms.size() > 5) recentNorms.pop_front();
    for (const auto& [node, sq] : nodeSq)
      s.normSums[node] += std::sqrt(sq);
    ++s.normSteps;
    torch::NoGradGuard noGrad;
    if (opt.clipGradValue > 0) {
      for (auto& p : params) {
        if (p.grad().defined()) p.mutable_grad().clamp_(-opt.clipGradValue, opt.clipGradValue);
      }
    }
    if (opt.clipGradNorm > 0 && gradNorm > opt.clipGradNorm) {
      const double coef = opt.clipGradNorm / (gradNorm + 1e-6);
      for (auto& p : params) {
        if (p.grad().defined()) p.mutable_grad().mul_(coef);
      }
    }
    setLearningRate(*optimizer, lr);
    optimizer->step();
    optimizer->zero_grad();
    ++s.step;
    if (scaling && ++s.scaleGrowth >= 2000) {
      s.lossScale *= 2;
      s.scaleGrowth = 0;
    }
    return true;
  }

  /// Trains the rest of the current epoch. Returns false when the run was stopped.
  bool trainEpoch() {
    net->train();
    const auto epochStart = std::chrono::steady_clock::now();
    const double secondsBefore = s.epochSeconds;
    trainLoader->startEpoch(s.epoch, s.nextBatch);
    std::deque<std::pair<double, std::int64_t>> window;  // (time, images) for images/s
    auto last = std::chrono::steady_clock::now();
    double gradNorm = recentNorms.empty() ? std::nan("") : recentNorms.back();
    bool groupHasBadBatch = false;
    while (s.nextBatch < batchesPerEpoch) {
      auto batch = trainLoader->next();
      if (!batch) break;
      for (const auto& w : trainLoader->takeWarnings())
        log("skipped " + w.item + ": " + w.reason, "warning");
      const std::int64_t b = s.nextBatch;
      const std::int64_t groupStart = (b / opt.gradAccumulation) * opt.gradAccumulation;
      const std::int64_t groupSize = std::min(opt.gradAccumulation, batchesPerEpoch - groupStart);
      const bool boundary = b + 1 == groupStart + groupSize;
      const double lr = currentLr();

      // Dropout draws from (seed, epoch, batch), and from the rank in a data-parallel job.
      torch::manual_seed(augment::mixSeed(opt.seed ^ kDropoutStream ^ (std::uint64_t(rank) << 32),
                                          static_cast<std::uint64_t>(s.epoch),
                                          static_cast<std::uint64_t>(b)));
      const auto images = batch->images.to(device, /*non_blocking=*/true);
      const auto labels = batch->labels.to(device, /*non_blocking=*/true);
      const auto targets = batch->targets.defined() ? batch->targets.to(device) : torch::Tensor();
      const std::int64_t n = labels.size(0);
      // A data-parallel share can be empty (the last global batch has fewer samples than
      // processes). It still runs the model when BatchNorm is synchronised, so that its
      // collectives match the other ranks'.
      const bool empty = n == 0;
      torch::Tensor logits, loss;
      if (!empty || syncBatchNorm) {
        AutocastScope autocast(opt.amp, device);
        logits = net->forward(images);
      }
      if (!empty)
        loss = classificationLoss(logits, labels, targets, opt.labelSmoothing, classWeights);
      else if (logits.defined())
        loss = logits.sum() * 0.0;
      const double lossValue = empty ? 0.0 : loss.item<double>();
      const std::int64_t correct =
          empty ? 0 : logits.argmax(1).eq(labels).sum().item<std::int64_t>();
      const bool bad = !std::isfinite(lossValue);
      // The batch across every rank: [loss x n, correct, n, bad, stop, pause]. In a single
      // process this is the batch itself.
      const bool stopAsked =
          bool(trainer.m_stopNow) ||
          (config.stopAfterBatches > 0 && batchesThisSession + 1 >= config.stopAfterBatches);
      std::vector<double> all{bad ? 0.0 : lossValue * double(n),
                              double(correct),
                              bad ? 0.0 : double(n),
                              bad ? 1.0 : 0.0,
                              stopAsked ? 1.0 : 0.0,
                              trainer.m_paused ? 1.0 : 0.0};
      exchange(all, "the batch figures");
      const bool anyBad = all[3] > 0;
      const double globalSeen = all[2];
      bool skipped = false;
      if (anyBad) {
        const double badValue = bad ? lossValue : std::nan("");
        if (opt.nanPolicy != "skip") watchdog("loss", badValue, lr);
        log("skipped batch " + std::to_string(b + 1) + " of epoch " + std::to_string(s.epoch + 1) +
                ": non-finite loss" + (worldSize > 1 ? " on a process" : "") + " (lr " + brief(lr) +
                ")",
            "warning");
        skipped = true;
        groupHasBadBatch = true;
        ++s.skippedSteps;
      } else {
        const bool syncNow = buckets && boundary && !groupHasBadBatch;
        if (syncNow) buckets->arm();
        if (loss.defined()) {
          // Each rank's mean loss weighs by its share of the global batch: the summed
          // gradients are those of the global batch's mean loss.
          const double share = globalSeen > 0 ? double(n) / globalSeen : 0.0;
          auto scaled = (comm ? loss * share : loss) / double(groupSize);
          if (opt.amp == "fp16") scaled = scaled * s.lossScale;
          scaled.backward();
        }
        if (syncNow) {
          buckets->finish();
          if (!bucketsReported) {
            bucketsReported = true;
            log("gradient all-reduce: " + std::to_string(buckets->bucketCount()) + " bucket" +
                (buckets->bucketCount() == 1 ? "" : "s") + ", " +
                std::to_string(buckets->startedEarly()) + " started during the backward pass");
          }
        }
      }
      const std::int64_t seenNow = static_cast<std::int64_t>(std::llround(globalSeen));
      const std::int64_t correctNow = static_cast<std::int64_t>(std::llround(all[1]));
      const double batchLoss =
          comm ? (globalSeen > 0 ? all[0] / globalSeen : std::nan("")) : lossValue;
      if (!skipped) {
        s.lossSum += comm ? all[0] : lossValue * double(n);
        s.correct += correctNow;
        s.seen += seenNow;
      }
      if (boundary) {
        if (groupHasBadBatch) {  // nan_policy "skip": no step on a group with a bad batch
          optimizer->zero_grad();
          skipped = true;
        } else if (!optimizerStep(gradNorm, lr)) {
          skipped = true;
        }
        groupHasBadBatch = false;
      }
      stopAgreed = all[4] > 0;
      pauseAgreed = all[5] > 0;
      s.nextBatch = b + 1;
      ++batchesThisSession;

      const auto now = std::chrono::steady_clock::now();
      window.emplace_back(std::chrono::duration<double>(now - last).count(), seenNow);
      last = now;
      if (window.size() > 20) window.pop_front();
      double wt = 0;
      std::int64_t wi = 0;
      for (const auto& [dt, k] : window) {
        wt += dt;
        wi += k;
      }
      TrainingEvent e;
      e.type = EventType::BatchEnd;
      auto& m = e.batch;
      m.epoch = s.epoch;
      m.batch = b;
      m.batchesPerEpoch = batchesPerEpoch;
      m.step = s.step;
      m.totalSteps = plan.totalSteps();
      m.loss = batchLoss;
      m.accuracy = seenNow ? double(correctNow) / double(seenNow) : 0;
      m.epochLoss = s.seen ? s.lossSum / double(s.seen) : std::nan("");
      m.epochAccuracy = s.seen ? double(s.correct) / double(s.seen) : std::nan("");
      m.lr = lr;
      m.gradNorm = gradNorm;
      m.imagesPerSecond = wt > 0 ? double(wi) / wt : 0;
      m.lossScale = opt.amp == "fp16" ? s.lossScale : 0;
      m.skipped = skipped;
      m.memory = memoryFigure(device);
      trainer.publish(std::move(e));

      if (boundary && (comm ? agreedStop() : shouldStopNow())) {
        trainLoader->stop();
        s.epochSeconds = secondsBefore + secondsSince(epochStart);
        return false;
      }
    }
    trainLoader->stop();
    s.epochSeconds = secondsBefore + secondsSince(epochStart);
    return true;
  }

  double metricValue(const MetricChoice& m, const EpochMetrics& e, bool& found) const {
    found = true;
    if (m.name == "val_loss" && e.hasValidation) return e.validation.loss;
    if (m.name == "val_accuracy" && e.hasValidation) return e.validation.accuracy;
    if (m.name == "train_loss" || m.name == "val_loss") return e.trainLoss;
    if (m.name == "train_accuracy" || m.name == "val_accuracy") return e.trainAccuracy;
    found = false;
    return 0;
  }

  /// Evaluates a split; in a data-parallel job every rank evaluates its share with rank 0's
  /// BatchNorm statistics, and the figures are summed. A stop waits for the end of it there.
  EvalMetrics evaluate(data::DataLoader& loader) {
    if (comm && !syncBatchNorm) broadcastModel("BatchNorm statistics", /*buffersOnly=*/true);
    net->eval();
    std::function<bool()> stop;
    if (!comm) stop = [&] { return bool(trainer.m_stopNow); };
    EvalMetrics m;
    {
      AutocastScope autocast(opt.amp, device);
      m = evaluateClassifier([&](const torch::Tensor& x) { return net->forward(x); }, loader,
                             numClasses, device, stop);
    }
    net->train();
    return reduceMetrics(m);
  }

  /// Validation, plateau, best, checkpoints, early stopping. Returns a reason to end, or "".
  std::string endEpoch() {
    const auto evalStart = std::chrono::steady_clock::now();
    EpochMetrics e;
    e.epoch = s.epoch;
    e.epochs = opt.epochs;
    e.trainLoss = s.seen ? s.lossSum / double(s.seen) : std::nan("");
    e.trainAccuracy = s.seen ? double(s.correct) / double(s.seen) : std::nan("");
    e.lr = currentLr();
    for (const auto& [node, sum] : s.normSums)
      e.layerGradNorms[node] = s.normSteps ? sum / double(s.normSteps) : 0.0;
    if (valLoader) {
      if (opt.fastDevRun) {
        // One validation batch: a loader over the first batch's samples.
        auto one = pd->data.validation;
        one.indices.resize(
            static_cast<std::size_t>(std::min<std::int64_t>(one.size(), opt.batchSize)));
        data::LoaderOptions eo;
        eo.batchSize = opt.batchSize;
        eo.training = false;
        eo.shuffle = false;
        eo.workers = 1;
        data::DataLoader loader(one, *pd->processor, eo);
        e.validation = evaluate(loader);
      } else {
        e.validation = evaluate(*valLoader);
      }
      if (trainer.m_stopNow && !comm) {
        writeCheckpointFile("last", Json::object());  // the epoch's batches are all done
        throw RunEnd{FinishState::Stopped, "stopped at epoch " + std::to_string(s.epoch + 1) +
                                               ", batch " + std::to_string(s.nextBatch) +
                                               " (step " + std::to_string(s.step) +
                                               "), during validation"};
      }
      e.hasValidation = true;
      result.hasValidation = true;
      result.lastValidation = e.validation;
    }
    e.seconds = s.epochSeconds + secondsSince(evalStart);
    TrainingEvent ev;
    ev.type = EventType::EpochEnd;
    ev.epoch = e;
    const Json metrics = ev.toJson();
    trainer.publish(std::move(ev));

    if (plateau) {
      bool found = false;
      const double v = metricValue(opt.plateau.metric, e, found);
      if (found && std::isfinite(v)) {
        const double before = currentLr();
        const double after = plateau->update(v, before);
        if (after < before && before > 0) {
          s.lrFactor *= after / before;
          log("plateau: " + opt.plateau.metric.name + " has not improved; learning rate " +
              brief(before) + " -> " + brief(after));
        }
      }
      s.plateau = plateau->state();
    }
    bool improved = false;
    {
      bool found = false;
      const double v = metricValue(opt.monitor, e, found);
      if (found && std::isfinite(v) &&
          (!s.hasBest || (opt.monitor.maximize ? v > s.best : v < s.best))) {
        s.hasBest = true;
        s.best = v;
        s.bestEpoch = s.epoch;
        improved = true;
      }
    }
    std::string endReason;
    if (opt.earlyStopping.enabled) {
      bool found = false;
      const double v = metricValue(opt.earlyStopping.metric, e, found);
      const auto& es = opt.earlyStopping;
      if (found && std::isfinite(v)) {
        const bool better = !s.esHasBest || (es.metric.maximize ? v > s.esBest + es.minDelta
                                                                : v < s.esBest - es.minDelta);
        if (better) {
          s.esHasBest = true;
          s.esBest = v;
          s.esBadEpochs = 0;
        } else if (++s.esBadEpochs >= es.patience) {
          endReason = "early stopping: " + es.metric.name + " has not improved for " +
                      std::to_string(es.patience) + " epoch" + (es.patience == 1 ? "" : "s") +
                      " (best " + brief(s.esBest) + ")";
        }
      }
    }

    // The position moves to the next epoch before the checkpoints are written.
    const std::int64_t finished = s.epoch;
    s.epoch += 1;
    s.nextBatch = 0;
    s.lossSum = 0;
    s.correct = 0;
    s.seen = 0;
    s.epochSeconds = 0;
    s.normSums.clear();
    s.normSteps = 0;
    result.epochsDone = s.epoch;
    writeCheckpointFile("last", metrics);
    if (improved) writeCheckpointFile("best", metrics);
    if (opt.checkpointEvery > 0 && (finished + 1) % opt.checkpointEvery == 0 &&
        !checkpointDir.empty() && !opt.fastDevRun) {
      writeCheckpointFile("epoch-" + std::to_string(finished + 1), metrics);
      pruneEpochCheckpoints();
    }
    return endReason;
  }

  /// The LR range test: train with an exponentially growing LR, watch the smoothed loss, stop
  /// on divergence, then put the weights and optimizer state back as they were.
  void findLr() {
    const auto& o = config.lrFindOptions;
    if (!(o.startLr > 0) || !(o.endLr > o.startLr) || o.steps < 2)
      throw Error("lr-find: needs 0 < start LR < end LR and at least 2 steps");
    auto& r = result.lrFind;
    const auto before = checkpoint::moduleState(*net);
    std::vector<std::pair<std::string, torch::Tensor>> saved;
    for (const auto& [name, t] : before)
      saved.emplace_back(name, t.clone());
    const auto optimizerBefore = checkpoint::optimizerState(*optimizer, opt.optimizer.type, *net);
    net->train();
    double avg = 0, best = std::numeric_limits<double>::infinity();
    std::int64_t epoch = 0;
    trainLoader->startEpoch(epoch);
    for (std::int64_t i = 0; i < o.steps && !trainer.m_stopNow; ++i) {
      auto batch = trainLoader->next();
      if (!batch) {
        trainLoader->startEpoch(++epoch);
        batch = trainLoader->next();
        if (!batch) break;
      }
      const double lr = o.startLr * std::pow(o.endLr / o.startLr, double(i) / double(o.steps - 1));
      setLearningRate(*optimizer, lr);
      optimizer->zero_grad();
      torch::Tensor logits;
      {
        AutocastScope autocast(opt.amp, device);
        logits = net->forward(batch->images.to(device));
      }
      const auto targets = batch->targets.defined() ? batch->targets.to(device) : torch::Tensor();
      const auto loss = classificationLoss(logits, batch->labels.to(device), targets,
                                           opt.labelSmoothing, classWeights);
      const double value = loss.item<double>();
      if (!std::isfinite(value)) {
        r.diverged = true;
        break;
      }
      loss.backward();
      optimizer->step();
      avg = o.smoothing * avg + (1 - o.smoothing) * value;
      const double smooth = avg / (1 - std::pow(o.smoothing, double(i + 1)));
      r.lrs.push_back(lr);
      r.losses.push_back(value);
      r.smoothed.push_back(smooth);
      best = std::min(best, smooth);
      TrainingEvent e;
      e.type = EventType::BatchEnd;
      e.batch.batch = i;
      e.batch.batchesPerEpoch = o.steps;
      e.batch.step = i + 1;
      e.batch.totalSteps = o.steps;
      e.batch.loss = value;
      e.batch.lr = lr;
      e.batch.gradNorm = std::nan("");
      e.batch.memory = memoryFigure(device);
      trainer.publish(std::move(e));
      if (i > 0 && smooth > o.divergeFactor * best) {
        r.diverged = true;
        break;
      }
    }
    trainLoader->stop();
    // Suggestions: the lowest smoothed loss, and the steepest fall (in log LR) before it.
    if (!r.smoothed.empty()) {
      const auto minIt = std::min_element(r.smoothed.begin(), r.smoothed.end());
      const auto minAt = static_cast<std::size_t>(minIt - r.smoothed.begin());
      r.minLossLr = r.lrs[minAt];
      r.suggestedLr = r.minLossLr / 10;
      double steepest = 0;
      for (std::size_t k = 1; k <= minAt; ++k) {
        const double slope =
            (r.smoothed[k] - r.smoothed[k - 1]) / (std::log(r.lrs[k]) - std::log(r.lrs[k - 1]));
        if (slope < steepest) {
          steepest = slope;
          r.suggestedLr = r.lrs[k];
        }
      }
    }
    {
      torch::NoGradGuard noGrad;
      checkpoint::loadModuleState(*net, saved);
    }
    optimizer = makeOptimizer(opt.optimizer, net->named_parameters());
    checkpoint::restoreOptimizerState(*optimizer, opt.optimizer.type, *net, optimizerBefore);
    r.weightsRestored = true;
    for (const auto& [name, t] : checkpoint::moduleState(*net)) {
      const auto it =
          std::find_if(saved.begin(), saved.end(), [&](const auto& p) { return p.first == name; });
      if (it == saved.end() || !torch::equal(it->second, t)) r.weightsRestored = false;
    }
    result.reason = r.lrs.empty() ? "lr-find: no batch could be trained"
                                  : "lr-find: " + std::to_string(r.lrs.size()) +
                                        " steps, suggested learning rate " + brief(r.suggestedLr);
    if (r.lrs.empty()) result.state = FinishState::Failed;
  }

  void run() {
    prepare();
    if (config.lrFind) {
      findLr();
      return;
    }
    TrainingEvent started;
    started.type = EventType::Started;
    started.path = runDir;
    started.message = config.project.name + ": " + std::to_string(opt.epochs) + " epochs x " +
                      std::to_string(batchesPerEpoch) + " batches of " +
                      std::to_string(opt.batchSize) +
                      (worldSize > 1 ? " x " + std::to_string(worldSize) + " processes" : "") +
                      ", " + opt.optimizer.type + ", " + opt.schedule.type() + " schedule";
    trainer.publish(std::move(started));
    trainer.m_state = RunState::Running;

    std::string endReason;
    FinishState endState = FinishState::Completed;
    while (s.epoch < opt.epochs) {
      if (!trainEpoch()) {
        writeCheckpointFile("last", Json::object());
        endState = FinishState::Stopped;
        endReason = "stopped at epoch " + std::to_string(s.epoch + 1) + ", batch " +
                    std::to_string(s.nextBatch) + " (step " + std::to_string(s.step) + ")";
        break;
      }
      endReason = endEpoch();
      if (!endReason.empty()) break;
      if (anyRank(trainer.m_stopAfterEpoch || trainer.m_stopNow, "the stop-after-epoch flag")) {
        endState = FinishState::Stopped;
        endReason = "stopped after epoch " + std::to_string(s.epoch);
        break;
      }
    }
    if (endReason.empty()) endReason = "trained " + std::to_string(opt.epochs) + " epochs";
    result.state = endState;
    result.reason = endReason;
    result.steps = s.step;
    if (endState == FinishState::Completed && testLoader) {
      log("evaluating the test split (" + std::to_string(pd->data.test.size()) + " images)");
      result.test = evaluate(*testLoader);
      result.hasTest = comm || !trainer.m_stopNow;
    }
    if (launcher) {
      // The other ranks end their run as this one does; wait for them to exit.
      if (!launcher->finish(opt.distTimeout)) {
        const std::string failed = launcher->failures();
        log("the other processes did not all end cleanly" +
                (failed.empty() ? std::string() : ": " + failed),
            "warning");
      }
    }
  }
};

Trainer::Trainer(TrainerConfig config) : m_config(std::move(config)) {}

Trainer::~Trainer() {
  stop();
  if (m_thread.joinable()) m_thread.join();
  m_sinks.clear();
}

void Trainer::addSink(std::shared_ptr<EventSink> sink) {
  m_sinks.push_back(std::make_shared<AsyncSink>(std::move(sink)));
}

void Trainer::attachRunWriter(const std::string& runDir) {
  {
    std::lock_guard<std::mutex> lock(m_resultMutex);
    m_runDir = runDir;
  }
  // First in line; it also gets the events sent before the folder existed.
  auto writer = std::make_shared<AsyncSink>(std::make_shared<RunWriter>(runDir));
  for (const auto& e : m_beforeRunDir)
    writer->onEvent(e);
  m_beforeRunDir.clear();
  m_sinks.insert(m_sinks.begin(), writer);
}

void Trainer::publish(TrainingEvent event) {
  event.time =
      std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count() -
      m_startTime;
  if (event.type == EventType::BatchEnd) event.batch.seconds = event.time;
  if (m_runDir.empty() && m_state == RunState::Preparing) m_beforeRunDir.push_back(event);
  for (auto& sink : m_sinks)
    sink->onEvent(event);
}

void Trainer::start() {
  if (m_thread.joinable()) throw Error("the trainer was already started");
  m_state = RunState::Preparing;
  m_thread = std::thread([this] { run(); });
}

void Trainer::wait() {
  if (m_thread.joinable()) m_thread.join();
  for (auto& sink : m_sinks)
    sink->flush();
}

void Trainer::pause() {
  m_paused = true;
}

void Trainer::resume() {
  {
    std::lock_guard<std::mutex> lock(m_pauseMutex);
    m_paused = false;
  }
  m_pauseCv.notify_all();
}

void Trainer::stop() {
  {
    std::lock_guard<std::mutex> lock(m_pauseMutex);
    m_stopNow = true;
  }
  m_pauseCv.notify_all();
}

void Trainer::stopAfterEpoch() {
  m_stopAfterEpoch = true;
}

TrainResult Trainer::result() const {
  std::lock_guard<std::mutex> lock(m_resultMutex);
  return m_result;
}

std::string Trainer::runDir() const {
  std::lock_guard<std::mutex> lock(m_resultMutex);
  return m_runDir;
}

void Trainer::run() {
  m_startTime =
      std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  TrainerLoop loop(*this, m_config);
  TrainingEvent finished;
  finished.type = EventType::Finished;
  try {
    loop.run();
  } catch (const RunEnd& end) {
    loop.result.state = end.state;
    loop.result.reason = end.reason;
  } catch (const c10::Error& e) {
    loop.result.state = FinishState::Failed;
    loop.result.reason = std::string("LibTorch: ") + e.what_without_backtrace();
  } catch (const std::exception& e) {
    loop.result.state = FinishState::Failed;
    loop.result.reason = e.what();
  }
  loop.result.steps = loop.s.step;
  loop.result.runDir = loop.runDir;
  loop.result.seconds = loop.elapsed();
  if (loop.opt.deterministic) at::globalContext().setDeterministicAlgorithms(false, false);
  finished.state = loop.result.state;
  finished.message = loop.result.reason;
  finished.path = loop.runDir;
  finished.hasTest = loop.result.hasTest;
  finished.test = loop.result.test;
  {
    std::lock_guard<std::mutex> lock(m_resultMutex);
    m_result = loop.result;
  }
  m_state = RunState::Finished;
  publish(std::move(finished));
}

}  // namespace netsmith::train
