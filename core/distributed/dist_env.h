#pragma once

// Where this process stands in a data-parallel job, read from the launcher's environment. No
// LibTorch here: the CLI and the studio include it freely.
#include <string>
#include <vector>

namespace netsmith::distributed {

/// The torchrun variables (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR,
/// MASTER_PORT), or what Slurm (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID) and MPI launchers
/// (OMPI_COMM_WORLD_RANK/SIZE/LOCAL_RANK, PMI_RANK/PMI_SIZE) set in their place.
struct DistEnv {
  int rank = 0;
  int worldSize = 1;
  int localRank = 0;
  int localWorldSize = 1;
  std::string masterAddr = "127.0.0.1";
  int masterPort = 29500;
  /// The launcher hosts the TCPStore (torchrun's TORCHELASTIC_USE_AGENT_STORE), so rank 0
  /// connects to it instead of serving it.
  bool storeHostedByLauncher = false;
  /// Rank 0 serves the store on a free port it picks itself.
  bool pickFreePort = false;
  /// The rendezvous is a file (c10d's FileStore) in a folder only this user can enter, not a
  /// TCP listener: netsmith's own local launch (--nproc, NETSMITH_STORE_FILE).
  std::string storeFile;
  std::string launcher = "none";  ///< torchrun, slurm, mpi, netsmith

  bool distributed() const { return worldSize > 1; }
};

/// Reads the environment. Throws netsmith::Error naming the variable when a value is not a
/// number or out of range (RANK=3 with WORLD_SIZE=2).
DistEnv distEnvFromEnvironment();

/// The environment entries ("NAME=value") that put a child process at `rank` of a local job.
std::vector<std::string> rankEnvironment(const DistEnv& job, int rank);

}  // namespace netsmith::distributed
