#pragma once

// Runs the real netsmith-cli binary (NETSMITH_CLI) and captures its output.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

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

}  // namespace netsmith::testutil
