#pragma once

// The exit statuses of netsmith-cli, named once: the CLI returns them; the sweep runner (its
// trials) and the studio's Experiments page (its sweep) read them from the child processes
// they start.
namespace netsmith {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;  ///< a runtime failure (training diverged, a trial failed)
constexpr int kExitInvalid = 2;  ///< invalid input: flags, project, data, a file from elsewhere
constexpr int kExitIo = 3;       ///< the machine failed: disk full, permission denied
/// Stopped by Ctrl-C or SIGTERM after writing what resumes it (a checkpoint, sweep.json).
constexpr int kExitInterrupted = 130;

}  // namespace netsmith
