#include "env/env_report.h"

#include <gtest/gtest.h>

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
