/// cuRAND's device Philox4_32_10 words for given (seed, block, stream), for test_philox_gpu.cu.
/// Mapping to philox.hpp's layout: curand_init(seed, subsequence = stream, offset = 4 * block)
/// sets key = {lo32(seed), hi32(seed)} and counter = {lo32(block), hi32(block), stream, 0}
/// (the subsequence fills counter words 2-3, the offset counts 32-bit outputs, 4 per counter
/// value); curand4() then returns philox4x32_10(counter, key).

#include <curand_kernel.h>

#include <cstdint>
#include <vector>

#include "scalebench/gpu_error.cuh"

namespace sb::test {
namespace {
__global__ void curand_words_kernel(const std::uint64_t* seed, const std::uint64_t* block,
                                    const std::uint32_t* stream, std::size_t n, uint4* out) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i >= n) return;
  curandStatePhilox4_32_10_t st;
  curand_init(seed[i], stream[i], 4 * block[i], &st);
  out[i] = curand4(&st);
}

template <typename T>
T* upload(const std::vector<T>& h) {
  T* d = nullptr;
  SB_CUDA_CHECK(cudaMalloc(&d, sizeof(T) * h.size()));
  SB_CUDA_CHECK(cudaMemcpy(d, h.data(), sizeof(T) * h.size(), cudaMemcpyHostToDevice));
  return d;
}
}  // namespace

std::vector<uint4> curand_philox_words(const std::vector<std::uint64_t>& seeds,
                                       const std::vector<std::uint64_t>& blocks,
                                       const std::vector<std::uint32_t>& streams) {
  const std::size_t n = seeds.size();
  auto* s = upload(seeds);
  auto* b = upload(blocks);
  auto* st = upload(streams);
  uint4* out = nullptr;
  SB_CUDA_CHECK(cudaMalloc(&out, sizeof(uint4) * n));
  curand_words_kernel<<<static_cast<unsigned>((n + 255) / 256), 256>>>(s, b, st, n, out);
  SB_CUDA_CHECK_LAUNCH();
  std::vector<uint4> h(n);
  SB_CUDA_CHECK(cudaMemcpy(h.data(), out, sizeof(uint4) * n, cudaMemcpyDeviceToHost));
  (void)cudaFree(s);
  (void)cudaFree(b);
  (void)cudaFree(st);
  (void)cudaFree(out);
  return h;
}

}  // namespace sb::test
