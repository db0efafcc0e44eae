#include "common/subprocess.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <thread>

#include "common/error.h"
#include "common/file_util.h"

extern char** environ;

namespace netsmith {

namespace {

bool replaced(const char* entry, const SpawnSpec& spec) {
  for (const auto& prefix : spec.dropPrefixes) {
    if (std::strncmp(entry, prefix.c_str(), prefix.size()) == 0) return true;
  }
  for (const auto& e : spec.env) {
    const auto eq = e.find('=');
    if (std::strncmp(entry, e.c_str(), eq + 1) == 0) return true;
  }
  return false;
}

int openForAppend(const std::string& path, const std::string& what) {
  try {
    return openForAppendNoFollow(path);  // a link planted in a sweep folder is refused
  } catch (const IoError& e) {
    throw IoError("cannot start " + what + ": " + e.what());
  } catch (const Error& e) {
    throw Error("cannot start " + what + ": " + e.what());
  }
}

}  // namespace

pid_t spawnChild(const SpawnSpec& spec) {
  // Everything the child needs is built before fork(): after it only async-signal-safe calls.
  std::vector<std::string> envStrings;
  for (char** e = environ; e && *e; ++e) {
    if (!replaced(*e, spec)) envStrings.emplace_back(*e);
  }
  envStrings.insert(envStrings.end(), spec.env.begin(), spec.env.end());
  std::vector<char*> envp;
  for (auto& s : envStrings)
    envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argStrings{spec.program};
  argStrings.insert(argStrings.end(), spec.args.begin(), spec.args.end());
  std::vector<char*> argv;
  for (auto& s : argStrings)
    argv.push_back(s.data());
  argv.push_back(nullptr);
  const int outFd = spec.stdoutPath.empty() ? -1 : openForAppend(spec.stdoutPath, spec.what);
  int errFd = -1;
  try {
    errFd = spec.stderrPath.empty() ? -1 : openForAppend(spec.stderrPath, spec.what);
  } catch (...) {
    if (outFd >= 0) ::close(outFd);
    throw;
  }

  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    if (outFd >= 0) ::close(outFd);
    if (errFd >= 0) ::close(errFd);
    throw Error("cannot start " + spec.what + ": " + std::strerror(err));
  }
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(127);  // the parent died before prctl took effect
    if (outFd >= 0 && ::dup2(outFd, STDOUT_FILENO) < 0) ::_exit(127);
    if (errFd >= 0 && ::dup2(errFd, STDERR_FILENO) < 0) ::_exit(127);
    ::execve(spec.program.c_str(), argv.data(), envp.data());
    const char msg[] = "netsmith: cannot run the child program\n";
    (void)!::write(STDERR_FILENO, msg, sizeof msg - 1);
    ::_exit(127);
  }
  if (outFd >= 0) ::close(outFd);
  if (errFd >= 0) ::close(errFd);
  return pid;
}

int waitChildFor(pid_t pid, double seconds, const std::string& what) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  for (;;) {
    int status = 0;
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) return status;
    if (done < 0 && errno != EINTR)
      throw Error("cannot wait for " + what + ": " + std::strerror(errno));
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      char limit[32];
      std::snprintf(limit, sizeof limit, "%g", seconds);
      throw Error(what + " took longer than " + limit + " s and was stopped");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

std::string describeWaitStatus(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return "was killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
  }
  return "ended";
}

bool exitedWell(int status) {
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace netsmith
