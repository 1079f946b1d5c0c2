// Host helpers of the groupby GPU steps (launch_config.cuh).
#include "groupby/gpu/detail/launch_config.cuh"

#include <algorithm>
#include <map>
#include <mutex>
#include <utility>

#include "scalebench/gpu_error.cuh"

namespace sb::groupby::gpu::detail {

int current_device() {
  int dev = 0;
  SB_CUDA_CHECK(cudaGetDevice(&dev));
  return dev;
}

int device_sms() {
  int sms = 0;
  SB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, current_device()));
  return sms;
}

void opt_in_shared(const void* kernel, std::size_t bytes) {
  if (bytes <= 48 * 1024) return;
  static std::mutex m;
  static std::map<std::pair<int, const void*>, std::size_t> opted;
  const int dev = current_device();
  const std::lock_guard<std::mutex> lock(m);
  std::size_t& done = opted[{dev, kernel}];
  if (bytes > done) {
    SB_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(bytes)));
    done = bytes;
  }
}

int grid_for(std::int64_t n, int threads, int per_sm) {
  static const int sms = device_sms();
  const std::int64_t want = (n + threads - 1) / threads;
  return static_cast<int>(
      std::max<std::int64_t>(1, std::min<std::int64_t>(want, std::int64_t{sms} * per_sm)));
}

int resident_blocks(const void* kernel, int threads, std::size_t smem) {
  static std::mutex m;
  static std::map<std::pair<int, const void*>, int> known;
  const int dev = current_device();
  const std::lock_guard<std::mutex> lock(m);
  auto it = known.find({dev, kernel});
  if (it == known.end()) {
    int n = 0;
    SB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, threads, smem));
    it = known.emplace(std::make_pair(dev, kernel), std::max(n, 1)).first;
  }
  return it->second;
}

int log2_capacity(const HashTable& t) {
  int b = 0;
  while ((std::int64_t{1} << b) < t.capacity) ++b;
  return b;
}

void alloc_rows(std::size_t n, bool with_y, std::int64_t*& key, double*& x, double*& y) {
  SB_CUDA_CHECK(cudaMalloc(&key, sizeof(std::int64_t) * n));
  SB_CUDA_CHECK(cudaMalloc(&x, sizeof(double) * n));
  if (with_y) SB_CUDA_CHECK(cudaMalloc(&y, sizeof(double) * n));
}

}  // namespace sb::groupby::gpu::detail
