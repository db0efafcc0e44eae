#include <gtest/gtest.h>

#include "env/env_report.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // Tests run two at a time on small machines: keep LibTorch to one thread each.
  netsmith::env::configureThreads(1);
  return RUN_ALL_TESTS();
}
