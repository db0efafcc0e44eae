// Reading a data-parallel job's place from the launchers' environment variables.
#include "distributed/dist_env.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "common/error.h"

using netsmith::distributed::distEnvFromEnvironment;

namespace {

/// Sets variables for one test and removes every launcher variable before and after.
class Environment {
 public:
  explicit Environment(const std::vector<std::pair<std::string, std::string>>& vars) {
    clear();
    for (const auto& [k, v] : vars)
      ::setenv(k.c_str(), v.c_str(), 1);
  }
  ~Environment() { clear(); }

 private:
  static void clear() {
    for (const char* k : {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR",
                          "MASTER_PORT", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID",
                          "SLURM_NTASKS_PER_NODE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                          "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE", "PMI_RANK",
                          "PMI_SIZE", "TORCHELASTIC_USE_AGENT_STORE", "NETSMITH_LOCAL_LAUNCH"})
      ::unsetenv(k);
  }
};

}  // namespace

TEST(DistEnv, NoLauncherIsOneProcess) {
  Environment env({});
  const auto e = distEnvFromEnvironment();
  EXPECT_FALSE(e.distributed());
  EXPECT_EQ(e.worldSize, 1);
  EXPECT_EQ(e.rank, 0);
  EXPECT_EQ(e.launcher, "none");
}

TEST(DistEnv, TorchrunVariables) {
  Environment env({{"RANK", "3"},
                   {"WORLD_SIZE", "8"},
                   {"LOCAL_RANK", "1"},
                   {"LOCAL_WORLD_SIZE", "2"},
                   {"MASTER_ADDR", "node07"},
                   {"MASTER_PORT", "29612"},
                   {"TORCHELASTIC_USE_AGENT_STORE", "True"}});
  const auto e = distEnvFromEnvironment();
  EXPECT_TRUE(e.distributed());
  EXPECT_EQ(e.launcher, "torchrun");
  EXPECT_EQ(e.rank, 3);
  EXPECT_EQ(e.worldSize, 8);
  EXPECT_EQ(e.localRank, 1);
  EXPECT_EQ(e.localWorldSize, 2);
  EXPECT_EQ(e.masterAddr, "node07");
  EXPECT_EQ(e.masterPort, 29612);
  EXPECT_TRUE(e.storeHostedByLauncher);
}

TEST(DistEnv, SlurmAndMpiVariables) {
  {
    Environment env({{"SLURM_PROCID", "5"},
                     {"SLURM_NTASKS", "6"},
                     {"SLURM_LOCALID", "2"},
                     {"SLURM_NTASKS_PER_NODE", "3(x2)"},
                     {"MASTER_ADDR", "head"}});
    const auto e = distEnvFromEnvironment();
    EXPECT_EQ(e.launcher, "slurm");
    EXPECT_EQ(e.rank, 5);
    EXPECT_EQ(e.worldSize, 6);
    EXPECT_EQ(e.localRank, 2);
    EXPECT_EQ(e.localWorldSize, 3);
    EXPECT_EQ(e.masterAddr, "head");
    EXPECT_FALSE(e.storeHostedByLauncher);
  }
  {
    Environment env({{"OMPI_COMM_WORLD_RANK", "1"},
                     {"OMPI_COMM_WORLD_SIZE", "4"},
                     {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                     {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}});
    const auto e = distEnvFromEnvironment();
    EXPECT_EQ(e.launcher, "mpi");
    EXPECT_EQ(e.rank, 1);
    EXPECT_EQ(e.worldSize, 4);
    EXPECT_EQ(e.masterAddr, "127.0.0.1");
    EXPECT_EQ(e.masterPort, 29500);
  }
  {
    // torchrun's variables win over the scheduler's when both are set.
    Environment env(
        {{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"SLURM_PROCID", "7"}, {"SLURM_NTASKS", "16"}});
    const auto e = distEnvFromEnvironment();
    EXPECT_EQ(e.launcher, "torchrun");
    EXPECT_EQ(e.worldSize, 2);
  }
}

TEST(DistEnv, BadValuesNameTheVariable) {
  const auto message = [](const std::vector<std::pair<std::string, std::string>>& vars) {
    Environment env(vars);
    try {
      distEnvFromEnvironment();
    } catch (const netsmith::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({{"RANK", "x"}, {"WORLD_SIZE", "2"}}).find("RANK=\"x\""), std::string::npos);
  EXPECT_NE(message({{"RANK", "2"}, {"WORLD_SIZE", "2"}}).find("from 0 to 1"), std::string::npos);
  EXPECT_NE(message({{"WORLD_SIZE", "2"}}).find("RANK is not"), std::string::npos);
  EXPECT_NE(message({{"RANK", "0"}, {"WORLD_SIZE", "0"}}).find("WORLD_SIZE"), std::string::npos);
  EXPECT_NE(message({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "70000"}})
                .find("MASTER_PORT=\"70000\""),
            std::string::npos);
}
