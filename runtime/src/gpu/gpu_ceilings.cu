// Ceilings of one GPU (docs/specification.md §11): device-to-device copy bandwidth, fp64 GEMM
// rate and Philox4x32-10 rate.
#include <algorithm>

#include "scalebench/gpu_context.cuh"
#include "scalebench/gpu_runtime.hpp"
#include "scalebench/philox.cuh"

namespace sb {

namespace {

constexpr int kPhiloxThreads = 256;
constexpr int kPhiloxChains = 4;  // independent counters per thread and step

/// Philox4x32-10 calls with nothing else: every thread takes counters in turn, kPhiloxChains at
/// a time, and keeps only the XOR of their words (one store a thread), so neither memory nor
/// dependent latency bounds the rate.
__global__ void __launch_bounds__(kPhiloxThreads)
    philox_rate_kernel(data::gpu::RoundKeys rk, std::uint32_t steps, std::uint32_t* out) {
  const std::uint32_t tid = blockIdx.x * blockDim.x + threadIdx.x;
  const std::uint32_t threads = gridDim.x * blockDim.x;
  std::uint32_t acc = 0;
  for (std::uint32_t j = 0; j < steps; ++j) {
#pragma unroll
    for (int u = 0; u < kPhiloxChains; ++u) {
      const std::uint32_t block = (j * kPhiloxChains + u) * threads + tid;
      const uint4 w = data::gpu::philox4x32_10(make_uint4(block, 0u, 7u, 0u), rk);
      acc ^= w.x ^ w.y ^ w.z ^ w.w;
    }
  }
  out[tid] = acc;
}

}  // namespace

nlohmann::json measure_gpu_ceilings(GpuContext& ctx) {
  SB_CUDA_CHECK(cudaSetDevice(ctx.device));
  std::size_t free_b = 0, total_b = 0;
  SB_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  // Copy: 1 GiB each way (or an eighth of free memory), best of 5, bytes read + written.
  const std::size_t bytes =
      std::min<std::size_t>(std::size_t{1} << 30, free_b / 8) & ~std::size_t{255};
  void* a = nullptr;
  void* b = nullptr;
  SB_CUDA_CHECK(cudaMalloc(&a, bytes));
  SB_CUDA_CHECK(cudaMalloc(&b, bytes));
  SB_CUDA_CHECK(cudaMemsetAsync(a, 1, bytes, ctx.stream));
  cudaEvent_t e0, e1;
  SB_CUDA_CHECK(cudaEventCreate(&e0));
  SB_CUDA_CHECK(cudaEventCreate(&e1));
  float best_copy = 1e30f;
  for (int rep = 0; rep < 6; ++rep) {
    SB_CUDA_CHECK(cudaEventRecord(e0, ctx.stream));
    SB_CUDA_CHECK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, ctx.stream));
    SB_CUDA_CHECK(cudaEventRecord(e1, ctx.stream));
    SB_CUDA_CHECK(cudaEventSynchronize(e1));
    float ms = 0;
    SB_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    if (rep > 0) best_copy = std::min(best_copy, ms);  // the first one warms up
  }
  // fp64 GEMM 4096^3 (1.4e11 flop) on random-ish data from the copy buffers, best of 3.
  const int n = 4096;
  const std::size_t need = sizeof(double) * static_cast<std::size_t>(n) * n;
  float best_gemm = 1e30f;
  if (3 * need <= 2 * bytes) {
    auto* A = static_cast<double*>(a);
    auto* B = A + static_cast<std::size_t>(n) * n;
    auto* C = static_cast<double*>(b);
    SB_CUDA_CHECK(cudaMemsetAsync(a, 0x3f, 2 * need, ctx.stream));  // finite doubles (~0.49)
    const double one = 1.0, zero = 0.0;
    for (int rep = 0; rep < 4; ++rep) {
      SB_CUDA_CHECK(cudaEventRecord(e0, ctx.stream));
      SB_CUBLAS_CHECK(cublasDgemm(ctx.cublas(), CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, A, n, B, n,
                                  &zero, C, n));
      SB_CUDA_CHECK(cudaEventRecord(e1, ctx.stream));
      SB_CUDA_CHECK(cudaEventSynchronize(e1));
      float ms = 0;
      SB_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
      if (rep > 0) best_gemm = std::min(best_gemm, ms);
    }
  }
  // Philox: 2^30 calls (about a millisecond), the resident blocks of every SM, best of 3.
  int per_sm = 0;
  SB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, philox_rate_kernel,
                                                              kPhiloxThreads, 0));
  const int philox_blocks = ctx.prop.multiProcessorCount * std::max(per_sm, 1);
  const std::uint32_t threads = static_cast<std::uint32_t>(philox_blocks) * kPhiloxThreads;
  const std::uint32_t steps = std::max<std::uint32_t>(1, (1u << 30) / (threads * kPhiloxChains));
  const double calls = static_cast<double>(threads) * kPhiloxChains * steps;
  float best_philox = 1e30f;
  for (int rep = 0; rep < 4; ++rep) {
    SB_CUDA_CHECK(cudaEventRecord(e0, ctx.stream));
    philox_rate_kernel<<<philox_blocks, kPhiloxThreads, 0, ctx.stream>>>(
        data::gpu::round_keys(0x5eedull + rep), steps, static_cast<std::uint32_t*>(a));
    SB_CUDA_CHECK_LAUNCH();
    SB_CUDA_CHECK(cudaEventRecord(e1, ctx.stream));
    SB_CUDA_CHECK(cudaEventSynchronize(e1));
    float ms = 0;
    SB_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    if (rep > 0) best_philox = std::min(best_philox, ms);
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  SB_CUDA_CHECK(cudaFree(a));
  SB_CUDA_CHECK(cudaFree(b));
  nlohmann::json out = nlohmann::json::array();
  out.push_back({{"scope", "gpu"},
                 {"device", ctx.device},
                 {"kind", "copy_bandwidth"},
                 {"unit", "B/s"},
                 {"value", 2.0 * static_cast<double>(bytes) / (best_copy * 1e-3)},
                 {"bytes", static_cast<double>(bytes)}});
  if (best_gemm < 1e29f)
    out.push_back({{"scope", "gpu"},
                   {"device", ctx.device},
                   {"kind", "fp64_gemm"},
                   {"unit", "flop/s"},
                   {"value", 2.0 * n * static_cast<double>(n) * n / (best_gemm * 1e-3)},
                   {"n", n}});
  out.push_back({{"scope", "gpu"},
                 {"device", ctx.device},
                 {"kind", "philox"},
                 {"unit", "calls/s"},
                 {"value", calls / (best_philox * 1e-3)},
                 {"calls", calls}});
  return out;
}

}  // namespace sb
