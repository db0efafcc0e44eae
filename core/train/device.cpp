#include "train/device.h"

#include <unistd.h>

#include <fstream>

#include "common/error.h"

#if defined(NETSMITH_HAS_CUDA)
#include <c10/cuda/CUDACachingAllocator.h>
#endif

namespace netsmith::train {

run::MemoryFigure memoryFigure(const torch::Device& device) {
  run::MemoryFigure m;
#if defined(NETSMITH_HAS_CUDA)
  if (device.is_cuda()) {
    using namespace c10::cuda::CUDACachingAllocator;
    const auto stats = getDeviceStats(device.index() < 0 ? 0 : device.index());
    const auto all = static_cast<std::size_t>(StatType::AGGREGATE);
    m.kind = "cuda_allocator";
    m.bytes = stats.allocated_bytes[all].current;
    m.reservedBytes = stats.reserved_bytes[all].current;
    m.peakBytes = stats.allocated_bytes[all].peak;
    return m;
  }
#else
  (void)device;
#endif
  std::ifstream statm("/proc/self/statm");
  long long pages = 0, resident = 0;
  if (statm >> pages >> resident)
    m.bytes = resident * static_cast<long long>(::sysconf(_SC_PAGESIZE));
  return m;
}

torch::Device resolveDevice(const std::string& name) {
  if (name.empty() || name == "cpu") return torch::Device(torch::kCPU);
  if (name.rfind("cuda", 0) != 0)
    throw Error("train.device: unknown device \"" + name + "\"; use cpu, cuda or cuda:N");
  if (!torch::cuda::is_available()) {
#if defined(NETSMITH_HAS_CUDA)
    throw Error("train.device is \"" + name +
                "\" but no CUDA device is available on this machine; use \"cpu\"");
#else
    throw Error("train.device is \"" + name +
                "\" but this build of Netsmith uses a CPU-only LibTorch; use \"cpu\" or build "
                "against a CUDA LibTorch");
#endif
  }
  const int index = name.size() > 5 ? std::stoi(name.substr(5)) : 0;
  const auto count = static_cast<int>(torch::cuda::device_count());
  if (index >= count) {
    throw Error("train.device is \"" + name + "\" but this machine has " + std::to_string(count) +
                " CUDA device" + (count == 1 ? "" : "s") + " (cuda:0" +
                (count > 1 ? "..cuda:" + std::to_string(count - 1) : std::string()) + ")");
  }
  return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index));
}

}  // namespace netsmith::train
