// GPU fill and check of the comms payloads (payload.cuh).
#include "comms/gpu/payload.cuh"

#include <algorithm>

#include "scalebench/gpu_device.cuh"
#include "scalebench/gpu_error.cuh"

namespace sb::comms::gpu {
namespace {

constexpr int kThreads = 256;

int grid_for(std::int64_t n) {
  const int sms = sb::gpu::sm_count();
  return static_cast<int>(
      std::max<std::int64_t>(1, std::min<std::int64_t>((n + kThreads - 1) / kThreads, sms * 32)));
}

__global__ void fill_kernel(std::uint64_t seed, int rank, float* out, std::int64_t n) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < n;
       e += stride)
    out[e] = payload(seed, rank, e);
}

__global__ void check_kernel(Expected rule, std::uint64_t seed, int me, int ranks,
                             std::int64_t count, int root, const float* __restrict__ out,
                             std::int64_t n, unsigned long long* result) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  unsigned long long wrong = 0;
  unsigned long long first = ~0ull;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const Source s = source_of(rule, me, ranks, count, root, i);
    float want = 0;
    for (int r = s.first; r <= s.last; ++r) want += payload(seed, r, s.index);
    // Bitwise, as the CPU's: a NaN never overwritten is wrong.
    if (__float_as_uint(want) != __float_as_uint(out[i])) {
      ++wrong;
      first = min(first, static_cast<unsigned long long>(i));
    }
  }
  if (wrong > 0) {
    atomicAdd(&result[0], wrong);
    atomicMin(&result[1], first);
  }
}

}  // namespace

void fill_payload(std::uint64_t seed, int rank, float* out, std::int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  fill_kernel<<<grid_for(n), kThreads, 0, stream>>>(seed, rank, out, n);
  SB_CUDA_CHECK_LAUNCH();
}

WrongCounter::WrongCounter() {
  SB_CUDA_CHECK(cudaMalloc(&device_, 2 * sizeof(unsigned long long)));
  SB_CUDA_CHECK(cudaMallocHost(&host_, 2 * sizeof(unsigned long long)));
}

WrongCounter::~WrongCounter() {
  if (device_ != nullptr) (void)cudaFree(device_);
  if (host_ != nullptr) (void)cudaFreeHost(host_);
}

Wrong WrongCounter::count(Expected rule, std::uint64_t seed, int me, int ranks, std::int64_t count,
                          int root, const float* out, std::int64_t n, cudaStream_t stream) {
  const unsigned long long init[2] = {0, ~0ull};
  host_[0] = init[0];
  host_[1] = init[1];
  SB_CUDA_CHECK(cudaMemcpyAsync(device_, host_, 2 * sizeof(unsigned long long),
                                cudaMemcpyHostToDevice, stream));
  if (n > 0) {
    check_kernel<<<grid_for(n), kThreads, 0, stream>>>(rule, seed, me, ranks, count, root, out, n,
                                                       device_);
    SB_CUDA_CHECK_LAUNCH();
  }
  SB_CUDA_CHECK(cudaMemcpyAsync(host_, device_, 2 * sizeof(unsigned long long),
                                cudaMemcpyDeviceToHost, stream));
  SB_CUDA_CHECK(cudaStreamSynchronize(stream));
  Wrong w;
  w.count = static_cast<std::int64_t>(host_[0]);
  w.first = w.count > 0 ? static_cast<std::int64_t>(host_[1]) : -1;
  return w;
}

}  // namespace sb::comms::gpu
