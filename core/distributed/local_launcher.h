#pragma once

// Starts the other ranks of a single-machine job as child processes (netsmith-cli train
// --nproc N, and the studio's "local processes"). No LibTorch here.
#include <sys/types.h>

#include <string>
#include <vector>

#include "distributed/dist_env.h"

namespace netsmith::distributed {

class LocalLauncher {
 public:
  LocalLauncher() = default;
  /// Waits for the children a little, then ends those still running (SIGTERM, then SIGKILL).
  ~LocalLauncher();
  LocalLauncher(const LocalLauncher&) = delete;
  LocalLauncher& operator=(const LocalLauncher&) = delete;

  /// Starts ranks 1..job.worldSize-1 running `program args...`, each with the environment of
  /// this process plus rankEnvironment(job, rank). A child gets SIGTERM when this process dies.
  /// Throws netsmith::Error when a process cannot be started.
  void start(const std::string& program, const std::vector<std::string>& args, const DistEnv& job);

  struct Child {
    int rank = 0;
    pid_t pid = -1;
    bool running = true;
    int status = 0;  ///< wait status once ended
  };
  /// Reaps children that ended and returns every child's state.
  const std::vector<Child>& poll();
  /// "rank 1 (pid 4242) exited with status 1; rank 2 was killed by signal 9", or "" when
  /// every child is running or ended well.
  /// Waits up to `grace` seconds for a child to be seen ending (a peer's socket can close
  /// just before its process can be reaped).
  std::string failures(double grace = 0);
  /// Waits up to `seconds` for every child to end, then terminates the rest. Returns true when
  /// all of them ended by themselves with status 0.
  bool finish(double seconds);

 private:
  std::vector<Child> m_children;
};

}  // namespace netsmith::distributed
