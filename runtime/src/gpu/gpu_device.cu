#include "scalebench/gpu_device.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <atomic>

#include "scalebench/gpu_error.cuh"

namespace sb::gpu {

int sm_count(int device) {
  static std::array<std::atomic<int>, 64> known{};  // 0: not read yet
  const bool cached = device >= 0 && device < static_cast<int>(known.size());
  if (cached) {
    if (const int n = known[static_cast<std::size_t>(device)].load(std::memory_order_relaxed))
      return n;
  }
  int n = 0;
  SB_CUDA_CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device));
  n = std::max(n, 1);
  if (cached) known[static_cast<std::size_t>(device)].store(n, std::memory_order_relaxed);
  return n;
}

int sm_count() {
  int device = 0;
  SB_CUDA_CHECK(cudaGetDevice(&device));
  return sm_count(device);
}

}  // namespace sb::gpu
