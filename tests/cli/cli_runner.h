#pragma once

// Runs the real netsmith-cli binary (NETSMITH_CLI) and captures its output.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace netsmith::testutil {

struct CliResult {
  int exitCode = -1;
  std::string output;  ///< stdout and stderr together
};

/// Runs a shell command line (stderr joined to stdout) and captures its output.
inline CliResult runShell(const std::string& command) {
  CliResult r;
  const std::string cmd = command + " 2>&1";
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), buf.size(), pipe))
    r.output += buf.data();
  const int status = ::pclose(pipe);
  r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

inline CliResult runCli(const std::string& args) {
  return runShell(std::string(NETSMITH_CLI) + " " + args);
}

/// Starts netsmith-cli with `args` (and extra environment entries) in the background, its
/// standard output (and, with `joinStderr`, its errors) to `log`. Returns the child's pid.
inline pid_t startCli(const std::vector<std::string>& args, const std::string& log,
                      const std::vector<std::string>& env = {}, bool joinStderr = true) {
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ::dup2(fd, STDOUT_FILENO);
  if (joinStderr) ::dup2(fd, STDERR_FILENO);
  for (const auto& e : env)
    ::putenv(const_cast<char*>(e.c_str()));
  std::vector<char*> argv{const_cast<char*>(NETSMITH_CLI)};
  for (const auto& a : args)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  ::execv(NETSMITH_CLI, argv.data());
  ::_exit(127);
}

struct MeasuredRun {
  int exitCode = -1;   ///< -1 when killed by a signal
  std::string output;  ///< stdout and stderr together
  double seconds = 0;  ///< wall time
  long peakKiB = 0;    ///< the child's peak resident set (its own, not this process's)
};

/// Runs netsmith-cli with `args` (no shell), killed after `limitSeconds`, and measures its wall
/// time and peak resident memory (wait4's rusage of that child alone). `addressSpaceKiB` > 0
/// caps the child's address space (RLIMIT_AS), so that an allocation past it fails.
inline MeasuredRun runCliMeasured(const std::vector<std::string>& args, double limitSeconds,
                                  long addressSpaceKiB = 0) {
  MeasuredRun r;
  char log[] = "/tmp/netsmith-cli-run-XXXXXX";
  const int fd = ::mkstemp(log);
  if (fd < 0) return r;
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fd, STDOUT_FILENO);
    ::dup2(fd, STDERR_FILENO);
    std::vector<char*> argv{const_cast<char*>(NETSMITH_CLI)};
    for (const auto& a : args)
      argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::alarm(static_cast<unsigned>(limitSeconds) + 1);  // SIGALRM ends it past the limit
    if (addressSpaceKiB > 0) {
      const rlim_t bytes = rlim_t(addressSpaceKiB) * 1024;
      const struct rlimit cap { bytes, bytes };
      ::setrlimit(RLIMIT_AS, &cap);
    }
    ::execv(NETSMITH_CLI, argv.data());
    ::_exit(127);
  }
  int status = 0;
  struct rusage usage {};
  ::wait4(pid, &status, 0, &usage);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.peakKiB = usage.ru_maxrss;
  r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(log, std::ios::binary);
  r.output.assign(std::istreambuf_iterator<char>(in), {});
  ::close(fd);
  ::unlink(log);
  return r;
}

/// Waits until `log` contains `text` (true) or `seconds` pass (false).
inline bool waitForText(const std::string& log, const std::string& text, double seconds) {
  const auto until =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(long(seconds * 1000));
  while (std::chrono::steady_clock::now() < until) {
    std::ifstream in(log);
    std::stringstream ss;
    ss << in.rdbuf();
    if (ss.str().find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

}  // namespace netsmith::testutil
