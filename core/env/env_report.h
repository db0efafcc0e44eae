#pragma once

#include <string>
#include <vector>

#include "common/json.h"

namespace netsmith::env {

/// Facts about the machine and libraries that decide how fast (and whether) training runs.
struct EnvReport {
  std::string netsmithVersion;
  std::string torchVersion;
  std::string opencvVersion;
  bool torchBuiltWithCuda = false;
  bool cudaAvailable = false;
  std::vector<std::string> cudaDevices;  ///< "NVIDIA H200 (139.8 GiB)"
  std::string cudnnVersion;              ///< empty when absent
  int intraOpThreads = 0;
  int hardwareThreads = 0;
  std::string blasLibrary;  ///< the file that provides sgemm_, resolved
  std::string blasName;     ///< "OpenBLAS (pthread)", "reference BLAS", ...
  std::string blasConfig;   ///< OpenBLAS's own config string, when it is OpenBLAS
  bool blasIsReference = false;
  int blasThreads = 0;  ///< the BLAS's own thread count where it tells (OpenBLAS); 0: unknown
  std::string blasThreadsNote;  ///< why it is what it is, when Netsmith set it
  /// The malloc in use: "tcmalloc" (the programs link Debian's libtcmalloc-minimal4 where it
  /// was found at build time) or "glibc malloc", and the file that provides malloc.
  std::string allocatorName;
  std::string allocatorLibrary;
  double matmulGflops = 0.0;  ///< fp32 512x512 matrix product, measured at report time
  std::vector<std::string> warnings;
};

/// Collects the report. `measure` runs a ~0.1 s matrix-product benchmark.
EnvReport collectEnvReport(bool measure = true);
Json envReportToJson(const EnvReport& report);
std::string formatEnvReport(const EnvReport& report);

/// Sets LibTorch's intra-op thread count (0: one per hardware thread; at most maxThreads()).
/// Debian's LibTorch starts with 1 thread; every program calls this once at start-up. Returns
/// the count set. OpenBLAS's pthread build is held to one thread of its own unless
/// OPENBLAS_NUM_THREADS is set: its pool and LibTorch's OpenMP pool both spin between jobs, and
/// on the same cores they take turns (the default project's step ran at 0.72x).
int configureThreads(int threads = 0);

/// The most compute threads worth starting here: 4 x the hardware threads (a project from a
/// bigger machine, or "threads": 4096, would otherwise spend minutes starting and switching).
int maxThreads();

/// The most training processes worth running here at once (local data-parallel ranks, a
/// sweep's trials times their ranks): 4 x the hardware threads, at least 8. Each loads
/// LibTorch and its data; 16,000 of them would stall the machine.
int maxProcesses();

/// "8 processes at once on this machine (2 hardware threads; 4 a thread, at least 8)".
std::string describeMaxProcesses();

}  // namespace netsmith::env
