#include "env/env_report.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

using namespace netsmith;

TEST(EnvReport, ReportsVersionsThreadsAndBlas) {
  env::configureThreads(2);
  const auto r = env::collectEnvReport(true);
  EXPECT_FALSE(r.torchVersion.empty());
  EXPECT_FALSE(r.opencvVersion.empty());
  EXPECT_EQ(r.intraOpThreads, 2);
  EXPECT_FALSE(r.blasName.empty());
  EXPECT_GT(r.matmulGflops, 0.0);
  const auto j = env::envReportToJson(r);
  for (const char* key :
       {"libtorch_version", "cuda_available", "intra_op_threads", "blas", "opencv_version"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_NE(env::formatEnvReport(r).find("BLAS"), std::string::npos);
  env::configureThreads(1);
}

TEST(EnvReport, ReferenceBlasIsFlaggedLoudly) {
  const auto r = env::collectEnvReport(false);
  // Whatever BLAS is installed, the warning appears exactly when it is the reference one.
  bool warned = false;
  for (const auto& w : r.warnings)
    warned = warned || w.find("reference BLAS") != std::string::npos;
  EXPECT_EQ(warned, r.blasIsReference);
  EXPECT_EQ(r.blasIsReference, r.blasLibrary.find("/blas/") != std::string::npos);
}

TEST(EnvReport, OpenBlasOwnPoolIsHeldToOneThreadUnlessTheUserChose) {
  // Asked of OpenBLAS itself (dlsym), not of the report.
  using IntFn = int (*)();
  const auto parallel = reinterpret_cast<IntFn>(::dlsym(RTLD_DEFAULT, "openblas_get_parallel"));
  const auto threads = reinterpret_cast<IntFn>(::dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
  const auto set =
      reinterpret_cast<void (*)(int)>(::dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
  if (!parallel || !threads || !set || parallel() != 1)
    GTEST_SKIP() << "the BLAS here is not OpenBLAS's pthread build";
  const char* before = std::getenv("OPENBLAS_NUM_THREADS");
  const std::string saved = before ? before : "";
  ::unsetenv("OPENBLAS_NUM_THREADS");
  set(2);
  env::configureThreads(2);
  EXPECT_EQ(threads(), 1);
  auto r = env::collectEnvReport(false);
  EXPECT_EQ(r.blasThreads, 1);
  EXPECT_NE(env::formatEnvReport(r).find("BLAS threads    1 (its own pthread pool"),
            std::string::npos);
  EXPECT_EQ(env::envReportToJson(r)["blas"]["threads"], 1);
  // A count the user set is theirs.
  ::setenv("OPENBLAS_NUM_THREADS", "2", 1);
  set(2);
  env::configureThreads(2);
  EXPECT_EQ(threads(), 2);
  r = env::collectEnvReport(false);
  EXPECT_NE(r.blasThreadsNote.find("OPENBLAS_NUM_THREADS"), std::string::npos);
  if (saved.empty())
    ::unsetenv("OPENBLAS_NUM_THREADS");
  else
    ::setenv("OPENBLAS_NUM_THREADS", saved.c_str(), 1);
  env::configureThreads(1);
}
