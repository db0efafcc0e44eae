// The data-parallel process group: torch.distributed's c10d (distributed/comm), gradient
// buckets, synchronised BatchNorm, local ranks started for train.local_processes, and a pause
// that holds every rank with a heartbeat.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <filesystem>

#include "common/error.h"
#include "distributed/comm.h"
#include "distributed/grad_buckets.h"
#include "distributed/local_launcher.h"
#include "env/env_report.h"
#include "train/dist_worker.h"
#include "train/process_group.h"
#include "train/train_options.h"
#include "train/trainer.h"

namespace netsmith::train {

namespace fs = std::filesystem;

namespace {

class DataParallelGroup final : public ProcessGroup {
 public:
  DataParallelGroup(RunContext& ctx, const TrainOptions& options) : ProcessGroup(ctx) {
    m_processes = options.processes;
  }
  ~DataParallelGroup() override {
    // Closing the process group first ends the others' exchanges at once after a failure
    // here; then they have a moment to exit before they are terminated.
    m_buckets.reset();
    m_comm.reset();
    if (m_launcher) m_launcher->finish(0.5);
    m_launcher.reset();
    if (!m_specDir.empty()) {
      std::error_code ec;
      fs::remove_all(m_specDir, ec);
    }
  }

  /// Serves or joins the rendezvous; with `spawn`, starts the other local ranks first.
  void join(distributed::DistEnv env, const TrainOptions& options, const torch::Device& device,
            bool spawn) {
    // A local launch meets in a file in a private (0700) folder: nothing listens on the network.
    if (spawn) {
      m_specDir = makePrivateFolder();
      env.storeFile = (fs::path(m_specDir) / "rendezvous").string();
    }
    m_comm =
        std::make_unique<distributed::Comm>(env, options.distBackend, device, options.distTimeout);
    if (spawn) startLocalRanks(env);
    m_comm->connect();
    char bucket[32];
    std::snprintf(bucket, sizeof bucket, "%g", options.distBucketMb);
    const std::string where = env.storeFile.empty()
                                  ? env.masterAddr + ":" + std::to_string(m_comm->storePort())
                                  : "file " + env.storeFile;
    m_ctx.log("distributed: world size " + std::to_string(worldSize()) + ", rank " +
              std::to_string(rank()) + ", backend " + m_comm->backendName() + ", rendezvous " +
              where + " (" + env.launcher + "); batch_size " + std::to_string(options.batchSize) +
              " per process, global batch " + std::to_string(options.batchSize * worldSize()) +
              "; gradient buckets of " + bucket + " MB");
  }

  int rank() const override { return m_comm->rank(); }
  int worldSize() const override { return m_comm->size(); }
  int localProcesses() const override { return std::max(1, m_comm->env().localWorldSize); }
  bool stopsAlone() const override { return false; }
  bool crossProcessBatchNorm() const override { return m_syncBatchNorm; }

  void sum(std::vector<double>& values, const std::string& what) override {
    std::vector<torch::Tensor> t{torch::tensor(values, torch::kDouble).to(m_device)};
    m_comm->allreduceSum(t, what);
    const auto back = t[0].to(torch::kCPU).contiguous();
    for (std::size_t i = 0; i < values.size(); ++i)
      values[i] = back.data_ptr<double>()[i];
  }

  void prepareModel(graph::GraphModule& net, const std::vector<torch::Tensor>& params,
                    const TrainOptions& options) override {
    broadcastModel(net, "the initial weights", false);
    m_buckets = std::make_unique<distributed::GradBuckets>(*m_comm, params, options.distBucketMb);
    if (!options.syncBatchNorm) return;
    auto* c = m_comm.get();
    const int users = net->setCrossProcessSum(
        [c](const torch::Tensor& t) { return distributed::allreduceSumAutograd(*c, t); });
    m_syncBatchNorm = users > 0;
    m_ctx.log("BatchNorm statistics synchronised across processes (" + std::to_string(users) +
              " layer" + (users == 1 ? "" : "s") + ")");
  }

  void beforeEvaluation(graph::GraphModule& net) override {
    if (!m_syncBatchNorm) broadcastModel(net, "BatchNorm statistics", /*buffersOnly=*/true);
  }

  void beforeBackward(bool sync) override {
    if (sync) m_buckets->arm();
  }

  void afterBackward(bool sync) override {
    if (!sync) return;
    m_buckets->finish();
    if (m_bucketsReported) return;
    m_bucketsReported = true;
    const auto n = m_buckets->bucketCount();
    m_ctx.log("gradient all-reduce: " + std::to_string(n) + " bucket" + (n == 1 ? "" : "s") + ", " +
              std::to_string(m_buckets->startedEarly()) + " started during the backward pass");
  }

  /// Every rank pauses and stops together. While any rank is paused they all keep exchanging
  /// a heartbeat, so no one's timeout runs out.
  PauseOutcome holdOrStop(bool pauseAgreed, bool stopAgreed) override {
    PauseOutcome out;
    out.stop = stopAgreed;
    if (!pauseAgreed || stopAgreed) return out;
    auto& controls = m_ctx.controls;
    announcePause(true);
    const auto pausedAt = std::chrono::steady_clock::now();
    for (;;) {
      controls.waitWhilePausedFor(200);
      std::vector<double> v{controls.paused ? 1.0 : 0.0, controls.stopNow ? 1.0 : 0.0};
      sum(v, "the pause heartbeat");
      if (v[1] > 0) {
        out.stop = true;
        break;
      }
      if (v[0] == 0) break;
    }
    out.pausedSeconds = secondsSince(pausedAt);
    announcePause(false);
    return out;
  }

  void finish(double timeoutSeconds) override {
    // The other ranks end their run as this one does; wait for them to exit.
    if (!m_launcher || m_launcher->finish(timeoutSeconds)) return;
    const std::string failed = m_launcher->failures();
    m_ctx.log("the other processes did not all end cleanly" +
                  (failed.empty() ? std::string() : ": " + failed),
              "warning");
  }

  torch::Device m_device{torch::kCPU};

 private:
  void broadcastModel(graph::GraphModule& net, const std::string& what, bool buffersOnly) {
    torch::NoGradGuard noGrad;
    std::vector<torch::Tensor> ts;
    if (!buffersOnly) {
      for (auto& p : net->parameters())
        ts.push_back(p.data());
    }
    for (auto& b : net->buffers())
      ts.push_back(b);
    m_comm->broadcast(ts, what);
  }

  /// A new folder only this user can enter (mkdtemp: mode 0700).
  static std::string makePrivateFolder() {
    std::string pattern = (fs::temp_directory_path() / "netsmith-dist-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) {
      throw Error("distributed training: cannot create a private folder in " +
                  fs::temp_directory_path().string() + " (" + std::strerror(errno) + ")");
    }
    return pattern;
  }

  void startLocalRanks(const distributed::DistEnv& env) {
    const std::string spec = (fs::path(m_specDir) / "worker.json").string();
    TrainerConfig forWorkers = m_ctx.config;
    forWorkers.project.train["local_processes"] = m_processes;
    writeWorkerSpec(forWorkers, spec);
    ::chmod(spec.c_str(), 0600);  // the project and its paths: for this user's ranks only
    m_launcher = std::make_unique<distributed::LocalLauncher>();
    m_launcher->start(m_ctx.config.workerProgram, {"dist-worker", spec}, env);
    m_comm->setFailureHint(
        [this] { return m_launcher ? m_launcher->failures(0.3) : std::string(); });
    std::string pids;
    for (const auto& c : m_launcher->poll())
      pids += (pids.empty() ? "" : ", ") + std::to_string(c.pid);
    m_ctx.log("started " + std::to_string(env.worldSize - 1) + " local process" +
              (env.worldSize > 2 ? "es" : "") + " for ranks 1-" +
              std::to_string(env.worldSize - 1) + " (pid " + pids + ")");
  }

  // The launcher outlives the process group (see the destructor).
  std::unique_ptr<distributed::LocalLauncher> m_launcher;
  std::unique_ptr<distributed::Comm> m_comm;
  std::unique_ptr<distributed::GradBuckets> m_buckets;
  std::string m_specDir;
  int m_processes = 1;
  bool m_syncBatchNorm = false;
  bool m_bucketsReported = false;
};

/// The job this process belongs to: its launcher's, one started here, or none.
distributed::DistEnv jobEnvironment(RunContext& ctx, const TrainOptions& opt, bool& spawn) {
  const auto& config = ctx.config;
  distributed::DistEnv env = config.dist;
  spawn = false;
  if (!env.distributed() && (config.lrFind || opt.fastDevRun)) {
    // Single-process jobs by nature: train.local_processes does not apply.
    if (opt.processes > 1)
      ctx.log(std::string(config.lrFind ? "the LR range test" : "fast_dev_run") +
              " runs in one process (train.local_processes is " + std::to_string(opt.processes) +
              ")");
    return env;
  }
  if (opt.processes > 1 && !env.distributed()) {
    if (opt.processes > netsmith::env::maxProcesses())
      throw Error("train.local_processes is " + std::to_string(opt.processes) + ": more than the " +
                  netsmith::env::describeMaxProcesses());
    env.worldSize = env.localWorldSize = opt.processes;
    env.rank = env.localRank = 0;
    env.masterAddr = "127.0.0.1";
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
  if (env.distributed() && (config.lrFind || opt.fastDevRun))
    throw Error(std::string(config.lrFind ? "lr-find" : "train.fast_dev_run") +
                " runs in one process; start it without " + env.launcher);
  return env;
}

class SingleProcess final : public ProcessGroup {
 public:
  explicit SingleProcess(RunContext& ctx) : ProcessGroup(ctx) {}
};

}  // namespace

std::unique_ptr<ProcessGroup> makeProcessGroup(RunContext& ctx, const TrainOptions& options,
                                               torch::Device& device) {
  bool spawn = false;
  const auto env = jobEnvironment(ctx, options, spawn);
  if (!env.distributed()) return std::make_unique<SingleProcess>(ctx);
  if (device.is_cuda() && !device.has_index()) device = torch::Device(torch::kCUDA, env.localRank);
  auto group = std::make_unique<DataParallelGroup>(ctx, options);
  group->m_device = device;
  group->join(env, options, device, spawn);
  return group;
}

}  // namespace netsmith::train
