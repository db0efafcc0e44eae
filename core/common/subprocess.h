#pragma once

// Child processes of this one: the local ranks of data-parallel training and a sweep's trials.
// fork + execve with the environment of this process, some variables replaced; standard output
// and error optionally appended to files; the child gets SIGTERM when this process dies. No
// LibTorch here.
#include <sys/types.h>

#include <string>
#include <vector>

namespace netsmith {

struct SpawnSpec {
  std::string program;            ///< an absolute path (execve does not search PATH)
  std::vector<std::string> args;  ///< after the program name
  /// "NAME=value" entries replacing (or adding to) this process's environment.
  std::vector<std::string> env;
  /// Variables of this process not passed on: each entry matches names starting with it.
  std::vector<std::string> dropPrefixes;
  std::string stdoutPath;                ///< appended to; "" keeps this process's standard output
  std::string stderrPath;                ///< appended to; "" keeps this process's standard error
  std::string what = "a child process";  ///< for messages: "rank 2", "trial 7"
};

/// Starts the child and returns its pid. Throws netsmith::Error when it cannot be started (a
/// file that cannot be opened, fork failing). A program that cannot be run exits with 127.
pid_t spawnChild(const SpawnSpec& spec);

/// Waits for the child `pid` at most `seconds`; returns its wait status. A child still running
/// then is killed (SIGKILL) and reaped, and netsmith::Error says that `what` took too long.
int waitChildFor(pid_t pid, double seconds, const std::string& what);

/// "exited with status 1", "was killed by signal 9 (Killed)".
std::string describeWaitStatus(int status);

/// True for a wait status of a normal exit with status 0.
bool exitedWell(int status);

}  // namespace netsmith
