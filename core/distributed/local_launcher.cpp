#include "distributed/local_launcher.h"

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <thread>

#include "common/error.h"
#include "common/subprocess.h"

namespace netsmith::distributed {

void LocalLauncher::start(const std::string& program, const std::vector<std::string>& args,
                          const DistEnv& job) {
  for (int rank = 1; rank < job.worldSize; ++rank) {
    SpawnSpec spec;
    spec.program = program;
    spec.args = args;
    spec.env = rankEnvironment(job, rank);
    spec.dropPrefixes = {"SLURM_PROCID", "SLURM_NTASKS", "OMPI_COMM_WORLD_",
                         "PMI_RANK",     "PMI_SIZE",     "TORCHELASTIC_USE_AGENT_STORE"};
    spec.what = "rank " + std::to_string(rank);
    m_children.push_back({rank, spawnChild(spec), true, 0});
  }
}

const std::vector<LocalLauncher::Child>& LocalLauncher::poll() {
  for (auto& c : m_children) {
    if (!c.running) continue;
    int status = 0;
    const pid_t r = ::waitpid(c.pid, &status, WNOHANG);
    if (r == c.pid) {
      c.running = false;
      c.status = status;
    }
  }
  return m_children;
}

std::string LocalLauncher::failures(double grace) {
  const auto until =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(long(grace * 1000));
  for (;;) {
    bool ended = false;
    for (const auto& c : poll())
      ended = ended || !c.running;
    if (ended || std::chrono::steady_clock::now() >= until) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::string out;
  for (const auto& c : m_children) {
    if (c.running || (WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0)) continue;
    out += (out.empty() ? "" : "; ") + std::string("rank ") + std::to_string(c.rank) + " (pid " +
           std::to_string(c.pid) + ") " + describeWaitStatus(c.status);
  }
  return out;
}

bool LocalLauncher::finish(double seconds) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(long(seconds * 1000));
  auto running = [&] {
    poll();
    for (const auto& c : m_children)
      if (c.running) return true;
    return false;
  };
  while (running() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  bool clean = !running();
  for (int round = 0; round < 2 && running(); ++round) {
    for (const auto& c : m_children)
      if (c.running) ::kill(c.pid, round == 0 ? SIGTERM : SIGKILL);
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
    while (running() && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (clean) {
    for (const auto& c : m_children)
      if (!exitedWell(c.status)) clean = false;
  }
  return clean;
}

LocalLauncher::~LocalLauncher() {
  if (!m_children.empty()) finish(5);
  // Reap anything left (SIGKILL cannot be ignored).
  for (auto& c : m_children) {
    if (c.running) ::waitpid(c.pid, &c.status, 0);
  }
}

}  // namespace netsmith::distributed
