// Data-parallel training on torch.distributed (Gloo over loopback) with the real netsmith-cli:
// 2 ranks with batch B equal 1 process with batch 2B; exact resume under 2 ranks; a killed
// or hung rank stops the other with a clear message within the timeout; torchrun starts the
// same binary.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "../core/train_fixtures.h"
#include "checkpoint/checkpoint.h"
#include "cli_runner.h"
#include "common/file_util.h"
#include "common/json.h"

using netsmith::Json;
using netsmith::testutil::runCli;
using netsmith::testutil::runShell;
using netsmith::testutil::startCli;
using netsmith::testutil::TempDir;
using netsmith::testutil::waitForText;

namespace {

/// The blob project with `nodes` as its model and `train` merged over its train section.
std::string writeProject(const TempDir& dir, const Json& train, const std::string& nodes) {
  const auto path = netsmith::testutil::writeTrainProject(dir, train);
  Json j = Json::parse(netsmith::readTextFile(path));
  j["model"]["nodes"] = Json::parse(nodes);
  std::ofstream(path) << j.dump(1);
  return path;
}

// No BatchNorm, no Dropout: the gradient of the global batch is the sum of the shares'.
const char* kPlainModel = R"([
  {"id": "input", "op": "Input"},
  {"id": "conv", "op": "Conv2d", "params": {"out_channels": 6, "kernel_size": 3, "padding": 1},
   "inputs": ["input"]},
  {"id": "relu", "op": "ReLU", "inputs": ["conv"]},
  {"id": "pool", "op": "MaxPool2d", "params": {"kernel_size": 4}, "inputs": ["relu"]},
  {"id": "flat", "op": "Flatten", "inputs": ["pool"]},
  {"id": "fc", "op": "Linear", "params": {"out_features": 4}, "inputs": ["flat"]}])";

const char* kBatchNormModel = R"([
  {"id": "input", "op": "Input"},
  {"id": "conv", "op": "Conv2d", "params": {"out_channels": 6, "kernel_size": 3, "padding": 1},
   "inputs": ["input"]},
  {"id": "bn", "op": "BatchNorm2d", "inputs": ["conv"]},
  {"id": "relu", "op": "ReLU", "inputs": ["bn"]},
  {"id": "pool", "op": "MaxPool2d", "params": {"kernel_size": 4}, "inputs": ["relu"]},
  {"id": "flat", "op": "Flatten", "inputs": ["pool"]},
  {"id": "fc", "op": "Linear", "params": {"out_features": 4}, "inputs": ["flat"]}])";

Json sgd() {
  return Json{{"optimizer", Json{{"type", "sgd"}, {"lr", 0.05}, {"momentum", 0.9}}},
              {"schedule", Json{{"type", "constant"}}}};
}

std::string lastCheckpoint(const std::string& output) {
  std::smatch m;
  const std::regex re("checkpoint: (\\S+last\\.safetensors)");
  return std::regex_search(output, m, re) ? m[1].str() : std::string();
}

/// The largest difference between two checkpoints' model tensors (parameters and buffers).
double maxDifference(const std::string& a, const std::string& b) {
  const auto ta = netsmith::checkpoint::readCheckpoint(a).model;
  const auto tb = netsmith::checkpoint::readCheckpoint(b).model;
  EXPECT_EQ(ta.size(), tb.size());
  double worst = 0;
  for (const auto& [name, t] : ta) {
    bool found = false;
    for (const auto& [other, u] : tb) {
      if (other != name) continue;
      found = true;
      EXPECT_EQ(t.sizes(), u.sizes()) << name;
      const double d = (t.to(torch::kDouble) - u.to(torch::kDouble)).abs().max().item<double>();
      worst = std::max(worst, d);
    }
    EXPECT_TRUE(found) << name;
  }
  return worst;
}

/// The same training twice: 1 process with batch 32, and 2 processes with batch 16 each.
std::pair<netsmith::testutil::CliResult, netsmith::testutil::CliResult> oneAndTwo(
    const TempDir& dir, const std::string& project, const std::string& common) {
  auto one = runCli("train " + project + " --batch-size 32" + common + " --out " + dir.file("one"));
  EXPECT_EQ(one.exitCode, 0) << one.output;
  auto two = runCli("train " + project + " --nproc 2 --batch-size 16" + common + " --out " +
                    dir.file("two"));
  EXPECT_EQ(two.exitCode, 0) << two.output;
  return {one, two};
}

/// Waits for `pid` to exit; returns its wait status, or -1 after `seconds`.
int waitExit(pid_t pid, double seconds, double& took) {
  const auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      return status;
    }
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > seconds) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

/// A port the kernel says is free now (for launchers that need one named).
int freePort() {
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return 29500;
  socklen_t len = sizeof addr;
  ::getsockname(s, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(s);
  return ntohs(addr.sin_port);
}

pid_t childPid(const std::string& output) {
  std::smatch m;
  const std::regex re("started 1 local process for ranks 1-1 \\(pid ([0-9]+)\\)");
  return std::regex_search(output, m, re) ? static_cast<pid_t>(std::stoi(m[1])) : -1;
}

/// A long 2-rank run started in the background, once `ready` shows in its output.
struct LongJob {
  pid_t rank0 = -1;
  pid_t rank1 = -1;
  std::string log;
};

LongJob startLongJob(const TempDir& dir, const std::string& timeout, const std::string& ready) {
  LongJob job;
  const auto project = netsmith::testutil::writeTrainProject(dir, {{"epochs", 500}});
  job.log = dir.file("out.txt");
  job.rank0 = startCli(
      {"train", project, "--nproc", "2", "--dist-timeout", timeout, "--out", dir.file("runs")},
      job.log);
  EXPECT_TRUE(waitForText(job.log, ready, 120)) << netsmith::readTextFile(job.log);
  job.rank1 = childPid(netsmith::readTextFile(job.log));
  EXPECT_GT(job.rank1, 0) << netsmith::readTextFile(job.log);
  if (job.rank1 <= 0) {  // leave nothing running behind a failed test
    ::kill(job.rank0, SIGTERM);
    ::waitpid(job.rank0, nullptr, 0);
  }
  return job;
}

}  // namespace

TEST(Distributed, TwoRanksWithBatchBEqualOneProcessWithBatch2B) {
  TempDir dir;
  // 149 of the 192 training samples: the last global batch of 21 splits 11 / 10, so the shares
  // must be weighed by their sizes. Buckets of 1 KB: the gradients travel in 3 all-reduces,
  // started from the backward pass's hooks.
  Json train = sgd();
  train["dist_bucket_mb"] = 0.001;
  const auto project = writeProject(dir, train, kPlainModel);
  const std::string common = " --limit-train 149 --max-batches 7 --seed 5 --threads 1";
  const auto [one, two] = oneAndTwo(dir, project, common);
  EXPECT_NE(two.output.find("world size 2"), std::string::npos) << two.output;
  EXPECT_NE(two.output.find("5 batches of 16 x 2 processes"), std::string::npos) << two.output;
  EXPECT_NE(two.output.find("gradient all-reduce: 3 buckets, 3 started during the backward pass"),
            std::string::npos)
      << two.output;
  const auto a = lastCheckpoint(one.output), b = lastCheckpoint(two.output);
  ASSERT_FALSE(a.empty()) << one.output;
  ASSERT_FALSE(b.empty()) << two.output;
  EXPECT_EQ(netsmith::checkpoint::readCheckpoint(b).meta["step"].get<int>(), 7);
  EXPECT_LT(maxDifference(a, b), 1e-5);
  // Only rank 0 writes: one run folder.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.file("two")),
                          std::filesystem::directory_iterator()),
            1);

  // A different seed moves the weights by far more than the tolerance: the check can fail.
  const auto other = runCli("train " + project +
                            " --batch-size 32 --limit-train 149 "
                            "--max-batches 7 --seed 6 --threads 1 --out " +
                            dir.file("other"));
  ASSERT_EQ(other.exitCode, 0) << other.output;
  EXPECT_GT(maxDifference(a, lastCheckpoint(other.output)), 1e-3);
}

TEST(Distributed, SynchronisedBatchNormMatchesOneProcessWithTheGlobalBatch) {
  TempDir dir;
  Json train = sgd();
  train["sync_batchnorm"] = true;
  const auto project = writeProject(dir, train, kBatchNormModel);
  const std::string common = " --limit-train 160 --max-batches 6 --threads 1";
  const auto [one, two] = oneAndTwo(dir, project, common);
  EXPECT_NE(two.output.find("BatchNorm statistics synchronised across processes (1 layer)"),
            std::string::npos)
      << two.output;
  // Weights and running statistics alike.
  EXPECT_LT(maxDifference(lastCheckpoint(one.output), lastCheckpoint(two.output)), 1e-4);
}

TEST(Distributed, ResumeUnderTwoRanksContinuesExactly) {
  TempDir dir;
  // The default fixture model: BatchNorm (per process) and Dropout (per-rank streams).
  const auto project = netsmith::testutil::writeTrainProject(dir);
  const auto straight =
      runCli("train " + project + " --nproc 2 --batch-size 16 --out " + dir.file("straight"));
  ASSERT_EQ(straight.exitCode, 0) << straight.output;
  const auto stopped = runCli("train " + project +
                              " --nproc 2 --batch-size 16 --max-batches 4 "
                              "--out " +
                              dir.file("stopped"));
  ASSERT_EQ(stopped.exitCode, 0) << stopped.output;
  EXPECT_NE(stopped.output.find("stopped at epoch 1, batch 4"), std::string::npos)
      << stopped.output;
  const auto resumed = runCli("train " + project + " --nproc 2 --batch-size 16 --resume " +
                              lastCheckpoint(stopped.output));
  ASSERT_EQ(resumed.exitCode, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("resumed from"), std::string::npos) << resumed.output;
  EXPECT_LT(maxDifference(lastCheckpoint(straight.output), lastCheckpoint(resumed.output)), 1e-6);
}

namespace {

/// The inodes of the sockets `pid` holds open.
std::set<std::string> socketInodes(pid_t pid) {
  std::set<std::string> out;
  std::error_code ec;
  for (const auto& fd :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
    const auto target = std::filesystem::read_symlink(fd.path(), ec).string();
    if (target.rfind("socket:[", 0) == 0) out.insert(target.substr(8, target.size() - 9));
  }
  return out;
}

/// Listening TCP sockets (/proc/net/tcp, tcp6) whose inode is in `inodes`: their local address
/// in the kernel's hex form.
std::vector<std::string> listeningAddresses(const std::set<std::string>& inodes) {
  std::vector<std::string> out;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(table);
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      std::istringstream ss(line);
      std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
      ss >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >> timeout >>
          inode;
      if (state == "0A" && inodes.count(inode)) out.push_back(local);
    }
  }
  return out;
}

bool loopback(const std::string& hexAddress) {
  const std::string ip = hexAddress.substr(0, hexAddress.find(':'));
  return ip == "0100007F" ||                          // 127.0.0.1
         ip == "00000000000000000000000001000000" ||  // ::1
         ip == "0000000000000000FFFF00000100007F";    // ::ffff:127.0.0.1
}

}  // namespace

// A local data-parallel job listens on no network address: the ranks meet through a file in a
// private folder and Gloo connects them over loopback; the worker spec is for this user only.
TEST(Distributed, ALocalJobListensOnlyOnLoopback) {
  TempDir dir;
  const auto job = startLongJob(dir, "10", "epoch 2/500");
  ASSERT_GT(job.rank1, 0);
  std::set<std::string> inodes = socketInodes(job.rank0);
  for (const auto& i : socketInodes(job.rank1))
    inodes.insert(i);
  const auto listening = listeningAddresses(inodes);
  const std::string out = netsmith::readTextFile(job.log);
  // The ranks hold sockets (Gloo's connections to each other); none of them listens on a
  // network address (a TCPStore served on 0.0.0.0 would, for the whole run).
  EXPECT_FALSE(inodes.empty());
  for (const auto& address : listening)
    EXPECT_TRUE(loopback(address)) << "listening on " << address << "\n" << out;
  // The rendezvous is a file in a folder only this user can enter.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(out, m, std::regex("rendezvous file (\\S+)/rendezvous"))) << out;
  const auto folder = std::filesystem::status(m[1].str());
  EXPECT_EQ(folder.permissions() & std::filesystem::perms::all, std::filesystem::perms::owner_all);
  const auto spec = std::filesystem::status(m[1].str() + "/worker.json");
  EXPECT_EQ(spec.permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  ::kill(job.rank0, SIGINT);
  double took = 0;
  EXPECT_NE(waitExit(job.rank0, 60, took), -1);
  EXPECT_FALSE(std::filesystem::exists(m[1].str())) << "the private folder is removed";
}

// Under a torchrun- or Slurm-style launch (RANK, WORLD_SIZE, MASTER_ADDR in the environment,
// no launcher-hosted store) rank 0 serves the job's TCPStore. With a loopback MASTER_ADDR it
// listens on loopback only (LibTorch alone would listen on 0.0.0.0).
TEST(Distributed, ALaunchWithALoopbackMasterAddrListensOnlyOnLoopback) {
  TempDir dir;
  const auto project = netsmith::testutil::writeTrainProject(dir, {{"epochs", 500}});
  const std::string port = std::to_string(freePort());
  std::vector<pid_t> ranks;
  for (int rank = 0; rank < 2; ++rank) {
    ranks.push_back(startCli(
        {"train", project, "--threads", "1", "--dist-timeout", "20", "--out",
         dir.file("runs" + std::to_string(rank))},
        dir.file("out" + std::to_string(rank) + ".txt"),
        {"RANK=" + std::to_string(rank), "WORLD_SIZE=2", "LOCAL_RANK=" + std::to_string(rank),
         "LOCAL_WORLD_SIZE=2", "MASTER_ADDR=127.0.0.1", "MASTER_PORT=" + port}));
  }
  const bool training = waitForText(dir.file("out0.txt"), "epoch 2/500", 120);
  std::set<std::string> inodes;
  for (const pid_t pid : ranks)
    for (const auto& i : socketInodes(pid))
      inodes.insert(i);
  const auto listening = listeningAddresses(inodes);
  for (const pid_t pid : ranks)
    ::kill(pid, SIGKILL);
  for (const pid_t pid : ranks)
    ::waitpid(pid, nullptr, 0);
  const std::string out = netsmith::readTextFile(dir.file("out0.txt"));
  ASSERT_TRUE(training) << out << netsmith::readTextFile(dir.file("out1.txt"));
  EXPECT_FALSE(listening.empty()) << "rank 0 serves the store";
  for (const auto& address : listening)
    EXPECT_TRUE(loopback(address)) << "listening on " << address << "\n" << out;
  // LibTorch's own log lines stay out of what the user reads (c10d warned that it failed to
  // bind [::] for an IPv4 MASTER_ADDR, after glog's "Logging before InitGoogleLogging()").
  for (const std::string& file : {dir.file("out0.txt"), dir.file("out1.txt")}) {
    const std::string text = netsmith::readTextFile(file);
    EXPECT_EQ(text.find("InitGoogleLogging"), std::string::npos) << text;
    EXPECT_EQ(text.find("failed to bind"), std::string::npos) << text;
  }
}

TEST(Distributed, AKilledRankStopsTheOtherWithAClearMessage) {
  TempDir dir;
  const auto job = startLongJob(dir, "10", "epoch 2/500");
  ASSERT_GT(job.rank1, 0);
  const pid_t child = job.rank1;
  ::kill(child, SIGKILL);
  double took = 0;
  const int status = waitExit(job.rank0, 30, took);
  const std::string out = netsmith::readTextFile(job.log);
  ASSERT_NE(status, -1) << "rank 0 still running 30 s after rank 1 was killed\n" << out;
  EXPECT_LT(took, 10.0 + 5.0) << out;
  ASSERT_TRUE(WIFEXITED(status)) << out;
  EXPECT_EQ(WEXITSTATUS(status), 1) << out;
  EXPECT_NE(out.find("distributed training (rank 0 of 2, gloo)"), std::string::npos) << out;
  EXPECT_NE(out.find("rank 1 (pid " + std::to_string(child) + ") was killed by signal 9"),
            std::string::npos)
      << out;
  // The last checkpoint (written at the end of an epoch) still loads.
  std::string ckpt;
  for (const auto& run : std::filesystem::directory_iterator(dir.file("runs")))
    ckpt = (run.path() / "checkpoints" / "last.safetensors").string();
  const auto data = netsmith::checkpoint::readCheckpoint(ckpt);
  EXPECT_GE(data.meta["epoch"].get<int>(), 1);
  EXPECT_FALSE(data.model.empty());
}

TEST(Distributed, AHungRankIsAnErrorAfterTheTimeout) {
  TempDir dir;
  // 8 s: long enough for the ranks to meet with both cores busy (3 s was not, under a load of
  // 5), short enough to wait for.
  const auto job = startLongJob(dir, "8", "epoch 1/500");
  ASSERT_GT(job.rank1, 0);
  ::kill(job.rank1, SIGSTOP);  // alive, silent
  double took = 0;
  const int status = waitExit(job.rank0, 60, took);
  ::kill(job.rank1, SIGKILL);
  const std::string out = netsmith::readTextFile(job.log);
  ASSERT_NE(status, -1) << "rank 0 still running 60 s after rank 1 hung\n" << out;
  EXPECT_LT(took, 8.0 + 20.0) << out;
  ASSERT_TRUE(WIFEXITED(status)) << out;
  EXPECT_EQ(WEXITSTATUS(status), 1) << out;
  EXPECT_NE(out.find("another process ended or stopped answering"), std::string::npos) << out;
  EXPECT_NE(out.find("waits at most 8 s (train.dist_timeout)"), std::string::npos) << out;
}

TEST(Distributed, TorchrunStartsTheSameBinary) {
  if (!std::filesystem::exists("/usr/bin/torchrun"))
    GTEST_SKIP() << "torchrun (python3-torch) is not installed";
  TempDir dir;
  const auto project = writeProject(dir, sgd(), kPlainModel);
  const auto ours = runCli("train " + project +
                           " --nproc 2 --batch-size 16 --max-batches 5 "
                           "--threads 1 --out " +
                           dir.file("ours"));
  ASSERT_EQ(ours.exitCode, 0) << ours.output;
  const int port = freePort();
  // --redirects/--tee as a per-rank mapping: Debian's torchrun 1.13 on Python 3.11 fails on the
  // plain "0" default (enum.Flag no longer iterates its zero member).
  const auto torchrun = runShell(
      "OMP_NUM_THREADS=1 /usr/bin/torchrun --nnodes 1 --nproc_per_node 2 "
      "--master_addr 127.0.0.1 --master_port " +
      std::to_string(port) + " --redirects 1:2 --tee 1:2 --no_python " + NETSMITH_CLI + " train " +
      project + " --batch-size 16 --max-batches 5 --threads 1 --out " + dir.file("torchrun"));
  const std::string& out = torchrun.output;
  ASSERT_EQ(torchrun.exitCode, 0) << out;
  EXPECT_NE(out.find("world size 2, rank 0, backend gloo"), std::string::npos) << out;
  EXPECT_NE(out.find("(torchrun)"), std::string::npos) << out;
  EXPECT_LT(maxDifference(lastCheckpoint(ours.output), lastCheckpoint(out)), 1e-6);
}

TEST(Distributed, BadLaunchSettingsAreClearErrors) {
  TempDir dir;
  const auto project = netsmith::testutil::writeTrainProject(dir);
  auto r = runCli("train " + project + " --nproc 0");
  EXPECT_EQ(r.exitCode, 2) << r.output;
  EXPECT_NE(r.output.find("--nproc"), std::string::npos) << r.output;
  r = runCli("train " + project + " --nproc 2 --dist-timeout 0");
  EXPECT_EQ(r.exitCode, 2) << r.output;
  const std::string cli = NETSMITH_CLI;
  // A launcher's variables that make no sense.
  r = runShell("RANK=abc WORLD_SIZE=2 " + cli + " train " + project);
  EXPECT_EQ(r.exitCode, 2) << r.output;
  EXPECT_NE(r.output.find("environment variable RANK=\"abc\""), std::string::npos) << r.output;
  r = runShell("RANK=3 WORLD_SIZE=2 " + cli + " train " + project);
  EXPECT_EQ(r.exitCode, 2) << r.output;
  EXPECT_NE(r.output.find("from 0 to 1"), std::string::npos) << r.output;
  // A second rank that never comes: rank 0 gives up after the timeout, naming the rendezvous.
  r = runShell("MASTER_PORT=" + std::to_string(freePort()) + " RANK=0 WORLD_SIZE=2 " + cli +
               " train " + project + " --dist-timeout 2");
  EXPECT_NE(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("distributed training"), std::string::npos) << r.output;
}
