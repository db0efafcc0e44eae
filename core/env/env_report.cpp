#include "env/env_report.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <opencv2/core/version.hpp>
#include <sstream>
#include <thread>

#include "common/torch_compat.h"
#include "graph/model_summary.h"
#include "netsmith/version.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <torch/torch.h>

#ifdef NETSMITH_HAS_CUDA
#include <c10/cuda/CUDAFunctions.h>
#include <cuda_runtime_api.h>
#endif

namespace netsmith::env {

namespace {

std::string resolvedPath(const char* path) {
  char buf[PATH_MAX];
  if (path && ::realpath(path, buf)) return buf;
  return path ? path : "";
}

void detectBlas(EnvReport& r) {
  void* sym = ::dlsym(RTLD_DEFAULT, "sgemm_");
  Dl_info info{};
  if (sym && ::dladdr(sym, &info) && info.dli_fname) r.blasLibrary = resolvedPath(info.dli_fname);
  const std::string& lib = r.blasLibrary;
  using ConfigFn = char* (*)();
  if (lib.find("openblas") != std::string::npos) {
    r.blasName = lib.find("pthread") != std::string::npos  ? "OpenBLAS (pthread)"
                 : lib.find("openmp") != std::string::npos ? "OpenBLAS (OpenMP)"
                                                           : "OpenBLAS";
    if (auto fn = reinterpret_cast<ConfigFn>(::dlsym(RTLD_DEFAULT, "openblas_get_config")))
      r.blasConfig = fn();
    using ThreadsFn = int (*)();
    if (auto fn = reinterpret_cast<ThreadsFn>(::dlsym(RTLD_DEFAULT, "openblas_get_num_threads")))
      r.blasThreads = fn();
  } else if (lib.find("mkl") != std::string::npos) {
    r.blasName = "Intel MKL";
  } else if (lib.find("blis") != std::string::npos) {
    r.blasName = "BLIS";
  } else if (lib.find("atlas") != std::string::npos) {
    r.blasName = "ATLAS";
  } else if (lib.find("/blas/") != std::string::npos) {
    r.blasName = "reference BLAS (netlib)";
    r.blasIsReference = true;
  } else if (lib.empty()) {
    r.blasName = "none found (LibTorch uses its own kernels)";
  } else {
    r.blasName = "unknown";
  }
  if (r.blasIsReference) {
    r.warnings.push_back(
        "LibTorch is using the reference BLAS: matrix products run ~35x slower. Install "
        "libopenblas0-pthread and select it: update-alternatives --config "
        "libblas.so.3-x86_64-linux-gnu");
  }
}

double measureMatmul() {
  torch::NoGradGuard noGrad;
  const auto a = torch::rand({512, 512});
  const auto b = torch::rand({512, 512});
  a.mm(b);  // warm up
  int reps = 0;
  const auto start = std::chrono::steady_clock::now();
  double seconds = 0;
  do {
    a.mm(b);
    ++reps;
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  } while (seconds < 0.1);
  return 2.0 * 512 * 512 * 512 * reps / seconds / 1e9;
}

}  // namespace

int maxThreads() {
  return 4 * static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

int maxProcesses() {
  return std::max(8, 4 * static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
}

std::string describeMaxProcesses() {
  return std::to_string(maxProcesses()) + " processes at once on this machine (" +
         std::to_string(std::max(1u, std::thread::hardware_concurrency())) +
         " hardware threads; 4 a thread, at least 8)";
}

namespace {
/// openblas_get_parallel(): 0 a sequential build, 1 its own pthread pool, 2 OpenMP (LibTorch's
/// pool); -1 where the BLAS is not OpenBLAS.
int openBlasParallelMode() {
  const auto parallel = reinterpret_cast<int (*)()>(::dlsym(RTLD_DEFAULT, "openblas_get_parallel"));
  return parallel ? parallel() : -1;
}

bool blasThreadsChosenByUser() {
  const char* v = std::getenv("OPENBLAS_NUM_THREADS");
  return v && *v;
}
}  // namespace

int configureThreads(int threads) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads = std::min(threads, maxThreads());
  at::set_num_threads(threads);
  // LibTorch's own kernels (convolutions, batch norm) run on its OpenMP pool; OpenBLAS's
  // pthread build starts a second pool for matrix products. Both spin after a job, so on the
  // same cores each waits for the other's spinning to end: measured on the default project,
  // its Linear layers took ~3x their time alone and the whole step 1.35x longer than with one
  // BLAS thread. One BLAS thread loses little: LibTorch's products here are small.
  if (openBlasParallelMode() == 1 && !blasThreadsChosenByUser()) {
    if (const auto set =
            reinterpret_cast<void (*)(int)>(::dlsym(RTLD_DEFAULT, "openblas_set_num_threads")))
      set(1);
  }
  return at::get_num_threads();
}

namespace {
void detectAllocator(EnvReport& r) {
  // tcmalloc exports tc_malloc and tc_version; glibc's malloc has neither.
  void* sym = ::dlsym(RTLD_DEFAULT, "tc_malloc");
  r.allocatorName = sym ? "tcmalloc" : "glibc malloc";
  Dl_info info{};
  void* mallocSym = sym ? sym : ::dlsym(RTLD_DEFAULT, "malloc");
  if (mallocSym && ::dladdr(mallocSym, &info) && info.dli_fname)
    r.allocatorLibrary = resolvedPath(info.dli_fname);
}
}  // namespace

EnvReport collectEnvReport(bool measure) {
  EnvReport r;
  r.netsmithVersion = NETSMITH_VERSION;
  r.torchVersion = compat::torchVersion();
  r.opencvVersion = CV_VERSION;
#ifdef NETSMITH_HAS_CUDA
  r.torchBuiltWithCuda = true;
#endif
  r.cudaAvailable = torch::cuda::is_available();
  if (r.cudaAvailable) {
#ifdef NETSMITH_HAS_CUDA
    const int n = static_cast<int>(torch::cuda::device_count());
    for (int i = 0; i < n; ++i) {
      cudaDeviceProp prop{};
      if (cudaGetDeviceProperties(&prop, i) == cudaSuccess) {
        r.cudaDevices.push_back(std::string(prop.name) + " (" +
                                graph::formatBytes(static_cast<std::int64_t>(prop.totalGlobalMem)) +
                                ", sm_" + std::to_string(prop.major) + std::to_string(prop.minor) +
                                ")");
      }
    }
#endif
    if (at::globalContext().hasCuDNN()) {
      const long v = at::detail::getCUDAHooks().versionCuDNN();
      r.cudnnVersion = std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 100) + "." +
                       std::to_string(v % 100);
    }
  }
  r.intraOpThreads = at::get_num_threads();
  r.hardwareThreads = static_cast<int>(std::thread::hardware_concurrency());
  detectBlas(r);
  if (r.blasThreads > 0) {
    const int mode = openBlasParallelMode();
    r.blasThreadsNote = mode == 2   ? "OpenMP: LibTorch's pool"
                        : mode == 0 ? "sequential build"
                        : blasThreadsChosenByUser()
                            ? "set by OPENBLAS_NUM_THREADS"
                            : "its own pthread pool, held to 1 next to LibTorch's threads";
  }
  detectAllocator(r);
  if (measure) r.matmulGflops = measureMatmul();
  if (r.intraOpThreads == 1 && r.hardwareThreads > 1) {
    r.warnings.push_back("LibTorch runs on 1 thread of " + std::to_string(r.hardwareThreads) +
                         "; pass --threads 0 to use them all");
  }
  return r;
}

Json envReportToJson(const EnvReport& r) {
  Json j = Json::object();
  j["netsmith_version"] = r.netsmithVersion;
  j["libtorch_version"] = r.torchVersion;
  j["opencv_version"] = r.opencvVersion;
  j["libtorch_cuda_build"] = r.torchBuiltWithCuda;
  j["cuda_available"] = r.cudaAvailable;
  j["cuda_devices"] = r.cudaDevices;
  j["cudnn_version"] = r.cudnnVersion.empty() ? Json() : Json(r.cudnnVersion);
  j["intra_op_threads"] = r.intraOpThreads;
  j["hardware_threads"] = r.hardwareThreads;
  j["blas"] = Json{{"name", r.blasName},
                   {"library", r.blasLibrary},
                   {"config", r.blasConfig},
                   {"is_reference", r.blasIsReference},
                   {"threads", r.blasThreads > 0 ? Json(r.blasThreads) : Json()}};
  j["allocator"] = Json{{"name", r.allocatorName}, {"library", r.allocatorLibrary}};
  j["matmul_gflops"] = r.matmulGflops;
  j["warnings"] = r.warnings;
  return j;
}

std::string formatEnvReport(const EnvReport& r) {
  std::ostringstream os;
  os << "Netsmith        " << r.netsmithVersion << '\n';
  os << "LibTorch        " << r.torchVersion
     << (r.torchBuiltWithCuda ? " (CUDA build)" : " (CPU build)") << '\n';
  os << "OpenCV          " << r.opencvVersion << '\n';
  os << "CUDA            " << (r.cudaAvailable ? "available" : "not available") << '\n';
  for (std::size_t i = 0; i < r.cudaDevices.size(); ++i)
    os << "  cuda:" << i << "        " << r.cudaDevices[i] << '\n';
  if (!r.cudnnVersion.empty()) os << "cuDNN           " << r.cudnnVersion << '\n';
  os << "Threads         " << r.intraOpThreads << " intra-op (of " << r.hardwareThreads
     << " hardware)\n";
  os << "BLAS            " << r.blasName
     << (r.blasLibrary.empty() ? "" : "  [" + r.blasLibrary + "]") << '\n';
  if (!r.blasConfig.empty()) os << "                " << r.blasConfig << '\n';
  if (r.blasThreads > 0)
    os << "BLAS threads    " << r.blasThreads
       << (r.blasThreadsNote.empty() ? "" : " (" + r.blasThreadsNote + ")") << '\n';
  os << "malloc          " << r.allocatorName
     << (r.allocatorLibrary.empty() ? "" : "  [" + r.allocatorLibrary + "]") << '\n';
  if (r.matmulGflops > 0) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f GFLOP/s", r.matmulGflops);
    os << "fp32 matmul     " << buf << " (512x512, measured now)\n";
  }
  for (const auto& w : r.warnings)
    os << "WARNING: " << w << '\n';
  return os.str();
}

}  // namespace netsmith::env
