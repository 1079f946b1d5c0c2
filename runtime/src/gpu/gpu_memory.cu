// Free and total memory of a worker's GPU (the runtime's pre-allocation check of a case).
#include "scalebench/gpu_context.cuh"
#include "scalebench/gpu_error.cuh"
#include "scalebench/gpu_runtime.hpp"

namespace sb {

GpuMemoryInfo gpu_memory_info(const GpuContext& ctx) {
  SB_CUDA_CHECK(cudaSetDevice(ctx.device));
  std::size_t free_b = 0, total_b = 0;
  SB_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  return {ctx.device, static_cast<double>(free_b), static_cast<double>(total_b)};
}

}  // namespace sb
