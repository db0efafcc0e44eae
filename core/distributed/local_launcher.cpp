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

extern char** environ;

namespace netsmith::distributed {

namespace {

bool overridden(const char* entry, const std::vector<std::string>& ours) {
  static const char* const kDropped[] = {"SLURM_PROCID",     "SLURM_NTASKS",
                                         "OMPI_COMM_WORLD_", "PMI_RANK",
                                         "PMI_SIZE",         "TORCHELASTIC_USE_AGENT_STORE"};
  for (const char* prefix : kDropped) {
    if (std::strncmp(entry, prefix, std::strlen(prefix)) == 0) return true;
  }
  for (const auto& e : ours) {
    const auto eq = e.find('=');
    if (std::strncmp(entry, e.c_str(), eq + 1) == 0) return true;
  }
  return false;
}

std::string describeStatus(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return "was killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
  }
  return "ended";
}

}  // namespace

void LocalLauncher::start(const std::string& program, const std::vector<std::string>& args,
                          const DistEnv& job) {
  const pid_t parent = ::getpid();
  for (int rank = 1; rank < job.worldSize; ++rank) {
    // Everything the child needs is built before fork(): after it only async-signal-safe calls.
    const auto ours = rankEnvironment(job, rank);
    std::vector<std::string> envStrings;
    for (char** e = environ; e && *e; ++e) {
      if (!overridden(*e, ours)) envStrings.emplace_back(*e);
    }
    envStrings.insert(envStrings.end(), ours.begin(), ours.end());
    std::vector<char*> envp;
    for (auto& s : envStrings)
      envp.push_back(s.data());
    envp.push_back(nullptr);
    std::vector<std::string> argStrings{program};
    argStrings.insert(argStrings.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& s : argStrings)
      argv.push_back(s.data());
    argv.push_back(nullptr);

    const pid_t pid = ::fork();
    if (pid < 0)
      throw Error("cannot start rank " + std::to_string(rank) + ": " + std::strerror(errno));
    if (pid == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (::getppid() != parent) ::_exit(127);  // the parent died before prctl took effect
      ::execve(program.c_str(), argv.data(), envp.data());
      const char msg[] = "netsmith: cannot run the rank program\n";
      (void)!::write(STDERR_FILENO, msg, sizeof msg - 1);
      ::_exit(127);
    }
    m_children.push_back({rank, pid, true, 0});
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
           std::to_string(c.pid) + ") " + describeStatus(c.status);
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
      if (!WIFEXITED(c.status) || WEXITSTATUS(c.status) != 0) clean = false;
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
