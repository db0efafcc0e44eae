#include "distributed/dist_env.h"

#include <cstdlib>

#include "common/error.h"

namespace netsmith::distributed {

namespace {

const char* variable(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

int number(const char* name, const char* value, int lo, int hi) {
  char* end = nullptr;
  const long v = std::strtol(value, &end, 10);
  if (end == value || *end != '\0' || v < lo || v > hi) {
    throw Error(std::string("environment variable ") + name + "=\"" + value +
                "\": expected a whole number from " + std::to_string(lo) + " to " +
                std::to_string(hi));
  }
  return static_cast<int>(v);
}

}  // namespace

DistEnv distEnvFromEnvironment() {
  DistEnv env;
  struct Scheme {
    const char* launcher;
    const char* rank;
    const char* size;
    const char* localRank;
    const char* localSize;
  };
  static const Scheme schemes[] = {
      {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"},
      {"slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"},
      {"mpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
       "OMPI_COMM_WORLD_LOCAL_SIZE"},
      {"mpi", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"},
  };
  for (const auto& s : schemes) {
    const char* size = variable(s.size);
    if (!size) continue;
    env.launcher = s.launcher;
    env.worldSize = number(s.size, size, 1, 1 << 20);
    const char* rank = variable(s.rank);
    if (!rank) {
      throw Error(std::string(s.size) + " is set but " + s.rank +
                  " is not: every process needs its rank");
    }
    env.rank = number(s.rank, rank, 0, env.worldSize - 1);
    env.localRank = env.rank;
    env.localWorldSize = env.worldSize;
    if (const char* v = variable(s.localRank)) env.localRank = number(s.localRank, v, 0, 1 << 20);
    if (const char* v = variable(s.localSize)) {
      // Slurm writes "4(x2)" for uneven nodes: the leading number is this node's.
      env.localWorldSize = std::atoi(v) > 0 ? std::atoi(v) : env.worldSize;
    }
    break;
  }
  if (const char* v = variable("MASTER_ADDR")) env.masterAddr = v;
  if (const char* v = variable("MASTER_PORT")) env.masterPort = number("MASTER_PORT", v, 1, 65535);
  if (const char* v = variable("TORCHELASTIC_USE_AGENT_STORE"))
    env.storeHostedByLauncher = std::string(v) == "True" || std::string(v) == "1";
  if (variable("NETSMITH_LOCAL_LAUNCH")) env.launcher = "netsmith";
  if (const char* v = variable("NETSMITH_STORE_FILE")) env.storeFile = v;
  return env;
}

std::vector<std::string> rankEnvironment(const DistEnv& job, int rank) {
  std::vector<std::string> env{"RANK=" + std::to_string(rank),
                               "WORLD_SIZE=" + std::to_string(job.worldSize),
                               "LOCAL_RANK=" + std::to_string(rank),
                               "LOCAL_WORLD_SIZE=" + std::to_string(job.worldSize),
                               "MASTER_ADDR=" + job.masterAddr,
                               "MASTER_PORT=" + std::to_string(job.masterPort),
                               "NETSMITH_LOCAL_LAUNCH=1"};
  if (!job.storeFile.empty()) env.push_back("NETSMITH_STORE_FILE=" + job.storeFile);
  return env;
}

}  // namespace netsmith::distributed
